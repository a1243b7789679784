"""weft.compile for the three targets, and the disk cache."""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import weft
import weft.language as wl
from weft import _cache


@weft.jit
def vadd(x, y, out, n, BLOCK: wl.constexpr):
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    wl.store(out + offs, wl.load(x + offs, mask=mask) + wl.load(y + offs, mask=mask),
             mask=mask)


SIG = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}
# matmul_kernel on 128x256x64 blocks of tensor descriptors whose extents
# are multiples of 256 (bulk tensor copies on sm_90).
DESC_MATMUL_SIG = {"a": "tensordesc<bf16[128,64]>:256,256",
                   "b": "tensordesc<bf16[64,256]>:256,256", "c": "*bf16", "M": "i32:16",
                   "N": "i32:16", "K": "i32:16", "k_steps": "i32"}
DESC_MATMUL_CONSTS = {"BM": 128, "BN": 256, "BK": 64, "EVEN": True, "DESC": True}


def test_cuda():
    k = weft.compile(vadd, signature=SIG, constexprs={"BLOCK": 256}, target="cuda:90",
                     num_warps=4)
    assert {"weft", "llir", "ptx"} <= set(k.asm)
    ptx = k.asm["ptx"]
    assert ".target sm_90" in ptx and ".entry vadd" in ptx
    assert "ld.global.v4" in ptx  # the divisibility hints let accesses vectorise
    assert "weft.load" in k.asm["weft"]
    if "cubin" in k.asm:
        assert k.asm["cubin"][:4] == b"\x7fELF"


def test_pipelined_dot_asks_for_dynamic_shared_memory():
    """weft.ops.matmul's K loop on sm_90: cp.async rings of its 64x32 and
    32x64 bf16 operands in wgmma's swizzled layouts (unpadded), three
    stages and a spare buffer (each step's products overlap the next's),
    aligned to 1024 bytes, in dynamic shared memory, which the "kernels"
    artifact reports and launches set; a kernel without buffers or
    exchanges reports only its early start."""
    from weft.ops._gemm import matmul_kernel
    sig = {"a": "*bf16", "b": "*bf16", "c": "*fp32", "M": "i32:16", "N": "i32:16",
           "K": "i32:16", "k_steps": "i32"}
    k = weft.compile(matmul_kernel, signature=sig, constexprs={"BM": 64, "BN": 64, "BK": 32},
                     target="cuda:90")
    ptx = k.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx and "wgmma.mma_async" in ptx
    buffers = (64 * 32 + 32 * 64) * 2
    alignment = 1024 - 16
    stages = (3 + 1) * buffers + alignment
    assert json.loads(k.asm["kernels"]) == \
        {"matmul_kernel": {"dynamic_shared_bytes": stages, "early_start": True}}
    plain = weft.compile(vadd, signature=SIG, constexprs={"BLOCK": 256}, target="cuda:90")
    assert json.loads(plain.asm["kernels"]) == {"vadd": {"early_start": True}}
    # num_stages: the ring's depth; 1 turns the pipelining off.
    deeper = weft.compile(matmul_kernel, signature=sig, target="cuda:90", num_stages=4,
                          constexprs={"BM": 64, "BN": 64, "BK": 32})
    assert json.loads(deeper.asm["kernels"])["matmul_kernel"]["dynamic_shared_bytes"] == \
        (4 + 1) * buffers + alignment
    off = weft.compile(matmul_kernel, signature=sig, target="cuda:90", num_stages=1,
                       constexprs={"BM": 64, "BN": 64, "BK": 32})
    # Its dot then exchanges the operands through scratch, a kernel's also
    # in dynamic shared memory: rows padded by 16 bytes.
    assert json.loads(off.asm["kernels"])["matmul_kernel"]["dynamic_shared_bytes"] == \
        (64 * (32 + 8) + 32 * (64 + 8)) * 2
    assert "cp.async" not in off.asm["ptx"]
    with pytest.raises(weft.CompilationError, match="invalid num_stages 9"):
        weft.compile(matmul_kernel, signature=sig, target="cuda:90", num_stages=9,
                     constexprs={"BM": 64, "BN": 64, "BK": 32})


