"""Triton dots compiled for gfx950 run on the emulator and match numpy: an independent check of CDNA4
semantics, since Triton's gfx950 code generator encodes its own reading of them (transposing LDS reads
ds_read_b64_tr_b16/_b8, v_bitop3_b32 address swizzles, the double-K and f8f6f4 MFMAs with OCP fp8).
Skipped without the `triton` extra."""
from __future__ import annotations

import re

import numpy as np
import pytest

from asmevo.emu import numeric as nm
from emutools import launch, triton_kernel

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, OUT: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])      # B row-major [K, N]: read through ds_read_*_tr_*
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, out_dtype=OUT))


def _inputs(ty: str, rng, m: int, n: int, k: int):
    """(A, B, exact A @ B in float64 / int64) for element type `ty`."""
    if ty == "i8":
        a, b = rng.integers(-128, 128, (m, k)).astype(np.int8), rng.integers(-128, 128, (k, n)).astype(np.int8)
        return a, b, a.astype(np.int64) @ b.astype(np.int64)
    if ty in ("fp16", "bf16"):
        av, bv = rng.integers(-8, 8, (m, k)) / 4, rng.integers(-8, 8, (k, n)) / 4
        enc = (lambda x: x.astype(np.float16)) if ty == "fp16" else \
            (lambda x: (nm.as_u32(x.astype(np.float32)) >> 16).astype(np.uint16))
        return enc(av), enc(bv), av @ bv
    a, b = rng.integers(0, 256, (m, k)).astype(np.uint8), rng.integers(0, 256, (k, n)).astype(np.uint8)
    a[(a & 0x7F) == 0x7F] = 0x38                                 # no NaN codes (OCP E4M3: S.1111.111)
    b[(b & 0x7F) == 0x7F] = 0x38
    dec = lambda x: nm.as_f32(nm.fp8_to_f32(x, "e4m3fn")).astype(np.float64)  # noqa: E731
    return a, b, dec(a) @ dec(b)


@pytest.mark.parametrize("ty,k,instructions", [
    ("bf16", 64, {"ds_read_b64_tr_b16", "v_mfma_f32_32x32x16_bf16", "v_bitop3_b32"}),
    ("fp16", 128, {"ds_read_b64_tr_b16", "v_mfma_f32_32x32x16_f16"}),
    ("i8", 128, {"ds_read_b64_tr_b8", "v_mfma_i32_32x32x32_i8"}),
    ("fp8e4nv", 128, {"ds_read_b64_tr_b8", "v_mfma_f32_32x32x64_f8f6f4"}),
])
def test_triton_gfx950_dot_matches_numpy(ty, k, instructions):
    out = "i32" if ty == "i8" else "fp32"
    co, lds = triton_kernel(_dot, {"a_ptr": f"*{ty}", "b_ptr": f"*{ty}", "c_ptr": f"*{out}", "BM": "constexpr",
                                   "BN": "constexpr", "BK": "constexpr", "OUT": "constexpr"},
                            {"BM": 64, "BN": 64, "BK": k, "OUT": tl.int32 if ty == "i8" else tl.float32},
                            processor="gfx950")
    used = {i.mnemonic for i in co.listing.instructions}
    assert co.target.processor == "gfx950" and instructions <= {re.sub(r"_e(32|64)$", "", u) for u in used}
    a, b, want = _inputs(ty, np.random.default_rng(5), 64, 64, k)
    c = np.zeros((64, 64), np.int32 if ty == "i8" else np.float32)
    run = launch(co, "_dot", (1, 1, 1), (256, 1, 1), [a, b, c, None, None], outputs=[2], lds=lds, checked=True)
    assert run.report.ok, run.report.findings
    got = run.outputs[2].astype(np.float64)
    by_address = co.listing.by_address()
    executed = {by_address[pc].mnemonic for pc, n in run.report.pc_counts.items() if n}
    assert instructions <= {re.sub(r"_e(32|64)$", "", u) for u in executed}
    if ty == "fp8e4nv":
        # two MFMAs of 64 exact products each: the first's f32-rounded result is the second's C, so the
        # error is at most two f32 roundings of partial sums, each within 2^-24 of their magnitude sum
        dec = lambda x: nm.as_f32(nm.fp8_to_f32(x, "e4m3fn")).astype(np.float64)  # noqa: E731
        bound = 2 * 2.0 ** -24 * (np.abs(dec(a)) @ np.abs(dec(b)))
        assert (np.abs(got - want) <= bound).all()
    else:
        assert (got == want).all()
