"""version_exp_bounds: expf's two range guards (x >= -103.97 -> else 0, x <= 88.72 -> else +inf) tested once per
block, the fast rest of the block with the compares gone and the selects as moves: the guards recognised, the
layout, equivalence on the emulator for a wave inside the bounds (NaN included: it passes both guards) and one with
arguments beyond them and infinities; refusals (a guard's mask read elsewhere, a bound that is no constant, x
written between the guards, EXEC written before the last guard); 22_Tanh's versioned fast path through every gate."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from asmevo.agent.gates import Evaluator
from asmevo.agent.ops_exp_bounds import guard_at, version_exp_bounds
from asmevo.launches import launch_from_dict
from agenttools import body_of, code, evaluated, evaluator

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

LO, HI = "0xc2cff1b5", "0x42b17218"      # -103.97 and 88.72, as compiled expf loads them


def guards(x: str = "v2", r: str = "v4", between: list[str] = ()) -> list[str]:
    """expf(x)'s last steps as compiled: e = 2^(x log2 e), then the underflow and overflow guards into r."""
    return ["v_mul_f32_e32 v3, 0x3fb8aa3b, " + x, "v_exp_f32_e32 v3, v3", f"s_mov_b32 s8, {LO}",
            f"v_cmp_ngt_f32_e64 s[10:11], s8, {x}", "s_nop 1", "v_cndmask_b32_e64 v3, 0, v3, s[10:11]", *between,
            f"s_mov_b32 s9, {HI}", f"v_cmp_nlt_f32_e64 s[12:13], s9, {x}", "s_nop 1",
            f"v_cndmask_b32_e64 {r}, v5, v3, s[12:13]"]


def kernel(between: list[str] = (), after: list[str] = ()) -> list[str]:
    """out[gid] = expf(in[gid]) for one 64-lane workgroup per 64 elements (v5: +inf)."""
    return ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "s_lshl_b32 s3, s2, 8", "v_lshlrev_b32_e32 v1, 2, v0",
            "v_add_u32_e32 v1, s3, v1", "v_mov_b32_e32 v5, 0x7f800000", "s_waitcnt lgkmcnt(0)",
            "global_load_dword v2, v1, s[6:7]", "s_waitcnt vmcnt(0)", *guards(between=between), *after,
            "global_store_dword v1, v4, s[4:5]", "s_endpgm"]


def last_select(body) -> int:
    return max(k for k, x in enumerate(body.instructions) if x.mnemonic == "v_cndmask_b32_e64")


def test_the_guards_are_tested_once_and_the_fast_path_moves_e_into_r():
    b = body_of(kernel())
    g = guard_at(b, last_select(b))
    assert (g.x, g.e, g.r1, g.r) == ("v2", "v3", "v3", "v4") and g.bound == pytest.approx(88.72, abs=0.01)
    new = version_exp_bounds(b, last_select(b))
    assert new is not None and new.no_worse(b)
    c = code(new)
    branch = c.index("s_cbranch_scc1 .Lexp_slow0")
    bound = c[branch - 3].split()[1].rstrip(",")
    assert c[branch - 3] == f"s_mov_b32 {bound}, 0x42b17218" and c[branch - 2].endswith(f"{bound}, |v2|")
    assert c[branch - 1].startswith("s_andn2_b64") and ", exec, " in c[branch - 1]
    fast = c[branch + 1:c.index(".Lexp_slow0:")]
    assert [x for x in fast if x.startswith("v_")] == ["v_mov_b32_e32 v4, v3"]
    tail = code(b)[next(n for n, x in enumerate(code(b)) if x.startswith("v_cmp_ngt_f32")):]
    assert c[c.index(".Lexp_slow0:") + 1:] == tail        # the rest of the block as it was, for the other waves


@pytest.mark.parametrize("change", [
    dict(after=["v_cndmask_b32_e64 v6, 0, v6, s[12:13]"]),          # the overflow mask is read again
    dict(between=["v_add_f32_e32 v2, 1.0, v2"]),                    # x changes between the guards
    dict(between=["s_mov_b64 exec, s[14:15]"]),                     # EXEC changes before the last guard
])
def test_refused(change):
    b = body_of(kernel(**change))
    assert version_exp_bounds(b, last_select(b)) is None


def test_refused_for_a_bound_that_is_no_constant():
    b = body_of([x.replace(f"s_mov_b32 s9, {HI}", "s_load_dword s9, s[0:1], 0x10") for x in kernel()])
    assert guard_at(b, last_select(b)) is None


def test_equivalent_on_the_emulator_inside_and_beyond_the_bounds(tmp_path):
    inside = np.linspace(-88.0, 88.0, 64, dtype=np.float32)
    inside[7] = np.nan                                             # passes both guards, and the test
    beyond = np.linspace(-300.0, 300.0, 64, dtype=np.float32)
    beyond[[3, 5, 9]] = [np.inf, -np.inf, -103.97]
    np.save(tmp_path / "in.npy", np.concatenate([inside, beyond]))
    launch = launch_from_dict({"kernel": "k", "grid": [2, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "out", "dtype": "float32", "shape": [128], "init": "zeros"},
        {"buffer": "in", "dtype": "float32", "shape": [128], "init": f"file:{tmp_path / 'in.npy'}"},
        {"scalar": 0, "dtype": "int64"}]}, label="edges")
    co = asm("\n".join(f"  {ln}" for ln in kernel()), vgprs=8, sgprs=16, args=2)
    ev = Evaluator(co.path, [launch])
    body = ev.body_of(0)
    evaluated(ev, body, version_exp_bounds(body, last_select(body)), "version_exp_bounds")


def test_tanh_fast_path_through_every_gate():
    from asmevo.agent.ops_version import full_exec_head, version_full_exec
    ev = evaluator("22_Tanh", gpu="mi308x")
    body = ev.body_of(0)
    head = next(i for i in range(len(body.instructions)) if full_exec_head(body, i))
    versioned = evaluated(ev, body, version_full_exec(body, head), "version_full_exec")
    fast = ev.body_of(versioned.id)
    site = next(k for k in range(len(fast.instructions)) if guard_at(fast, k) is not None)
    cand = evaluated(ev, fast, version_exp_bounds(fast, site), "version_exp_bounds", parent=versioned.id)
    assert versioned.cycles / cand.cycles > 1.03      # four expf per lane's elements, each four VALU fewer