def test_matmul_bulk_copies_on_sm90():
    """With tensor descriptors, weft.ops.matmul's K loop takes its blocks
    with bulk tensor copies on mbarriers: one box per block where the
    extents are whole multiples of the views' steps (a as a 4-D view whose
    box lands in the rows' interleaved order, b as 3-D), the "kernels"
    artifact naming the maps the runtime must encode; 8-row boxes of plain
    2-D maps where nothing is known of the extents."""
    from weft.ops._gemm import matmul_kernel
    sig, consts = DESC_MATMUL_SIG, DESC_MATMUL_CONSTS
    k = weft.compile(matmul_kernel, signature=sig, constexprs=consts, target="cuda:90",
                     num_warps=8)
    ptx = k.asm["ptx"]
    assert "cp.async.bulk.tensor.4d" in ptx and "cp.async.bulk.tensor.3d" in ptx
    assert "cp.async.cg" not in ptx and "mbarrier.try_wait.parity" in ptx
    maps = json.loads(k.asm["kernels"])["matmul_kernel"]["tensor_maps"]
    assert maps == {"0": {"map": [[0, 8, 8, 8], [0, 64, 0, 2], [0, 1, 8, 8], [1, 1, 0, 64]],
                          "swizzle": 128},
                    "1": {"map": [[1, 64, 0, 4], [0, 1, 0, 64], [1, 1, 64, 64]],
                          "swizzle": 128}}
    unknown = dict(sig, a="tensordesc<bf16[128,64]>", b="tensordesc<bf16[64,256]>")
    k = weft.compile(matmul_kernel, signature=unknown, constexprs=consts, target="cuda:90",
                     num_warps=8)
    maps = json.loads(k.asm["kernels"])["matmul_kernel"]["tensor_maps"]
    assert maps["0"]["map"] == [[0, 1, 0, 8], [1, 1, 0, 64]]
    assert k.asm["ptx"].count("cp.async.bulk.tensor.2d") >= 16 + 4


def test_matmul_warp_mma_on_sm90():
    """warp_mma=True: the same K loop with mma.sync where wgmma would run.
    Its rings take the rows-in-order swizzled layouts that ldmatrix reads
    (a's 128-byte rows as one 2-D box of 128 rows, no interleaving for
    warpgroups), still filled by bulk tensor copies; b's pairs of n-tiles
    come from one ldmatrix .x4.trans. The option is part of the cache key."""
    from weft.ops._gemm import matmul_kernel
    sig, consts = DESC_MATMUL_SIG, DESC_MATMUL_CONSTS
    k = weft.compile(matmul_kernel, signature=sig, constexprs=consts, target="cuda:90",
                     num_warps=8, num_stages=3, warp_mma=True)
    ptx = k.asm["ptx"]
    assert "wgmma" not in ptx and "mma.sync.aligned.m16n8k16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x2" not in ptx
    assert "cp.async.bulk.tensor" in ptx and "cp.async.cg" not in ptx
    maps = json.loads(k.asm["kernels"])["matmul_kernel"]["tensor_maps"]
    assert maps["0"] == {"map": [[0, 1, 0, 128], [1, 1, 0, 64]], "swizzle": 128}
    default = weft.compile(matmul_kernel, signature=sig, constexprs=consts, target="cuda:90",
                           num_warps=8, num_stages=3)
    assert "wgmma.mma_async" in default.asm["ptx"]


def test_hip():
    k = weft.compile(vadd, signature=SIG, constexprs={"BLOCK": 256}, target="hip:gfx942")
    assert {"weft", "llir", "amdgcn", "hsaco"} <= set(k.asm)
    assert "gfx942" in k.asm["amdgcn"]
    assert k.asm["hsaco"][:4] == b"\x7fELF"
    assert "kernels" not in k.asm  # no early start to report (sm_90 only)


def test_host():
    k = weft.compile(vadd, signature=SIG, constexprs={"BLOCK": 64}, target="host")
    assert {"weft", "llir", "asm", "so"} <= set(k.asm)
    assert k.asm["so"][:4] == b"\x7fELF"
    assert "define" in k.asm["llir"]
    assert "kernels" not in k.asm


