"""AST -> IR for each construct; each kernel also compiles for the host."""
import pytest
import weft
import weft.language as wl

PTRS = {"x": "*fp32", "out": "*fp32", "n": "i32"}


def ir_of(fn, signature=PTRS, constexprs=None, target="host"):
    return weft.compile(fn, signature=signature, constexprs=constexprs or {},
                        target=target).ir


@weft.jit
def scalars(x, out, n):
    pid = wl.program_id(0)
    a = pid * 3 + n // 2 - n % 5
    b = (a << 1) >> 1 ^ 7 | n & 3
    f = wl.load(x + a) / 2 + 1.5
    wl.store(out + b, -f if n > 3 else f)
    wl.store(out + wl.num_programs(1) + wl.rank() + wl.num_ranks(), wl.sqrt(f))


def test_scalars():
    ir = ir_of(scalars)
    for text in ("weft.program_id x", "arith.muli", "arith.divsi", "arith.remsi",
                 "arith.shli", "arith.shrsi", "arith.xori", "arith.ori", "arith.andi",
                 "arith.divf", "arith.negf", "arith.select", "weft.num_programs y",
                 "weft.rank", "weft.num_ranks", "math.sqrt"):
        assert text in ir, text


@weft.jit
def tiles(x, out, n, BLOCK: wl.constexpr):
    rows = wl.arange(0, 16)
    cols = wl.arange(0, BLOCK)
    offs = rows[:, None] * BLOCK + cols[None, :]
    t = wl.load(x + offs, mask=offs < n, other=1.0)
    z = wl.zeros((16, BLOCK), wl.float32) + wl.full((16, BLOCK), 2, wl.float32)
    t = wl.where(t > 0, t * z, wl.exp(t))
    h = t.to(wl.float16).to(wl.float32)
    wl.store(out + rows, wl.sum(h, axis=1) + wl.max(t, 1) - wl.min(t, axis=1))
    wl.store(out, wl.sum(t) + wl.maximum(1.0, wl.minimum(wl.abs(wl.sum(t)), 2.0)))
    wl.store(out + cols, wl.log(wl.rsqrt(wl.abs(wl.sum(t, axis=0)) + 1)))


def test_tiles():
    ir = ir_of(tiles, constexprs={"BLOCK": 32})
    for text in ("weft.make_range 0, 16 : tensor<16xi32>",
                 "weft.expand_dims %", "axis = 1 : tensor<16xi32> -> tensor<16x1xi32>",
                 "weft.broadcast", "weft.load %", "other %", "arith.select",
                 "math.exp", "arith.truncf", "tensor<16x32xf16>", "arith.extf",
                 "weft.reduce", "arith.maximumf", "arith.minimumf", "weft.reshape",
                 "tensor<512xf32>", "math.absf", "math.rsqrt", "math.log"):
        assert text in ir, text


@weft.jit
def control(x, out, n, STEPS: wl.constexpr):
    acc = wl.zeros((64,), wl.float32)
    offs = wl.arange(0, 64)
    for i in range(0, n, 2):
        acc += wl.load(x + offs + i)
    total = 0
    j = n
    while j > 0:
        total += j
        j -= 1
    if total > 10:
        scale = 2.0
    else:
        scale = 0.5
    for k in wl.static_range(STEPS):
        acc = acc * (k + 1)
    if STEPS > 100:
        acc = acc / 0  # never generated: a compile-time if folds
    wl.store(out + offs, acc * scale)


def test_control_flow():
    ir = ir_of(control, constexprs={"STEPS": 3})
    assert "scf.for" in ir and "iter_args" in ir and ": i32 {" in ir
    assert "scf.while" in ir and "scf.condition" in ir
    assert "scf.if" in ir and "-> (f32)" in ir
    # static_range unrolls: the three factors appear as constants.
    assert ir.count("arith.mulf") >= 4
    assert "arith.divf" not in ir
    # The regions' terminators carry their statement's line too: what the
    # compiler inserts there (a layout conversion at an if's yield) reports
    # the user's line if it fails.
    terminators = [l for l in ir.splitlines() if "scf.yield" in l or "scf.condition" in l]
    assert len(terminators) >= 4
    assert all("test_codegen.py" in l for l in terminators), terminators


@weft.jit
def comm(x, flag, n):
    me = wl.rank()
    peer = (me + 1) % wl.num_ranks()
    offs = wl.arange(0, 64)
    t = wl.load(x + offs, mask=offs < n, peer=peer, order="acquire")
    wl.store(x + offs, t, peer=peer, order="release", scope="sys")
    wl.store(x + offs, t, order="relaxed", scope="gpu")
    old = wl.atomic_add(flag, 1, peer=peer, scope="sys")
    wl.atomic_max(flag, old, order="relaxed")
    wl.atomic_min(flag, old)
    wl.atomic_and(flag, 3)
    wl.atomic_or(flag, 4)
    wl.atomic_xor(flag, 5)
    wl.atomic_xchg(flag, 6)
    wl.atomic_cas(flag, 6, 7)
    wl.atomic_add(x + offs, 1.0, mask=offs < n, order="relaxed")
    wl.fence("seq_cst", "gpu")
    wl.signal(flag, 1, peer=peer, op="add")
    seen = wl.wait(flag, 1, cmp="ge", order="relaxed")
    wl.barrier()
    p = wl.translate(flag, peer)
    wl.store(p, seen)


