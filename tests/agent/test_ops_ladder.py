"""version_guard_ladder: a ladder of uniform row guards tested once for its largest row, the guarded work
run unguarded when every row is in range and the ladder kept for the rest."""
from __future__ import annotations

import pytest

from asmevo.agent.ops_ladder import ladder, ladder_head, version_guard_ladder

from agenttools import body_of, code, evaluated

# Out-of-line form (Triton's prefill K loads): an out-of-range rung zeroes its value away from the ladder
# and rejoins it at the next rung's work; the last rung's work ends with `s_branch .Ljoin`.
OUT_OF_LINE = ["s_cmp_ge_i32 s0, s33", "s_cbranch_scc1 .Lz0", "v_mov_b32_e32 v1, 1",
               "s_add_i32 s1, s0, 4", "s_cmp_ge_i32 s1, s33", "s_cbranch_scc1 .Lz1", ".Lw1:", "v_mov_b32_e32 v2, 2",
               "s_add_i32 s1, s0, 8", "s_cmp_ge_i32 s1, s33", "s_cbranch_scc1 .Lz2", ".Lw2:", "v_mov_b32_e32 v3, 3",
               "s_branch .Ljoin",
               ".Lz0:", "v_mov_b32_e32 v1, 0", "s_add_i32 s1, s0, 4", "s_cmp_ge_i32 s1, s33", "s_cbranch_scc0 .Lw1",
               ".Lz1:", "v_mov_b32_e32 v2, 0", "s_add_i32 s1, s0, 8", "s_cmp_ge_i32 s1, s33", "s_cbranch_scc0 .Lw2",
               ".Lz2:", "v_mov_b32_e32 v3, 0",
               ".Ljoin:", "s_mov_b32 s1, 0", "global_store_dword v[4:5], v1, off", "s_endpgm"]


INLINE = ["s_cmp_ge_i32 s0, s33", "v_mov_b32_e32 v1, 0", "s_cbranch_scc1 .Ls1", "v_mov_b32_e32 v1, 1",
          ".Ls1:", "s_add_i32 s1, s0, 1", "v_mov_b32_e32 v2, 0", "s_cmp_ge_i32 s1, s33", "s_cbranch_scc1 .Ls2",
          "v_mov_b32_e32 v2, 2",
          ".Ls2:", "s_add_i32 s1, s0, 2", "s_cmp_ge_i32 s1, s33", "s_cbranch_scc1 .Ls3", "v_mov_b32_e32 v3, 3",
          ".Ls3:", "global_store_dword v[4:5], v1, off", "s_endpgm"]


def test_the_ladder_is_tested_once_and_its_work_runs_unguarded_before_the_original():
    b = body_of(OUT_OF_LINE)
    lad = ladder(b, 0)
    assert (lad.rungs, lad.kmax, lad.join, lad.jumps) == (3, 8, ".Ljoin", True)
    new = version_guard_ladder(b, 0)
    assert new is not None
    assert code(new)[:11] == ["s_add_i32 s1, s0, 8", "s_cbranch_scc1 .Ljoin_slow0", "s_cmp_lt_i32 s1, s33",
                              "s_cbranch_scc0 .Ljoin_slow0", "v_mov_b32_e32 v1, 1", "v_mov_b32_e32 v2, 2",
                              "v_mov_b32_e32 v3, 3", "s_branch .Ljoin", ".Ljoin_slow0:", "s_cmp_ge_i32 s0, s33",
                              "s_cbranch_scc1 .Lz0"]
    assert code(new)[9:] == code(b)   # the ladder as it was
    assert ladder(new, 8) is not None and not ladder_head(new, 8)   # versioned already


def test_an_inline_ladder_ends_at_its_last_skip_target_and_keeps_interleaved_work():
    """Skips to the next rung (Triton's prefill V loads): the defaults are set before, an instruction between
    a guard's compare and branch runs either way, and the fast path branches to the last skip target."""
    b = body_of(INLINE)
    lad = ladder(b, 0)
    assert (lad.rungs, lad.kmax, lad.join, lad.jumps) == (3, 2, ".Ls3", False)
    new = version_guard_ladder(b, 0)
    assert code(new)[4:11] == ["v_mov_b32_e32 v1, 0", "v_mov_b32_e32 v1, 1", "v_mov_b32_e32 v2, 0",
                               "v_mov_b32_e32 v2, 2", "v_mov_b32_e32 v3, 3", "s_branch .Ls3", ".Ls3_slow0:"]


