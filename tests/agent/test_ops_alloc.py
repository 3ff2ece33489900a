"""Releasing a padded VGPR declaration: the edit, its refusals, the rebuild that grants it, and the search
that tries it first and keeps it only through every gate."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.agent.gates import Evaluator
from asmevo.agent.llm_tools import Workbench
from asmevo.agent.ops_alloc import release_vgpr_padding
from asmevo.agent.optimize import optimize
from asmevo.agent.source import KernelSource
from asmevo.codeobj import CodeObject
from asmevo.errors import RebuildError
from asmevo.launches import launch_from_dict
from asmevo.rebuild import rebuild_source
from asmevo.recover import recover

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

# out[gid] += 1.0 over one 64-lane workgroup per block of 64 elements: names v0..v2 only.
BODY = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_lshl_b32 s3, s2, 8
  v_lshlrev_b32_e32 v1, 2, v0
  v_add_u32_e32 v1, s3, v1
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  v_add_f32_e32 v2, 1.0, v2
  global_store_dword v1, v2, s[4:5]
  s_endpgm"""


# ... and with an instruction that addresses a register through M0.
INDIRECT = BODY.replace("  s_endpgm", "  s_mov_b32 m0, 0\n  s_movrels_b32 s6, s5\n  s_endpgm")


def _recovered(co: CodeObject):
    return recover(co.path, code_object=co)


def _edit(co: CodeObject):
    rec = _recovered(co)
    return rec, release_vgpr_padding(KernelSource(rec.source, "k"), co.kernel("k").descriptor, "gfx942")


def _granulated(data: bytes) -> int:
    return CodeObject(data, "k1.co").kernel("k").descriptor.fields["granulated_workitem_vgpr_count"]


def test_a_padded_declaration_is_lowered_to_what_the_code_names():
    rec, edit = _edit(asm(BODY, vgprs=256, agprs=256))  # declares 512: one wave per SIMD
    assert edit is not None and edit.operator == "release_vgpr_padding"
    assert edit.text.split() == [".amdhsa_next_free_vgpr", "8"] and "1 -> 8 waves per SIMD" in edit.note
    lines = rec.source.splitlines()
    assert lines[edit.start - 1].split() == [".amdhsa_next_free_vgpr", "512"]
    lines[edit.start - 1] = edit.text
    assert _granulated(rebuild_source("\n".join(lines) + "\n", rec.info).data) == 0  # (0 + 1) x 8 VGPRs


def test_refused_when_no_more_waves_fit_or_registers_are_addressed_through_m0():
    assert _edit(asm(BODY, vgprs=8))[1] is None  # nothing padded
    assert _edit(asm(BODY, vgprs=64))[1] is None  # padded, but 8 waves per SIMD already
    assert _edit(asm(INDIRECT, vgprs=256, agprs=256))[1] is None


def test_the_rebuild_grants_a_lowered_directive_only_down_to_the_code_and_never_with_m0_addressing():
    rec = _recovered(asm(BODY, vgprs=256, agprs=256))
    asked_too_few = rec.source.replace(".amdhsa_next_free_vgpr 512", ".amdhsa_next_free_vgpr 1")
    assert _granulated(rebuild_source(asked_too_few, rec.info).data) == 0  # the code names 3: 8 allocated
    rec = _recovered(asm(INDIRECT, vgprs=256, agprs=256))
    with pytest.raises(RebuildError, match="through M0"):
        rebuild_source(rec.source.replace(".amdhsa_next_free_vgpr 512", ".amdhsa_next_free_vgpr 8"), rec.info)


def _launches(workgroups: int):
    """(a verify launch of 4 workgroups, the bench launch of `workgroups`) of BODY's kernel."""
    def spec(n: int) -> dict:
        return {"kernel": "k", "grid": [n, 1, 1], "block": [64, 1, 1],
                "args": [{"buffer": "out", "dtype": "float32", "shape": [n * 64], "init": "random"},
                         *({"buffer": f"unused{i}", "dtype": "float32", "shape": [1], "init": "zeros"} for i in range(3)),
                         {"scalar": 0, "dtype": "int64"}]}
    return launch_from_dict(spec(4), label="v4"), launch_from_dict(spec(workgroups), label="bench")


def test_the_search_tries_the_release_first_and_keeps_it_through_every_gate(tmp_path):
    """4096 one-wave workgroups of a latency-bound kernel take fewer rounds of the CUs at eight waves per SIMD
    than at one: the model predicts the gain; the candidate is verified like any other."""
    co = asm(BODY, vgprs=256, agprs=256)
    small, bench = _launches(4096)
    res = optimize(co.path, [small], timing=bench, outdir=tmp_path / "out", budget=1)
    first = res.lineage.candidates[1]
    assert first.operator == "release_vgpr_padding" and first.status == "verified" and first.verdict["kind"] == "equivalent"
    assert res.best.id == first.id and res.speedup > 1.1
    assert _granulated(res.best.data) == 0 and ".amdhsa_next_free_vgpr 8" in res.best.source


def test_the_llm_agent_can_release_the_padding_once():
    co = asm(BODY, vgprs=256, agprs=256)
    small, bench = _launches(4096)
    bench_tools = Workbench(Evaluator(co.path, [small], timing=bench))
    assert "built and statically checked" in bench_tools.call("release_padding", "{}")
    assert "equivalent" in bench_tools.call("verify", "{}")
    assert "declares no VGPRs beyond" in bench_tools.call("release_padding", "{}")  # the current one needs none
    plain = Workbench(Evaluator(asm(BODY, vgprs=8).path, [small], timing=bench))
    assert "declares no VGPRs beyond" in plain.call("release_padding", "{}")
