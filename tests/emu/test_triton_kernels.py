"""Triton kernels compiled for gfx942 run on the emulator and match numpy (skipped without the `triton` extra)."""
from __future__ import annotations

import numpy as np
import pytest

from emutools import launch, triton_kernel

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

RNG = np.random.default_rng(11)


@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * 2.0 + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def _softmax(x, out, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < ncols
    v = tl.load(x + row * ncols + offs, mask=m, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row * ncols + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def _rowsum(x, out, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c in range(0, ncols, BLOCK):
        offs = c + tl.arange(0, BLOCK)
        acc += tl.load(x + row * ncols + offs, mask=offs < ncols, other=0.0)
    tl.store(out + row, tl.sum(acc, axis=0))


@triton.jit
def _matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]), tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


def test_triton_elementwise():
    co, lds = triton_kernel(_add, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                            {"BLOCK": 1024})
    n = 5000
    x, y = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    res = launch(co, co.kernel_names[0], (5,), (256,), [x, y, np.zeros(n, np.float32), np.int32(n), None, None],
                 lds=lds, outputs=[2])
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[2], x * 2 + y)


def test_triton_softmax_and_rowsum():
    co, lds = triton_kernel(_softmax, {"x": "*fp32", "out": "*fp32", "ncols": "i32", "BLOCK": "constexpr"},
                            {"BLOCK": 1024})
    x = RNG.standard_normal((4, 1000)).astype(np.float32)
    res = launch(co, co.kernel_names[0], (4,), (256,), [x, np.zeros_like(x), np.int32(1000), None, None], lds=lds,
                 outputs=[1])
    assert res.report.ok, res.report.findings
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(res.outputs[1], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-8)
    co, lds = triton_kernel(_rowsum, {"x": "*fp32", "out": "*fp32", "ncols": "i32", "BLOCK": "constexpr"},
                            {"BLOCK": 512})
    res = launch(co, co.kernel_names[0], (4,), (256,), [x, np.zeros(4, np.float32), np.int32(1000), None, None],
                 lds=lds, outputs=[1])
    assert res.report.ok, res.report.findings
    np.testing.assert_allclose(res.outputs[1], x.astype(np.float64).sum(1), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_triton_mfma_matmul(dtype):
    sig = {"a": f"*{dtype}", "b": f"*{dtype}", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    co, lds = triton_kernel(_matmul, sig, {"BM": 64, "BN": 64, "BK": 32})
    M = N = 128
    K = 64
    af, bf = RNG.standard_normal((M, K)).astype(np.float32), RNG.standard_normal((K, N)).astype(np.float32)
    if dtype == "fp16":
        a, b = af.astype(np.float16), bf.astype(np.float16)
        ref = a.astype(np.float64) @ b.astype(np.float64)
    else:
        a, b = (af.view(np.uint32) >> 16).astype(np.uint16), (bf.view(np.uint32) >> 16).astype(np.uint16)
        up = lambda h: (h.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
        ref = up(a) @ up(b)
    res = launch(co, co.kernel_names[0], (M // 64, N // 64), (256,),
                 [a, b, np.zeros((M, N), np.float32), np.int32(M), np.int32(N), np.int32(K), None, None],
                 lds=lds, outputs=[2])
    assert res.report.ok, res.report.findings
    np.testing.assert_allclose(res.outputs[2], ref, rtol=1e-5, atol=1e-5)