def test_cache_hit_miss_and_cache_only(tmp_path, monkeypatch):
    monkeypatch.setenv("WEFT_CACHE_DIR", str(tmp_path))
    calls = []
    real = _cache._capi.compile_ir
    monkeypatch.setattr(_cache._capi, "compile_ir",
                        lambda *a: calls.append(a) or real(*a))
    # A fresh JITFunction: the in-memory table of `vadd` must not answer.
    fresh = weft.jit(vadd.fn)
    weft.compile(fresh, signature=SIG, constexprs={"BLOCK": 32})
    assert len(calls) == 1
    entries = [e for d in os.listdir(tmp_path) for e in os.listdir(tmp_path / d)]
    assert len(entries) == 1
    again = weft.jit(vadd.fn)
    k = weft.compile(again, signature=SIG, constexprs={"BLOCK": 32})
    assert len(calls) == 1 and k.asm["so"][:4] == b"\x7fELF"   # a disk hit
    weft.compile(again, signature=SIG, constexprs={"BLOCK": 32}, num_warps=8)
    assert len(calls) == 2   # options are part of the key
    monkeypatch.setenv("WEFT_CACHE_ONLY", "1")
    weft.compile(weft.jit(vadd.fn), signature=SIG, constexprs={"BLOCK": 32})
    with pytest.raises(weft.CompilationError, match="WEFT_CACHE_ONLY=1"):
        weft.compile(weft.jit(vadd.fn), signature=SIG, constexprs={"BLOCK": 16})
    assert len(calls) == 2