def _skips(rungs: int) -> list[str]:
    """A ladder of the inline form with `rungs` rungs, one move of work each."""
    lines = ["s_cmp_ge_i32 s0, s33", "s_cbranch_scc1 .Ls1", "v_mov_b32_e32 v1, 1"]
    for r in range(1, rungs):
        lines += [f".Ls{r}:", f"s_add_i32 s1, s0, {r}", "s_cmp_ge_i32 s1, s33", f"s_cbranch_scc1 .Ls{r + 1}",
                  f"v_mov_b32_e32 v{r + 1}, {r + 1}"]
    return lines + [f".Ls{rungs}:", "global_store_dword v[4:5], v1, off", "s_endpgm"]


@pytest.mark.parametrize("widest_taken, faster", [(0, True), (10, False)])
def test_the_prediction_runs_the_fast_path_as_often_as_the_widest_rung_fell_through(widest_taken, faster):
    """The kept ladder does not run as often as the parent's: a prediction counts the fast path as often as the
    widest rung (k = kmax) fell through in the parent and each kept instruction the rest of its executions.
    (Counted at the parent's counts instead, an inline ladder of any length was predicted slower.)"""
    from asmevo.agent.search import Heat, _static, ratios
    b = body_of(_skips(6))
    new = version_guard_ladder(b, 0)
    instrs = b.instructions
    runs = {id(x): 10.0 for x in instrs}
    runs[id(instrs[-3])] = 10.0 - widest_taken   # the widest rung's work
    heat = Heat(runs, dict(runs), None, 0.0, (0.0, {}, 0.0, 0.0), {}, list(instrs))
    heat.static = _static(b, heat)
    assert (ratios(new, heat)["latency"] < 1.0) == faster


def _with(lines: list[str], old: str, new: str) -> list[str]:
    return [new if line == old else line for line in lines]


@pytest.mark.parametrize("lines", [
    OUT_OF_LINE[:8] + ["s_branch .Ljoin"] + OUT_OF_LINE[14:],                       # two rungs: no gain
    _with(OUT_OF_LINE, "v_mov_b32_e32 v2, 2", "v_mov_b32_e32 v2, s1"),                # the work reads t
    _with(OUT_OF_LINE, "v_mov_b32_e32 v2, 2", "s_mov_b32 s33, 0"),                    # the work writes L
    _with(OUT_OF_LINE, "v_mov_b32_e32 v2, 2", "s_cselect_b32 s2, 1, 0"),              # the work reads SCC
    _with(OUT_OF_LINE, "s_mov_b32 s1, 0", "v_mov_b32_e32 v6, s1"),                    # t live at the join
    _with(OUT_OF_LINE, "s_add_i32 s1, s0, 8", "s_add_i32 s1, s0, -8"),                # a rung below B
    _with(OUT_OF_LINE, "v_mov_b32_e32 v2, 2", "s_cbranch_vccz .Ljoin"),               # a branch in the work
])
def test_refused(lines):
    assert version_guard_ladder(body_of(lines), 0) is None


