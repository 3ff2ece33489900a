"""The mutation benchmark: its equivalent-mutant proofs, and one kernel end to end (slow)."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.isa.instruction import parse_instruction
from asmevo.recover import recover
from asmevo.suites import load_suite

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "verification" / "mutations.py"


@pytest.fixture(scope="module")
def mutations():
    spec = importlib.util.spec_from_file_location("mutations", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutations"] = module
    spec.loader.exec_module(module)
    return module


def straight(*texts: str, branch_to: dict[int, int] | None = None):
    """Instructions at addresses 0, 4, 8, ...; `branch_to` maps a branch's index to its target's."""
    out = []
    for i, text in enumerate(texts):
        ins = parse_instruction(text)
        ins.address = 4 * i
        if i in (branch_to or {}):
            ins.target = 4 * branch_to[i]
        out.append(ins)
    return out


def test_sgpr_overwritten_on_every_path_is_dead(mutations):
    code = straight("s_mov_b32 s0, 1", "s_mov_b32 s0, 2", "v_mov_b32 v1, s0", "s_endpgm")
    assert ("s", 0) not in mutations.live_after(code, 0)
    assert ("s", 0) in mutations.live_after(code, 1)


def test_sgpr_read_on_one_path_is_live(mutations):
    code = straight("s_mov_b32 s0, 1", "s_cbranch_scc1 0", "s_mov_b32 s0, 2", "v_mov_b32 v1, s0", "s_endpgm",
                    branch_to={1: 3})
    assert ("s", 0) in mutations.live_after(code, 0)


def test_vgpr_writes_never_kill(mutations):
    # the second write may cover only the active lanes, so the first value may still be read
    code = straight("v_mov_b32 v1, 0", "v_mov_b32 v1, 1", "v_add_f32 v2, v1, v1", "s_endpgm")
    assert ("v", 1) in mutations.live_after(code, 0)
    assert ("v", 2) not in mutations.live_after(code, 2)


def test_dead_write_proof_on_a_compiled_kernel(mutations):
    # 95_CrossEntropyLoss restores EXEC right before s_endpgm: nothing reads it afterwards
    problem = load_suite("kernelbench").problem("95_CrossEntropyLoss")
    k0 = CodeObject.from_path(problem.code_object)
    lines = recover(problem.code_object).source.splitlines()

    def without(address: int) -> list[str]:
        return [ln for ln in lines if not ln.rstrip().endswith(f"; 0x{address:x}")]

    proof = mutations.dead_write_proof(k0, lines, without(0x1fec))
    assert proof.startswith("liveness: s126, s127, scc written at 0x1fec are dead")
    first = next(ln for ln in lines if ln.startswith("\ts_load"))
    assert mutations.dead_write_proof(k0, lines, [ln for ln in lines if ln != first]) == ""  # not pure
    assert mutations.same_code_proof(k0, k0).startswith("identical code")


@pytest.mark.slow
def test_relu_mutants(mutations):
    outcomes, seconds = mutations.run_problem(load_suite("kernelbench").problem("19_ReLU"), 1,
                                              np.random.default_rng(1))
    preserving = [o for o in outcomes if not o.breaking]
    breaking = [o for o in outcomes if o.breaking]
    assert len(preserving) == 3 and all(o.correct for o in preserving)
    # Seed 1 picks two equivalent mutants on ReLU's tail path (the swapped `s_andn2_b64 exec` of a
    # loop that runs once, and an `s_xor_b64` else-mask that the later `s_andn2_saveexec` makes
    # redundant); every other breaking edit must be rejected.
    assert len(breaking) >= 6 and sum(o.correct for o in breaking) >= len(breaking) - 2
    assert seconds > 0