def test_communication_ops():
    ir = ir_of(comm, signature={"x": "*fp32", "flag": "*i64", "n": "i32"})
    for text in ("weft.translate", "weft.load acquire sys", "weft.store release sys",
                 "weft.store relaxed gpu", "weft.atomic_rmw add acq_rel sys",
                 "weft.atomic_rmw max relaxed gpu", "weft.atomic_rmw min",
                 "weft.atomic_rmw and", "weft.atomic_rmw or", "weft.atomic_rmw xor",
                 "weft.atomic_rmw xchg", "weft.atomic_cas acq_rel gpu",
                 "weft.atomic_rmw fadd relaxed gpu", "weft.fence seq_cst gpu",
                 "weft.signal add release sys", "weft.wait ge relaxed sys",
                 "weft.barrier", ": !weft.ptr<i64>"):
        assert text in ir, text


@weft.jit
def multimem(p, q):
    m = wl.multicast(p)
    s = wl.multimem_ld_reduce(m, op="add")
    wl.multimem_store(m, s)
    wl.multimem_red(wl.multicast(q), 1, op="add")


def test_multimem_cuda():
    k = weft.compile(multimem, signature={"p": "*fp32", "q": "*i32"}, target="cuda:90")
    assert "weft.multicast" in k.ir and "weft.multimem_ld_reduce add relaxed sys" in k.ir
    assert "weft.multimem_store" in k.ir and "weft.multimem_red add" in k.ir


@weft.jit
def helper_double(v):
    return v * 2


@weft.jit
def helper_scaled(v, SCALE: wl.constexpr = 5.0):
    return v * SCALE


@weft.jit
def calls(x, out):
    wl.store(out, helper_double(wl.load(x)) + wl.cdiv(7, 2) + min(3, 4))


@weft.jit
def calls_with_defaults(x, out):
    wl.store(out, helper_scaled(wl.load(x)) + helper_scaled(wl.load(x), 6.0))


@weft.jit
def calls_with_too_many(x, out):
    wl.store(out, helper_double(wl.load(x), 2))


def test_inlined_call_and_constexpr_folding():
    ir = ir_of(calls, signature={"x": "*fp32", "out": "*fp32"})
    assert "arith.mulf" in ir and "0x40000000" in ir  # * 2.0
    # cdiv(7, 2) and min(3, 4) fold in Python: the constants 4.0 and 3.0.
    assert "0x40800000" in ir and "0x40400000" in ir
    assert "func.call" not in ir


def test_inlined_call_defaults():
    """An inlined helper's defaults fill the arguments a call leaves out."""
    ir = ir_of(calls_with_defaults, signature={"x": "*fp32", "out": "*fp32"})
    assert "0x40A00000" in ir and "0x40C00000" in ir  # 5.0 by default, 6.0 given
    with pytest.raises(weft.CompilationError, match=r"helper_double\(\) got the wrong arguments"):
        ir_of(calls_with_too_many, signature={"x": "*fp32", "out": "*fp32"})


def test_specialisation_attributes():
    ir = ir_of(scalars, signature={"x": "*fp32", "out": "*fp32:4", "n": "i32:16"})
    assert "%x: !weft.ptr<f32> {weft.divisibility = 16 : i32}" in ir
    assert "%out: !weft.ptr<f32> {weft.divisibility = 4 : i32}" in ir
    assert "%n: i32 {weft.divisibility = 16 : i32}" in ir


@weft.jit
def desc_blocks(src, dst, BM: wl.constexpr):
    i = wl.program_id(0) * BM
    dst.store([i, 0], src.load([i, 0]) + 1.0)


def test_tensor_descriptors():
    """A descriptor argument carries its extents' divisibility; desc.load
    and desc.store are block accesses at i32 offsets."""
    sig = {"src": "tensordesc<fp32[16,32]>:64,32", "dst": "tensordesc<fp32[16,32]>"}
    ir = ir_of(desc_blocks, signature=sig, constexprs={"BM": 16})
    assert ("%src: !weft.tensordesc<16x32xf32> "
            "{weft.shape_divisibility = array<i64: 64, 32>}") in ir
    assert "{weft.shape_divisibility = array<i64: 1, 1>}" in ir
    assert "weft.desc_load %src[" in ir and "-> tensor<16x32xf32>" in ir
    assert "weft.desc_store %dst[" in ir
    for bad in ("tensordesc<fp32>", "tensordesc<fp33[4]>", "tensordesc<fp32[4,4]>:8"):
        with pytest.raises(weft.CompilationError, match="bad tensor descriptor type"):
            ir_of(desc_blocks, signature={"src": bad, "dst": bad}, constexprs={"BM": 16})


def test_locations_point_at_python():
    ir = ir_of(scalars)
    assert f'loc("{__file__}":' in ir