def _rows_kernel():
    """An evaluator of a kernel summing the three rows of a [3, 64] input into out, row k loaded only when
    B + k is below L (0 otherwise); launched with B = 0 and L = 3 (every row in range) and L = 2 (the last out)."""
    import sys
    from pathlib import Path

    from asmevo.agent.gates import Evaluator
    from asmevo.launches import launch_from_dict
    sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
    from emutools import asm
    co = asm("""  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx2 s[8:9], s[0:1], 0x10
  v_lshlrev_b32_e32 v1, 2, v0
  v_mov_b32_e32 v2, 0
  v_mov_b32_e32 v3, 0
  v_mov_b32_e32 v4, 0
  s_waitcnt lgkmcnt(0)
  s_cmp_ge_i32 s8, s9
  s_cbranch_scc1 .Ls1
  global_load_dword v2, v1, s[4:5]
.Ls1:
  s_add_i32 s10, s8, 1
  s_cmp_ge_i32 s10, s9
  s_cbranch_scc1 .Ls2
  global_load_dword v3, v1, s[4:5] offset:256
.Ls2:
  s_add_i32 s10, s8, 2
  s_cmp_ge_i32 s10, s9
  s_cbranch_scc1 .Ls3
  global_load_dword v4, v1, s[4:5] offset:512
.Ls3:
  s_waitcnt vmcnt(0)
  v_add_u32_e32 v2, v2, v3
  v_add_u32_e32 v2, v2, v4
  global_store_dword v1, v2, s[6:7]
  s_endpgm""", args=2)

    def launch(bound: int):
        return launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
            {"buffer": "rows", "dtype": "int32", "shape": [3, 64], "init": "random"},
            {"buffer": "out", "dtype": "int32", "shape": [64], "init": "zeros"},
            {"scalar": bound << 32, "dtype": "int64"}]}, label=f"L{bound}")
    return Evaluator(co.path, [launch(3), launch(2)])


def test_the_versioned_ladder_is_equivalent_in_and_out_of_range_and_faster_in_range():
    ev = _rows_kernel()
    body = ev.body_of(0)
    head = next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_cmp_ge_i32")
    new = version_guard_ladder(body, head)
    assert new is not None and ladder(body, head).rungs == 3
    cand = evaluated(ev, body, new, "version_guard_ladder")
    assert cand.cycles < ev.lineage.candidates[0].cycles


@pytest.mark.slow
def test_prefill_attention_loads_run_unguarded_in_range():
    """vLLM's prefill attention guards each of its K and V row loads per iteration (ladders of 31 and 28 rungs,
    one of each form); versioning both verifies on every verify shape and the held-out one and is faster at the bench
    shape, where every key block that ends inside its sequence takes the unguarded loads."""
    from agenttools import evaluator
    ev = evaluator("vllm_prefill_attention", "triton", "mi300x")
    body = new = ev.body_of(0)
    for _ in range(2):
        head = next(i for i, x in enumerate(new.instructions) if x.text() == "s_cmp_ge_i32 s0, s33"
                    and ladder_head(new, i))
        new = version_guard_ladder(new, head)
        assert new is not None
    cand = evaluated(ev, body, new, "version_guard_ladder")
    assert cand.speedup > 1.05


@pytest.mark.slow
def test_both_prefill_ladders_are_predicted_faster_at_the_bench_shape():
    """From K0's profile at the bench shape, versioning either ladder is predicted faster than K0 (the search
    proposes only those): the kept ladder is counted for the key blocks that leave their sequence only."""
    from agenttools import evaluator
    from asmevo.agent.search import heat_of, predict
    ev = evaluator("vllm_prefill_attention", "triton", "mi300x")
    body = ev.body_of(0)
    heat = heat_of(body, ev.profile(0), ev.lineage.get(0).cycles)
    heads = [i for i, x in enumerate(body.instructions) if x.text() == "s_cmp_ge_i32 s0, s33" and ladder_head(body, i)]
    assert [ladder(body, h).rungs for h in heads] == [31, 28]
    assert all(predict(version_guard_ladder(body, h), heat) < heat.time for h in heads)


def test_the_search_tries_an_executed_ladder_head_however_cheap():
    """Each guard costs a few cycles, below the hottest instructions; the head of a ladder is a site anyway."""
    from asmevo.agent.search import Heat, hot_sites
    b = body_of(OUT_OF_LINE)
    ran = {id(x): 1.0 for x in b.instructions}
    heat = Heat(ran, ran, None, 0.0, (0.0, {}, 0.0, 0.0))
    assert 0 in hot_sites(b, heat, limit=0, blocks=0)
    cold = Heat({}, {id(x): 0.0 for x in b.instructions}, None, 0.0, (0.0, {}, 0.0, 0.0))
    assert 0 not in hot_sites(b, cold, limit=0, blocks=0)
