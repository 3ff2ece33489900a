"""asmevo.isa.assemble: Triton's LLVM worker and the subprocess tools recover and rebuild the same bytes.

The oracle is the subprocess toolchain (llvm-mc-19 / ld.lld-19 for gfx942, zig's clang -cc1as / ld.lld 22
for gfx950): recovering with Triton's LLVM must give the same source and recovery.json, and rebuilding
it the same code object but for the linker's name in `.comment`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from asmevo.calibrate import aiter_wheel
from asmevo.codeobj.elf import without_linker_comment
from asmevo.errors import ToolchainError
from asmevo.rebuild import rebuild_source
from asmevo.recover import recover
from asmevo.toolchain import find_toolchain
from asmevo.triton_llvm import installed

pytestmark = pytest.mark.skipif(not installed(), reason="Triton is not installed (pip install 'asmevo[triton]')")

KERNELBENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "kernelbench"


def _both(path: Path, monkeypatch) -> dict[str, tuple[str, str, bytes, int]]:
    """Per backend: recovered source, recovery.json, rebuilt code object, and the raw-word count."""
    out = {}
    for backend in ("tools", "triton"):
        monkeypatch.setenv("ASMEVO_ASSEMBLER", backend)
        rec = recover(path)
        data = rebuild_source(rec.source, rec.info, origin=str(path)).data
        out[backend] = (rec.source, json.dumps(rec.info, sort_keys=True, default=str), data,
                        len(rec.info["raw_words"]))
    return out


def _assert_same(path: Path, monkeypatch) -> int:
    got = _both(path, monkeypatch)
    tools, triton = got["tools"], got["triton"]
    assert triton[0] == tools[0] and triton[1] == tools[1]
    assert triton[2] != tools[2]  # the linkers name themselves in .comment ...
    assert without_linker_comment(triton[2]) == without_linker_comment(tools[2])  # ... and differ nowhere else
    return tools[3]


@pytest.mark.parametrize("name", ["40_LayerNorm", "17_Matmul_with_transposed_B", "21_Sigmoid", "95_CrossEntropyLoss"])
def test_kernelbench_rebuilds_the_same_bytes(name, monkeypatch):
    monkeypatch.delenv("ASMEVO_LLVM_BIN", raising=False)
    _assert_same(KERNELBENCH / name / "kernel.co", monkeypatch)


@pytest.mark.parametrize("processor, member, raw_words", [
    ("gfx942", "fmoe_2stages/fmoe_stage1_bf16_pertokenFp8_blockscale_g1u1_112x128_pf2.co", False),
    ("gfx942", "fmha_v3_fwd/MI300/fwd_hd128_bf16.co", False),
    ("gfx950", "f4gemm/f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128.co", True),
    ("gfx950", "fmha_v3_fwd/fwd_hd128_bf16_causal.co", False),
])
def test_aiter_rebuilds_the_same_bytes(wheel, processor, member, raw_words, monkeypatch):
    """gfx950's MXFP4 GEMM keeps scaled MFMAs as raw words: per-line encoding through the worker
    finds the same ones as the tools."""
    monkeypatch.delenv("ASMEVO_LLVM_BIN", raising=False)
    try:
        find_toolchain(processor)
    except ToolchainError as exc:
        pytest.skip(f"no subprocess toolchain for {processor}: {exc}")
    aiter_wheel.extract(wheel, processor)
    path = aiter_wheel.EXTRACT / "aiter_meta" / "hsa" / processor / member
    assert (_assert_same(path, monkeypatch) > 0) == raw_words
