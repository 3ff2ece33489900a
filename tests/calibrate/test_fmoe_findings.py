"""The one-stage MoE objects' known findings (asmevo/calibrate/fmoe_findings.py) against the shipped text, by the
static checks, and the MI355X rows that run under them (needs the pinned wheel: fetched, or skipped)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from asmevo.calibrate.aiter_tables import (ONE_STAGE_PROBLEMS, aiter_rows, kernel_objects, known_findings, run_row,
                                           unexpected_findings, written_elements)
from asmevo.calibrate.fmoe_findings import ATOMICS_PER_EPILOGUE, FINDINGS, SHIPPED, SOFT_CLAUSE_PC
from asmevo.codeobj import CodeObject
from asmevo.isa.hazards import check_hazards
from asmevo.isa.waitcnt import check_waitcnt, decode_waitcnt

NAMES = sorted(SHIPPED)


@functools.lru_cache(maxsize=None)
def _instructions(processor: str, name: str):
    """The kernel of code object `name` (file name) of `processor`'s build."""
    (symbol, path), = [(k, p) for k, (p, _) in kernel_objects(processor).items() if p.name == name]
    return CodeObject.from_path(path).kernel_instructions(symbol)


def _touches_v44(ins) -> bool:
    return any(op.kind == "vgpr" and op.index <= 44 < op.index + op.count for op in ins.operands)


@pytest.fixture(scope="module")
def mi355x_one_stage(wheel):
    return [r for r in aiter_rows("mi355x") if r.family == "fmoe_g1u1_1stage"]


@pytest.mark.parametrize("name", NAMES + list(ONE_STAGE_PROBLEMS))
def test_gfx950_builds_are_the_gfx942_text_but_the_fp8_maximum(wheel, name):
    """So the addresses (and the gfx942 suite problem's findings) hold for both builds."""
    old, new = _instructions("gfx942", name), _instructions("gfx950", name)
    assert [i.address for i in old] == [i.address for i in new]
    diff = [(a.text(), b.text()) for a, b in zip(old, new) if a.encoding != b.encoding]
    assert len(diff) == 2 and all(a.startswith("v_mov_b32") and a.endswith(", 0x43700000")
                                  and b == a.replace("0x43700000", "0x43e00000") for a, b in diff), diff


@pytest.mark.parametrize("name", NAMES)
def test_the_static_check_finds_exactly_the_recorded_missing_waits(wheel, name):
    s, ins = SHIPPED[name], _instructions("gfx950", name)
    at = {i.address: n for n, i in enumerate(ins)}
    found = {(v.pc, v.register, v.counter) for v in check_waitcnt(ins, processor="gfx950")}
    want = set()
    for read, first_atomic in s.epilogues:
        assert ins[at[read]].text().startswith("ds_read_b32 v64,")
        atomics = [i for i in ins[at[first_atomic]:] if i.mnemonic == "global_atomic_pk_add_bf16"][:ATOMICS_PER_EPILOGUE]
        assert [i.operands[1].text for i in atomics] == [f"v{64 + k}" for k in range(ATOMICS_PER_EPILOGUE)]
        between = ins[at[read]:at[first_atomic]]
        assert not any("lgkmcnt" in decode_waitcnt(i) for i in between if i.mnemonic == "s_waitcnt")
        assert any("vmcnt" in decode_waitcnt(i) for i in between if i.mnemonic == "s_waitcnt")
        want |= {(i.address, f"v{64 + k}", "lgkmcnt") for k, i in enumerate(atomics)}
    if s.dead_load:
        load, first, last, wait = s.dead_load
        assert ins[at[load]].text().startswith("buffer_load_dword v44, v11,")
        # straight-line code that does not touch v44 until the scratch use overwrites it: the load is dead
        assert not any(i.mnemonic.startswith(("s_branch", "s_cbranch")) or _touches_v44(i)
                       for i in ins[at[load] + 1:at[first]])
        assert decode_waitcnt(ins[at[wait]]).keys() == {"vmcnt"}
        scratch = [i for i in ins[at[first]:at[last] + 1] if _touches_v44(i)]
        assert [i.mnemonic for i in scratch] == ["v_lshrrev_b32_e32", "v_mul_i32_i24_e32", "v_and_b32_e32",
                                                 "v_mul_i32_i24_e32", "v_lshrrev_b32_e32", "v_mul_i32_i24_e32"]
        want |= {(i.address, "v44", "vmcnt") for i in scratch}
    assert found == want
    assert ("waitcnt" in FINDINGS[name]) == bool(want)


@pytest.mark.parametrize("name", NAMES)
def test_the_hazard_check_finds_the_recorded_rules(wheel, name):
    hazards = check_hazards(_instructions("gfx950", name), processor="gfx950")
    rules = {h.rule for h in hazards}
    assert rules == {"salu-m0", "valu-sgpr-valu"} | ({"soft-clause"} if SHIPPED[name].soft_clause else set())
    assert {h.pc for h in hazards if h.rule == "soft-clause"} <= {SOFT_CLAUSE_PC}


def test_every_mi355x_one_stage_row_runs_under_its_objects_findings(mi355x_one_stage):
    """Each runnable row's object has its findings recorded: here, or by its suite problem."""
    runnable = [r for r in mi355x_one_stage if not r.reason]
    assert len(runnable) == 27 and {r.code_object.name for r in runnable} == set(SHIPPED) | set(ONE_STAGE_PROBLEMS)
    for r in runnable:
        if r.problem is None:
            assert known_findings(r) == FINDINGS[r.code_object.name]
        else:
            assert r.code_object.name in ONE_STAGE_PROBLEMS and {"hazard", "waitcnt"} <= set(known_findings(r))


@pytest.mark.slow
def test_a_probe_of_every_mi355x_one_stage_object(mi355x_one_stage):
    """The cheapest row of each object: no finding beyond its known ones, and output stored."""
    cheapest = {}
    for r in sorted(mi355x_one_stage, key=lambda r: np.prod(r.launch["grid"]) * r.shape["model_dim"]):
        if not r.reason:
            cheapest.setdefault(r.code_object.name, r)
    for r in cheapest.values():
        run = run_row(r)
        assert not unexpected_findings(r, run), (r.kernel, unexpected_findings(r, run)[:2])
        assert written_elements(run, r.output) > 0, r.kernel
