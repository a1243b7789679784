"""Memory hints, control flow and debugging, run on the backend under test:
loads and stores with masks, `other`, cache modifiers, eviction policies
and volatile; multiple_of/max_contiguous/max_constancy/assume; wl.range(num_stages=);
early return; static_assert/static_print; device_print; device_assert;
inline_asm_elementwise; rand/randn/randint against a numpy Philox."""
import ctypes

import numpy as np
import pytest

import weft
import weft.language as wl
from weft import PerBackend, _jit
from weft._builtins import random as philox
from devices import BACKEND, host, local
from matrix import CASES, check


@weft.jit
def hinted_copy(x, out, n, BLOCK: wl.constexpr):
    start = wl.multiple_of(wl.program_id(0) * BLOCK, BLOCK)
    offs = wl.max_contiguous(start + wl.arange(0, BLOCK), BLOCK)
    offs = offs + wl.max_constancy(wl.zeros((BLOCK,), wl.int32), BLOCK)
    wl.assume(n > 0)
    mask = offs < n
    a = wl.load(x + offs, mask=mask, other=-1.0, cache_modifier=".cg")
    b = wl.load(x + offs, mask=mask, other=-1.0, eviction_policy="evict_first")
    c = wl.load(x + offs, mask=mask, other=-1.0, volatile=True)
    wl.store(out + offs, a + b, mask=mask, cache_modifier=".cs")
    wl.store(out + offs, a + b + c, mask=mask, eviction_policy="evict_last")


@pytest.mark.parametrize("n", [1, 7, 64, 100])
def test_hinted_accesses(n):
    x = np.arange(128, dtype=np.float32)
    out = local(np.full(128, 5.0, np.float32))
    hinted_copy[(2,)](local(x), out, n, BLOCK=64)
    weft.synchronize()
    expected = np.where(np.arange(128) < n, 3 * x, 5.0)
    check("hinted load/store", wl.float32, ((n,), (64,)), host(out), expected)


@weft.jit
def staged_sum(x, out, n, BLOCK: wl.constexpr, STAGES: wl.constexpr):
    acc = wl.zeros((BLOCK,), wl.float32)
    for start in wl.range(0, n, BLOCK, num_stages=STAGES):
        offs = start + wl.arange(0, BLOCK)
        acc += wl.load(x + offs, mask=offs < n, other=0.0)
    wl.store(out, wl.sum(acc))


@pytest.mark.parametrize("stages", [1, 3])
def test_range_num_stages(stages):
    x = np.arange(1000, dtype=np.float32)
    out = local(np.zeros(1, np.float32))
    staged_sum[(1,)](local(x), out, 1000, BLOCK=64, STAGES=stages)
    weft.synchronize()
    check("wl.range", wl.float32, ((1000,), (64,)), host(out), [x.sum()])


@weft.jit
def blocks_in_turn(x, out, rows, n, BLOCK: wl.constexpr, PREFETCH: wl.constexpr,
                   SPECIALIZE: wl.constexpr = False):
    """Each program sums blocks of BLOCK rows of x (rows x n) in turn,
    their column sums a K loop of dots with a ones tile."""
    ones = wl.full((BLOCK, 16), 1.0, wl.float32)
    for block in wl.range(wl.program_id(0), (rows + BLOCK - 1) // BLOCK, wl.num_programs(0),
                          prefetch=PREFETCH, warp_specialize=SPECIALIZE):
        rm = block * BLOCK + wl.arange(0, BLOCK)
        acc = wl.zeros((16, BLOCK), wl.float32)
        for k0 in range(0, n, BLOCK):
            rk = k0 + wl.arange(0, BLOCK)
            tile = wl.load(x + rm[:, None] * n + rk[None, :],
                           mask=(rm[:, None] < rows) & (rk[None, :] < n), other=0.0)
            acc = wl.dot(wl.trans(ones), wl.trans(tile), acc)
        wl.store(out + rm, wl.sum(acc, axis=0) / 16, mask=rm < rows)


@pytest.mark.parametrize("prefetch,specialize", [(False, False), (True, False), (True, True)])
def test_range_prefetch(prefetch, specialize):
    """wl.range(..., prefetch=True) and warp_specialize=True change what a
    loop computes nowhere (on sm_90 with bulk copies they move the next
    iteration's copies ahead, or to producer warps: test_desc_kernels,
    test_ops): programs that take 0, 1 or 2 blocks."""
    x = np.arange(70 * 48, dtype=np.float32).reshape(70, 48) % 7
    out = local(np.zeros(70, np.float32))
    blocks_in_turn[(4,)](local(x), out, 70, 48, BLOCK=16, PREFETCH=prefetch,
                         SPECIALIZE=specialize)
    weft.synchronize()
    check("wl.range prefetch", wl.float32, ((70, 48), (16,)), host(out), x.sum(axis=1))


@weft.jit
def early_exit(out, n, BLOCK: wl.constexpr):
    pid = wl.program_id(0)
    if pid * BLOCK >= n:
        return
    wl.static_assert(BLOCK % 16 == 0, "BLOCK is a multiple of 16")
    wl.static_print("compiling early_exit with BLOCK =", BLOCK)
    offs = pid * BLOCK + wl.arange(0, BLOCK)
    if pid == 0:
        wl.store(out + offs, 1, mask=offs < n)
        return
    wl.store(out + offs, 2, mask=offs < n)


def test_early_return():
    out = local(np.zeros(256, np.int32))
    early_exit[(8,)](out, 100, BLOCK=32)
    weft.synchronize()
    expected = np.where(np.arange(256) < 32, 1, np.where(np.arange(256) < 100, 2, 0))
    check("early return", wl.int32, ((100,), (256,)), host(out), expected)


