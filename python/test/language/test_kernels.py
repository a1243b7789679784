"""Kernels as a Triton user writes them, from docs/python.md alone: a row
softmax, a layer norm, and a single-head attention forward (dot, trans,
online softmax), against numpy."""
import numpy as np
import pytest

import weft
import weft.language as wl
from devices import host, local
from matrix import CASES, BACKEND


@weft.jit
def softmax_kernel(out, x, n_cols, stride, BLOCK: wl.constexpr):
    row = wl.program_id(0)
    cols = wl.arange(0, BLOCK)
    mask = cols < n_cols
    v = wl.load(x + row * stride + cols, mask=mask, other=-float("inf"))
    z = v - wl.max(v, axis=0)
    num = wl.exp(z)
    wl.store(out + row * stride + cols, num / wl.sum(num, axis=0), mask=mask)


@weft.jit
def softmax_builtin_kernel(out, x, n_cols, stride, BLOCK: wl.constexpr):
    row = wl.program_id(0)
    cols = wl.arange(0, BLOCK)
    mask = cols < n_cols
    v = wl.load(x + row * stride + cols, mask=mask, other=-float("inf"))
    wl.store(out + row * stride + cols, wl.softmax(v), mask=mask)


@pytest.mark.parametrize("kernel", [softmax_kernel, softmax_builtin_kernel],
                         ids=["written", "wl.softmax"])
@pytest.mark.parametrize("cols", [1, 37, 128])
def test_softmax(cols, kernel):
    rows = 5
    x = np.random.default_rng(16).normal(0, 3, (rows, cols)).astype(np.float32)
    out = local(np.zeros_like(x))
    block = 1 << max(0, (cols - 1).bit_length())
    kernel[(rows,)](out, local(x), cols, cols, BLOCK=block)
    weft.synchronize()
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(host(out), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    CASES[BACKEND] += 1


@weft.jit
def layernorm_kernel(out, x, w, b, n, eps, BLOCK: wl.constexpr):
    row = wl.program_id(0)
    cols = wl.arange(0, BLOCK)
    mask = cols < n
    v = wl.load(x + row * n + cols, mask=mask, other=0.0).to(wl.float32)
    mean = wl.sum(v, axis=0) / n
    d = wl.where(mask, v - mean, 0.0)
    var = wl.sum(d * d, axis=0) / n
    y = d * wl.rsqrt(var + eps) * wl.load(w + cols, mask=mask) + wl.load(b + cols, mask=mask)
    wl.store(out + row * n + cols, y.to(out.dtype.elem), mask=mask)


def test_layernorm():
    rows, n = 6, 100
    rng = np.random.default_rng(17)
    x = rng.normal(1, 2, (rows, n)).astype(np.float16)
    w, b = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
    out = local(np.zeros_like(x))
    layernorm_kernel[(rows,)](out, local(x), local(w), local(b), n, 1e-5, BLOCK=128)
    weft.synchronize()
    xf = x.astype(np.float64)
    ref = (xf - xf.mean(1, keepdims=True)) / np.sqrt(xf.var(1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(host(out).astype(np.float64), ref, rtol=1e-2, atol=1e-2)
    CASES[BACKEND] += 1


@weft.jit
def transposed_k_loop_kernel(out, a, b, n, K: wl.constexpr, BM: wl.constexpr,
                             BN: wl.constexpr, BK: wl.constexpr):
    """out = a @ b^T (a BM x n, b BN x n, row-major), b's blocks read
    transposed through pointers (a tile whose threads hold columns) and
    a's loaded at every step: both become pipelined rings
    (weft-pipeline-dot-operands), b^T's copied element by element
    (test/Conversion/WeftToLLVM/async-copy-columns.mlir)."""
    rm = wl.arange(0, BM)
    rn = wl.arange(0, BN)
    acc = wl.zeros((BM, BN), wl.float32)
    for k0 in range(0, n, BK):
        rk = k0 + wl.arange(0, BK)
        x = wl.load(a + rm[:, None] * n + rk[None, :], mask=rk[None, :] < n, other=0.0)
        y = wl.load(b + rn[None, :] * n + rk[:, None], mask=rk[:, None] < n, other=0.0)
        acc = wl.dot(x, y, acc)
    wl.store(out + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("dtype,n", [(np.float16, 40), (np.float32, 16)])
def test_transposed_k_loop(dtype, n):
    rng = np.random.default_rng(19)
    a = rng.integers(-3, 4, (16, n)).astype(dtype)
    b = rng.integers(-3, 4, (32, n)).astype(dtype)
    out = local(np.zeros((16, 32), np.float32))
    transposed_k_loop_kernel[(1,)](out, local(a), local(b), n, K=n, BM=16, BN=32, BK=16)
    weft.synchronize()
    np.testing.assert_array_equal(host(out), a.astype(np.float64) @ b.astype(np.float64).T)
    CASES[BACKEND] += 1


@weft.jit
def attention_kernel(out, q, k, v, seq, scale, D: wl.constexpr, BLOCK_M: wl.constexpr,
                     BLOCK_N: wl.constexpr):
    """One head: out = softmax(q k^T * scale) v, keys in blocks with the
    online softmax (running max and sum)."""
    start = wl.program_id(0) * BLOCK_M
    rows = start + wl.arange(0, BLOCK_M)
    dims = wl.arange(0, D)
    qt = wl.load(q + rows[:, None] * D + dims[None, :], mask=rows[:, None] < seq, other=0.0)
    m = wl.full((BLOCK_M,), -float("inf"), wl.float32)
    l = wl.zeros((BLOCK_M,), wl.float32)
    acc = wl.zeros((BLOCK_M, D), wl.float32)
    for kstart in range(0, seq, BLOCK_N):
        keys = kstart + wl.arange(0, BLOCK_N)
        kt = wl.load(k + keys[:, None] * D + dims[None, :], mask=keys[:, None] < seq, other=0.0)
        s = wl.dot(qt, kt.T) * scale
        s = wl.where(keys[None, :] < seq, s, -float("inf"))
        m_new = wl.maximum(m, wl.max(s, axis=1))
        p = wl.exp(s - m_new[:, None])
        alpha = wl.exp(m - m_new)
        l = l * alpha + wl.sum(p, axis=1)
        vt = wl.load(v + keys[:, None] * D + dims[None, :], mask=keys[:, None] < seq, other=0.0)
        acc = acc * alpha[:, None] + wl.dot(p.to(vt.dtype), vt)
        m = m_new
    wl.store(out + rows[:, None] * D + dims[None, :], (acc / l[:, None]).to(out.dtype.elem),
             mask=rows[:, None] < seq)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_attention(dtype):
    seq, d = 50, 32
    rng = np.random.default_rng(18)
    q, k, v = (rng.normal(size=(seq, d)).astype(dtype) for _ in range(3))
    out = local(np.zeros((seq, d), dtype))
    scale = 1 / np.sqrt(d)
    attention_kernel[(4,)](out, local(q), local(k), local(v), seq, scale, D=d, BLOCK_M=16,
                           BLOCK_N=16)
    weft.synchronize()
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v.astype(np.float64)
    tol = 2e-2 if dtype is np.float16 else 1e-4
    np.testing.assert_allclose(host(out).astype(np.float64), ref, rtol=tol, atol=tol)
    CASES[BACKEND] += 1