def test_cache_only_miss_saves_a_request_fill_cache_compiles(tmp_path, monkeypatch):
    """A machine without the compiler records what it missed; `python3 -m
    weft fill-cache` compiles it where the compiler is, under the same key."""
    cache, misses = tmp_path / "cache", tmp_path / "misses"
    monkeypatch.setenv("WEFT_CACHE_DIR", str(cache))
    monkeypatch.setenv("WEFT_CACHE_ONLY", "1")
    monkeypatch.setenv("WEFT_CACHE_MISSES", str(misses))
    with pytest.raises(weft.CompilationError, match="request saved as .*fill-cache"):
        weft.compile(weft.jit(vadd.fn), signature=SIG, constexprs={"BLOCK": 64},
                     target="cuda:90")
    saved = os.listdir(misses)
    assert len(saved) == 1 and saved[0].endswith(".json")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(weft.__file__)))
    done = subprocess.run([sys.executable, "-m", "weft", "fill-cache", str(misses)],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "1 compiled, 0 already" in done.stdout
    k = weft.compile(weft.jit(vadd.fn), signature=SIG, constexprs={"BLOCK": 64},
                     target="cuda:90")  # a hit now, still cache-only
    assert ".entry vadd" in k.asm["ptx"]
    again = subprocess.run([sys.executable, "-m", "weft", "fill-cache", str(misses)],
                           env=env, capture_output=True, text=True)
    assert "0 compiled, 1 already" in again.stdout
    usage = subprocess.run([sys.executable, "-m", "weft"], env=env,
                           capture_output=True, text=True)
    assert usage.returncode == 2 and "fill-cache" in usage.stderr


def _lock_waiters(path):
    """How many processes wait for the flock of `path` (Linux /proc/locks:
    a waiter's line is marked "->" and names the file's inode)."""
    inode = f":{os.stat(path).st_ino} "
    with open("/proc/locks") as f:
        return sum("->" in line and inode in line for line in f)


def test_a_kernel_missed_at_once_is_compiled_once(tmp_path, monkeypatch):
    """A process that misses a kernel another is compiling waits for it and
    takes what that one stored, instead of compiling it too: here the
    stored artifacts are this test's, and the IR is not IR, so a waiter
    that compiled would fail."""
    monkeypatch.setenv("WEFT_CACHE_DIR", str(tmp_path))
    ir = "not a module"
    entry = os.path.join(str(tmp_path), _cache._version_dir(str(tmp_path)),
                         _cache.key(ir, [], "host", {}))
    script = ("import sys; from weft import _cache; sys.stdout.write(repr("
              f"_cache.lookup_or_compile({ir!r}, [], 'k', 'host', {{}})))")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(weft.__file__)))
    with _cache._compiling(entry) as missing:
        assert missing
        waiter = subprocess.Popen([sys.executable, "-c", script], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lock = os.path.join(os.path.dirname(entry), ".lock-" + os.path.basename(entry))
        for _ in range(6000):  # until the other process waits (60 s at most)
            if _lock_waiters(lock) or waiter.poll() is not None:
                break
            time.sleep(0.01)
        assert _lock_waiters(lock) == 1, waiter.communicate()
        _cache._store(entry, "k", "host", {"so": b"stored by the first"})
    out, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, err
    assert out == repr({"so": b"stored by the first"})


def test_per_backend_constexpr_resolves_for_the_target():
    block = weft.PerBackend(host=16, cuda=128, default=32)
    for target, width in (("host", 16), ("cuda:90", 128), ("hip:gfx942", 32)):
        k = weft.compile(vadd, signature=SIG, constexprs={"BLOCK": block}, target=target)
        assert f"<{width}xf32" in k.ir, (target, k.ir[:400])
    with pytest.raises(KeyError, match=r"PerBackend\(host=1\) has no value for backend 'cuda'"):
        weft.compile(vadd, signature=SIG, constexprs={"BLOCK": weft.PerBackend(host=1)},
                     target="cuda:90")


def test_do_not_specialize_names_run_time_arguments():
    with pytest.raises(weft.CompilationError, match="do_not_specialize names BLOCK"):
        weft.jit(do_not_specialize=("BLOCK",))(vadd.fn)


def test_cache_key_ignores_the_checkout_path():
    ir = 'op loc("/a/b/k.py":3:1)'
    moved = 'op loc("/c/k.py":3:1)'
    opts = {"num_warps": 4, "debug": 0}
    assert _cache.key(ir, {"/a/b/k.py"}, "host", opts) == \
        _cache.key(moved, {"/c/k.py"}, "host", opts)
    assert _cache.key(ir, {"/a/b/k.py"}, "host", opts) != \
        _cache.key(ir, {"/a/b/k.py"}, "cuda:90", opts)


@weft.jit
def to_peer(p, peer):
    wl.store(p, 1, peer=peer)


def test_debug_adds_peer_checks():
    sig = {"p": "*i32", "peer": "i32"}
    plain = weft.compile(to_peer, signature=sig, target="host", debug=False)
    checked = weft.compile(to_peer, signature=sig, target="host", debug=True)
    # The checked kernel records the failing translate's kernel and source
    # line for the runtime's report; the plain one has no such record.
    assert "__weft_debug_location" not in plain.asm["llir"]
    assert re.search(r'c"to_peer at [^"]*test_compile\.py:\d+:\d+"',
                     checked.asm["llir"])


def test_launch_argument_binding():
    @weft.jit
    def k(a, b, n, BLOCK: wl.constexpr = 16):
        pass

    arr = np.zeros(3)
    assert k._bind((arr, 2), {"n": 3}) == [arr, 2, 3, 16]
    assert k._bind((), {"BLOCK": 8, "n": 1, "b": arr, "a": 0})[:2] == [0, arr]
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        k._bind((1,), {"a": 2})
    with pytest.raises(TypeError, match="missing a required argument: 'n'"):
        k._bind((1, 2), {})
    with pytest.raises(TypeError, match="unexpected keyword argument 'm'"):
        k._bind((1, 2, 3), {"m": 4})
    with pytest.raises(TypeError, match="too many positional arguments"):
        k._bind((1, 2, 3, 4, 5), {})
    # A form's layout is kept: the next call of it binds its own values,
    # and a form that failed fails again.
    assert k._bind((arr, 5), {"n": 7}) == [arr, 5, 7, 16]
    assert k._bind((arr,), {"BLOCK": 4, "n": 6, "b": 1}) == [arr, 1, 6, 4]
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        k._bind((1,), {"a": 2})


def test_per_backend_values_are_one_object():
    """Equal PerBackends are one object, so that launches find their
    kernels by identity (an op making one per call hits its kernel)."""
    assert weft.PerBackend(host=16, default=32) is weft.PerBackend(default=32, host=16)
    assert weft.PerBackend(host=16, default=32) is not weft.PerBackend(host=16, default=64)
    assert weft.PerBackend(host=[1]) is not weft.PerBackend(host=[1])  # unhashable: own


@weft.jit
def scaled(dst, SCALE: wl.constexpr):
    offs = wl.arange(0, 16)
    wl.store(dst + offs, offs * SCALE)


def test_constexprs_of_equal_value_and_other_types_are_other_kernels():
    """2 and 2.0 (equal, one hash) are different constexprs: an i32 and an
    f32 product."""
    ints = weft.compile(scaled, signature={"dst": "*fp32"}, constexprs={"SCALE": 2})
    floats = weft.compile(scaled, signature={"dst": "*fp32"}, constexprs={"SCALE": 2.0})
    assert ints is not floats
    assert "arith.muli" in ints.ir and "arith.mulf" in floats.ir


def test_matmul_clusters_on_sm90():
    """A cluster=(1, 2) launch of matmul_kernel with CLUSTER_N=2: the two
    programs of neighbouring column blocks read the same blocks of a, so
    each copies half of a's box (its map's outermost dimension halved)
    into both, ordered by the cluster's barrier; b's copies stay their
    own. Without CLUSTER_N the blocks of a are not provably the same:
    the kernel still runs in clusters, with nothing shared."""
    from weft.ops._gemm import matmul_kernel
    sig, consts = DESC_MATMUL_SIG, DESC_MATMUL_CONSTS
    k = weft.compile(matmul_kernel, signature=sig, constexprs=dict(consts, CLUSTER_N=2),
                     target="cuda:90", num_warps=8, cluster=(1, 2))
    ptx = k.asm["ptx"]
    assert ".reqnctapercluster 1, 2, 1" in ptx and "%cluster_ctarank" in ptx
    assert ptx.count("cp.async.bulk.tensor.4d") == ptx.count(".multicast::cluster") > 0
    assert "barrier.cluster.arrive.relaxed.aligned" in ptx
    settings = json.loads(k.asm["kernels"])["matmul_kernel"]
    assert settings["cluster"] == [1, 2, 1]
    assert settings["tensor_maps"]["0"]["map"] == [[0, 8, 8, 4], [0, 64, 0, 2], [0, 1, 8, 8],
                                                   [1, 1, 0, 64]]
    assert settings["tensor_maps"]["1"]["map"] == [[1, 64, 0, 4], [0, 1, 0, 64], [1, 1, 64, 64]]
    alone = weft.compile(matmul_kernel, signature=sig, constexprs=consts, target="cuda:90",
                         num_warps=8, cluster=(1, 2))
    ptx = alone.asm["ptx"]
    assert ".reqnctapercluster 1, 2, 1" in ptx and ".multicast::cluster" not in ptx
    for bad in ((3, 3), (0,), (1, 1, 1, 1), 2.0):
        with pytest.raises(ValueError, match="cluster must be up to three positive extents"):
            weft.compile(matmul_kernel, signature=sig, constexprs=consts, target="cuda:90",
                         num_warps=8, cluster=bad)


@pytest.mark.parametrize("shape, blocks, warps, stages, cluster", [
    ((8192, 8192, 8192), (128, 256, 32), 8, 5, (2,)),    # large, pairs share a; persistent
    ((2048, 2048, 2048), (128, 256, 32), 8, 5, (1, 2)),  # 128 large blocks: a wave
    ((2048, 2048, 1024), (128, 128, 64), 8, 4, (1,)),    # under 2^33: 256 of 128x128
    ((1024, 1024, 1024), (128, 64, 64), 8, 4, (1, 1)),   # 128 of 128x64, short K
    ((1024, 1024, 2048), (128, 64, 64), 8, 5, (1, 1)),
    ((1024, 1536, 4096), (128, 128, 64), 8, 4, (1, 1)),  # 192 of 128x64: a wave of 128x128
    ((1408, 768, 4096), (128, 64, 64), 8, 5, (1,)),      # 132 of 128x64 fill an H200 once
    ((1024, 3072, 4096), (128, 256, 32), 8, 5, (1, 2)),  # 192 of 128x128: a wave of 128x256
    ((512, 1024, 1024), (64, 64, 64), 4, 4, (1, 1)),     # too few wide blocks
    ((64, 4096, 4096), (64, 64, 128), 4, 6, (1, 1)),     # decode: deep rings
])
def test_matmul_blocks_by_shape(shape, blocks, warps, stages, cluster):
    """matmul's configuration for bf16 products on a GPU: the widest
    blocks of which there are still a program per SM (docs/python.md).
    More than a wave of them: programs that each take several (PERSISTENT,
    a 1-D resident launch: cluster (C,))."""
    from weft.ops._gemm import matmul_plan
    _, _, constexprs, options = matmul_plan(*shape, "cuda")
    assert tuple(constexprs[n]["cuda"] for n in ("BM", "BN", "BK")) == blocks
    assert (options["num_warps"], options["num_stages"], options["cluster"]) == \
        (warps, stages, cluster)
    assert constexprs.get("PERSISTENT", False) == (len(cluster) == 1)


@pytest.mark.parametrize("shape, options, persistent", [
    ((4096, 4096, 2048), {}, True),                        # 512 large blocks
    ((1024, 4096, 8192), {}, False),                       # 128: one wave
    ((4096, 4096, 2048), dict(split_k=2), False),          # pieces of K: a program each
    ((4096, 4096, 2048), dict(warp_mma=True), False),      # mma.sync reads the rings itself
    ((4096, 4096, 2048), dict(descriptors=False), False),  # no bulk copies
    ((4096, 4096, 2048), dict(dtype=wl.float32), False),   # no wgmma on rings in place
    ((4100, 4096, 2048), {}, False),                       # uneven: pointers by default
    ((4100, 4096, 2048), dict(descriptors=True), True),
])
def test_matmul_persists_by_shape(shape, options, persistent):
    """Where matmul's programs take several blocks each (_persists): more
    blocks than a wave, on a GPU bulk copies that wgmma reads in place, one
    piece of K. The same answer on the host (the GPU's blocks decide)."""
    from weft.ops._gemm import matmul_plan
    for backend in ("cuda", "host"):
        constexprs = matmul_plan(*shape, backend, **options)[2]
        assert constexprs.get("PERSISTENT", False) == persistent, backend


@pytest.mark.parametrize("shape, group_m", [
    ((4096, 8192, 4096), 16),  # 32 columns of 256-wide blocks
    ((8192, 4096, 8192), 8),   # 16 columns
    ((4096, 4096, 2048), 8),
])
def test_matmul_block_rows_by_columns(shape, group_m):
    """Persistent programs take 16 block rows together where the large
    blocks make 32 columns or more, else 8; the same on the host (the GPU's
    blocks decide)."""
    from weft.ops._gemm import matmul_plan
    for backend in ("cuda", "host"):
        constexprs = matmul_plan(*shape, backend)[2]
        assert constexprs["PERSISTENT"] and constexprs["GROUP_M"] == group_m, backend


@pytest.mark.parametrize("rows, n, k, whole, blocks", [
    (1024, 4096, 2048, False, (128, 128)),  # one wave of large blocks: the resident kernel's
    (2048, 4096, 2048, False, (128, 256)),  # two waves
    (512, 4096, 2048, True, (128, 256)),    # the copy engine's path: the whole product's
])
def test_second_layer_blocks_by_waves(rows, n, k, whole, blocks):
    """The resident second-layer kernel takes matmul's large blocks only
    where they make two waves (its partials cross while its programs
    multiply their next blocks); the copy engine's path plans in the
    whole product's blocks, which take them at one (_reduce_plan)."""
    from weft import language as wl
    from weft.ops._second_layer import _reduce_plan
    constexprs = _reduce_plan(rows, n, k, 2, not whole, "cuda", wl.bfloat16, "bf16",
                              whole=whole)[0]
    assert (constexprs["BM"]["cuda"], constexprs["BN"]["cuda"]) == blocks


@pytest.mark.parametrize("rows, blocks", [
    (512, (128, 128)),   # ag_gemm 1024 x 8192: 128 large blocks would be one wave
    (2048, (128, 256)),  # 4096 x 8192: four waves
])
def test_first_layer_blocks_by_waves(rows, blocks):
    """ag_matmul_kernel takes matmul's large blocks only where they make
    two waves (at one, the programs of the peers' rows would wait out the
    whole crossing: _gather_plan's rounds)."""
    from weft import language as wl
    from weft.ops._tp import _gather_plan
    constexprs = _gather_plan(rows, 4096, 8192, 2, "cuda", wl.bfloat16)[0]
    assert (constexprs["BM"]["cuda"], constexprs["BN"]["cuda"]) == blocks


@pytest.mark.parametrize("m, two_shot", [(512, False), (1024, True), (2048, True)])
def test_all_reduce_two_shot_from_512_rows(m, two_shot):
    """matmul_all_reduce on the copy engine is two-shot from 512 rows a
    rank on a GPU (TWO_SHOT_ROWS: gemm_ar 1024 x 8192 on 2 ranks)."""
    from weft import language as wl
    from weft.ops._second_layer import _two_shot_plan
    assert bool(_two_shot_plan(m, 8192, 4096, 2, "cuda", wl.bfloat16, "bf16")) == two_shot


@pytest.mark.parametrize("shape, out, bulk", [
    ((8192, 4096, 8192), "bf16", True),   # persistent, 128x256 blocks
    ((512, 8192, 4096), "bf16", True),    # a wave of 128x256 blocks
    ((8192, 4096, 8192), "fp32", False),  # 128 KiB of f32 sums a block
    ((1024, 1024, 1024), "bf16", False),  # 128x64 blocks: slower with it
    ((64, 4096, 4096), "fp32", False),    # split K
])
def test_matmul_bulk_stores_where_they_pay(shape, out, bulk):
    """weft.ops.matmul passes out as a descriptor (DESC_OUT, bulk stores
    on sm_90) with a 16-bit out in the large blocks, one piece of K; the
    warmed kernel (compile_matmul) takes the same."""
    from weft import language as wl
    from weft.ops._gemm import _desc_out, matmul_plan, matmul_signature
    grid, _, constexprs, _ = matmul_plan(*shape, "cuda", None, None)
    assert _desc_out(constexprs, grid, wl.DTYPES[out]) == bulk
    sig = matmul_signature(*shape, dict(constexprs, DESC_OUT=bulk), "cuda", "*" + out + ":16")
    assert sig["c"].startswith("tensordesc<bf16[128,256]>" if bulk else "*" + out)


@pytest.mark.parametrize("shape, blocks, warps, stages", [
    ((8192, 8192, 8192), (128, 256, 64), 8, 2),  # 64x64 per warp, no clusters
    ((4096, 4096, 4096), (128, 256, 64), 8, 2),
    ((1024, 1024, 1024), (128, 64, 128), 4, 2),  # 128 of 128x64, half the K steps
    ((2048, 2048, 1024), (128, 128, 64), 8, 4),  # the rest as for wgmma
])
def test_matmul_blocks_for_warp_mma(shape, blocks, warps, stages):
    """matmul's configuration under warp_mma: blocks for ldmatrix's loads
    rather than wgmma's shapes, and no clusters (docs/python.md)."""
    from weft.ops._gemm import matmul_plan
    _, _, constexprs, options = matmul_plan(*shape, "cuda", warp_mma=True)
    assert tuple(constexprs[n]["cuda"] for n in ("BM", "BN", "BK")) == blocks
    assert (options["num_warps"], options["num_stages"], options["cluster"],
            options["warp_mma"]) == (warps, stages, (1, 1), True)