def _libc_flush():
    ctypes.CDLL(None).fflush(None)


@weft.jit
def printer(x, BLOCK: wl.constexpr):
    v = wl.load(x + wl.arange(0, BLOCK))
    wl.device_print("v=", v)
    wl.device_print("scalar ", wl.sum(v), (wl.sum(v) > 0).to(wl.uint8))
    wl.device_print("hex ", v.to(wl.int32, bitcast=True), hex=True)


@pytest.mark.skipif(BACKEND != "host", reason="the GPU's printf buffer is the driver's")
def test_device_print(capfd):
    printer[(1,)](local(np.array([1.5, -2.0, 0.25, 3.0], np.float32)), BLOCK=4)
    weft.synchronize()
    _libc_flush()
    out = capfd.readouterr().out
    assert "pid (0, 0, 0) idx (2) v=0.250000" in out
    assert "pid (0, 0, 0) scalar 2.750000, 1" in out
    assert "idx (0) hex 0x3fc00000" in out
    CASES[BACKEND] += 1


@weft.jit
def asserting(x, n, BLOCK: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    v = wl.load(x + offs, mask=offs < n, other=0)
    wl.device_assert(v >= 0, "negative input")


def test_device_assert():
    good = local(np.arange(16, dtype=np.int32))
    asserting[(1,)](good, 16, BLOCK=16, debug=True)
    weft.synchronize()
    bad = local(np.array([0, 1, -5, 2], np.int32))
    asserting[(1,)](bad, 4, BLOCK=16)  # not a debug launch: not checked
    weft.synchronize()
    with pytest.raises(weft.WeftError, match="negative input") as info:
        asserting[(1,)](bad, 4, BLOCK=16, debug=True)
        weft.synchronize()
    assert "test_program.py" in str(info.value)
    CASES[BACKEND] += 1


ASM = {"host": ("shll $$3, $0", "=r,0"), "cuda": ("shl.b32 $0, $1, 3;", "=r,r")}
# Per backend, so that a launch that also compiles for WEFT_WARM_TARGET
# compiles that target's assembly.
ASM_TEXT, ASM_CONSTRAINTS = (PerBackend(**{backend: pair[i] for backend, pair in ASM.items()})
                             for i in (0, 1))


@weft.jit
def shifted(x, out, BLOCK: wl.constexpr, ASM_TEXT: wl.constexpr, CONSTRAINTS: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    v = wl.load(x + offs)
    y = wl.inline_asm_elementwise(ASM_TEXT, CONSTRAINTS, [v], dtype=wl.int32, is_pure=True,
                                  pack=1)
    wl.store(out + offs, y)


@pytest.mark.skipif(BACKEND not in ASM or (_jit.WARM_TARGET or "host").split(":")[0] not in ASM,
                    reason="no assembly written for this target")
def test_inline_asm():
    x = np.arange(-8, 24, dtype=np.int32)
    out = local(np.zeros(32, np.int32))
    shifted[(1,)](local(x), out, BLOCK=32, ASM_TEXT=ASM_TEXT, CONSTRAINTS=ASM_CONSTRAINTS)
    weft.synchronize()
    check("inline_asm_elementwise", wl.int32, ((32,), (32,)), host(out), x << 3)


def philox_reference(seed, offsets, rounds=philox.N_ROUNDS_DEFAULT):
    """Philox 4x32 in numpy, from the paper's definition."""
    mask = 0xFFFFFFFF
    out = []
    for c in offsets.astype(np.int64).ravel():
        c0, c1, c2, c3 = int(c) & mask, 0, 0, 0
        k0, k1 = seed & mask, (seed >> 32) & mask
        for _ in range(rounds):
            p0, p1 = philox.PHILOX_ROUND_A * c0, philox.PHILOX_ROUND_B * c2
            c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & mask, p1 & mask, \
                ((p0 >> 32) ^ c3 ^ k1) & mask, p0 & mask
            k0, k1 = (k0 + philox.PHILOX_KEY_A) & mask, (k1 + philox.PHILOX_KEY_B) & mask
        out.append((c0, c1, c2, c3))
    return np.array(out, dtype=np.uint64).reshape(offsets.shape + (4,))


@weft.jit
def random_kernel(ints, uniform, normal, seed, BLOCK: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    r0, r1, r2, r3 = wl.randint4x(seed, offs)
    wl.store(ints + 4 * offs, r0)
    wl.store(ints + 4 * offs + 1, r1)
    wl.store(ints + 4 * offs + 2, r2)
    wl.store(ints + 4 * offs + 3, r3)
    wl.store(uniform + offs, wl.rand(seed, offs))
    wl.store(normal + offs, wl.randn(seed, offs + BLOCK))


def test_random():
    n, seed = 128, 0x1234_5678_9ABC
    ints, uniform, normal = (local(np.zeros(4 * n, np.uint32)), local(np.zeros(n, np.float32)),
                             local(np.zeros(n, np.float32)))
    random_kernel[(1,)](ints, uniform, normal, seed, BLOCK=n)
    weft.synchronize()
    expected = philox_reference(seed, np.arange(n)).astype(np.uint32)
    check("randint4x", wl.uint32, ((n,), (n,)), host(ints).reshape(n, 4), expected)
    as_int = expected[:, 0].view(np.int32).astype(np.int64)
    as_int = np.where(as_int < 0, -as_int - 1, as_int)
    check("rand", wl.float32, ((n,), (n,)), host(uniform),
          as_int.astype(np.float32) * np.float32(philox.INT32_TO_UNIFORM), rtol=1e-6)
    u = host(uniform)
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.1
    z = host(normal)
    assert abs(z.mean()) < 0.3 and abs(z.std() - 1) < 0.3 and np.isfinite(z).all()
