"""version_uniform_quotients: divisions by a uniform divisor of S | v (v below a power of two) versioned on every
lane's quotient being one value: the cores recognised, a loop of divisions equivalent to the original on the
emulator for divisors below, at and above the window, windows that straddle a multiple of the divisor, negative
and near-overflow S and a zero divisor; refusals (the remainder read, an unbounded lane value, a divisor written
after the test, another reciprocal); 35_GroupNorm's output pass through every gate."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.agent.gates import Evaluator
from asmevo.agent.operators import OPERATORS, propose
from asmevo.agent.ops_quotient import core_at, version_uniform_quotients
from asmevo.agent.search import SearchConfig, heat_of, hot_sites
from asmevo.launches import launch_from_dict
from agenttools import body_of, code, evaluated, evaluator

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

ITERATIONS = 8
RECIPROCAL = ["v_cvt_f32_u32_e32 v1, s6", "v_rcp_iflag_f32_e32 v1, v1", "s_nop 0", "v_mul_f32_e32 v1, 0x4f7ffffe, v1",
              "v_cvt_u32_f32_e32 v1, v1", "s_sub_i32 s8, 0, s6", "v_mul_lo_u32 v2, s8, v1",
              "v_mul_hi_u32 v2, v1, v2", "v_add_u32_e32 v3, v1, v2"]


def core(x: str = "v5", q: str = "v7") -> list[str]:
    """x / s6 into q with the reciprocal v3, as compiled (x's register reused for the remainder)."""
    return [f"v_mul_hi_u32 v8, {x}, v3", "v_mul_lo_u32 v9, v8, s6", f"v_sub_u32_e32 {x}, {x}, v9",
            "v_add_u32_e32 v9, 1, v8", f"v_cmp_le_u32_e64 s[12:13], s6, {x}", "s_nop 1", "v_cndmask_b32_e64 v8, v8, v9, s[12:13]",
            f"v_subrev_u32_e32 v9, s6, {x}", f"v_cndmask_b32_e64 {x}, {x}, v9, s[12:13]", "v_add_u32_e32 v9, 1, v8",
            f"v_cmp_le_u32_e64 s[12:13], s6, {x}", "s_nop 1", f"v_cndmask_b32_e64 {q}, v8, v9, s[12:13]"]


def kernel(lane: str = "v_and_b32_e32 v4, 63, v0", in_loop: list[str] = (), after: list[str] = (),
           signed: bool = False) -> list[str]:
    """out[(wg * 8 + i) * 64 + lane] = |S + 37 i | (lane & 63)| / D for i < 8, S = S0 + 37 * 8 * wg (D and S0 the
    scalar argument's two dwords), the dividend's absolute value taken as max(-x, x); `signed`: the quotient of
    (S + 37 i | (lane & 63)) / D for a signed D, as compiled (|D|, then the sign fixed: (Q ^ sg) - sg with sg the
    XOR of both signs)."""
    divisor = ["s_ashr_i32 s15, s6, 31", "s_abs_i32 s6, s6"] if signed else []
    sign = ["v_ashrrev_i32_e32 v12, 31, v5"] if signed else []
    fix = ["v_xor_b32_e32 v12, s15, v12", "v_xor_b32_e32 v7, v7, v12", "v_sub_u32_e32 v7, v7, v12"] if signed else []
    return ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dwordx2 s[6:7], s[0:1], 0x8", "s_waitcnt lgkmcnt(0)",
            *divisor, *RECIPROCAL, lane, "s_mul_i32 s9, s2, 0x128", "s_add_i32 s9, s9, s7", "s_lshl_b32 s11, s2, 11",
            "s_add_u32 s4, s4, s11", "s_addc_u32 s5, s5, 0", "v_lshlrev_b32_e32 v10, 2, v0", "s_mov_b32 s10, 0",
            ".Lloop:", *in_loop, "v_or_b32_e32 v5, s9, v4", "v_sub_u32_e32 v6, 0, v5", *sign,
            "v_max_i32_e32 v5, v6, v5", *core(), *fix, *after, "global_store_dword v10, v7, s[4:5]",
            "s_add_u32 s4, s4, 256", "s_addc_u32 s5, s5, 0", "s_add_i32 s9, s9, 37", "s_add_i32 s10, s10, 1",
            f"s_cmp_lt_u32 s10, {ITERATIONS}", "s_cbranch_scc1 .Lloop", "s_endpgm"]


def first_core(body) -> int:
    return next(k for k in range(len(body.instructions)) if core_at(body, k) is not None)


def _launch(divisor: int, start: int):
    scalar = ((start & 0xFFFFFFFF) << 32 | divisor & 0xFFFFFFFF) - (1 << 64 if start < 0 else 0)
    return launch_from_dict({"kernel": "k", "grid": [16, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "out", "dtype": "uint32", "shape": [16 * ITERATIONS * 64], "init": "zeros"},
        {"scalar": scalar, "dtype": "int64"}]}, label=f"d{divisor}_s{start}")


def test_the_cores_are_recognised_and_replaced_by_one_move_of_the_scalar_quotient():
    b = body_of(kernel())
    k = first_core(b)
    c = core_at(b, k)
    assert (c.s, c.d, c.r, c.window, c.signed, c.q) == ("s9", "s6", "v3", 64, True, "v7")
    new = version_uniform_quotients(b, k)
    assert new is not None and new.no_worse(b)
    lines = code(new)
    test = lines.index(".Lloop:") + 1
    rec, masked, quotient = (lines[test + n].split() for n in range(3))
    assert rec[0] == "v_readfirstlane_b32" and rec[2] == "v3" and masked[0] == "s_and_b32" and masked[2:] == ["s9,", "-64"]
    q = quotient[1].rstrip(",")
    branch = lines.index("s_cbranch_scc1 .Lquot_slow0")
    assert lines[branch - 1] == f"s_cmp_eq_u32 {q}, -1" and f"s_cmp_lt_i32 s9, 0" in lines[test:branch]
    fast = lines[branch + 1:lines.index(".Lquot_slow0:")]
    assert not any(x.startswith(("v_mul_hi_u32", "v_mul_lo_u32", "v_cmp_le_u32")) for x in fast)
    assert f"v_mov_b32_e32 v7, {q}" in fast
    loop = code(b)[code(b).index(".Lloop:") + 1:]
    assert lines[lines.index(".Lquot_slow0:") + 1:] == [*loop[:-1], ".Lquot_join0:", loop[-1]]   # as it was


def test_a_signed_division_is_one_move_of_the_scalar_quotient_with_its_sign_fixed():
    b = body_of(kernel(signed=True))
    new = version_uniform_quotients(b, first_core(b))
    lines = code(new)
    branch = lines.index("s_cbranch_scc1 .Lquot_slow0")
    fixed = next(x.split()[1].rstrip(",") for x in lines[:branch] if x.startswith("s_xor_b32") and x.endswith("s15"))
    assert f"s_sub_u32 {fixed}, {fixed}, s15" in lines[:branch]
    fast = lines[branch + 1:lines.index(".Lquot_slow0:")]
    assert f"v_mov_b32_e32 v7, {fixed}" in fast      # (q ^ U) - U: the sign of x is 0 where the fast copy runs
    assert not any(x.startswith(("v_max_i32", "v_ashrrev_i32", "v_xor_b32", "v_sub_u32")) for x in fast)


@pytest.mark.parametrize("signed, cases", [
    (False, ((64, 0),                 # D = C: every window one quotient
             (100, 3),                # windows straddling multiples of D: both paths
             (1000, 5000), (1 << 20, 0x7FFFF000),    # S near 2^31: the last windows pass it and go slow
             (7, 100),                # D < C: the slow path only
             (0, 50),                 # division by zero: whatever the original computes
             (300, -3000),            # S < 0 first, |x| taken: slow until S passes 0
             (0x80000001, 12345))),   # D above 2^31
    (True, ((-100, 3), (100, 3), (-(1 << 20), 0x7FFFF000), (-7, 100), (-0x80000000, 5), (-300, -3000))),
])
def test_equivalent_on_the_emulator_around_every_edge_of_the_window(signed, cases):
    co = asm("\n".join(f"  {ln}" if not ln.endswith(":") else ln for ln in kernel(signed=signed)),
             vgprs=16, sgprs=24, args=1)
    ev = Evaluator(co.path, [_launch(d, s) for d, s in cases])
    body = ev.body_of(0)
    new = version_uniform_quotients(body, first_core(body))
    assert new is not None
    evaluated(ev, body, new, "version_uniform_quotients")


@pytest.mark.parametrize("change", [
    dict(after=["v_add_u32_e32 v7, v7, v5"]),                  # the remainder is read after the core
    dict(lane="v_mov_b32_e32 v4, v0"),                         # the lane value has no bound
    dict(in_loop=["s_add_u32 s6, s6, 0"]),                     # D is written after the test
])
def test_refused(change):
    b = body_of(kernel(**change))
    assert version_uniform_quotients(b, next(k for k, x in enumerate(b.instructions)
                                             if x.mnemonic == "v_mul_hi_u32" and k > 12)) is None


def test_refused_for_another_reciprocal():
    lines = [x.replace("0x4f7ffffe", "0x4f800000") for x in kernel()]
    b = body_of(lines)
    assert all(core_at(b, k) is None for k in range(len(b.instructions)))


def test_groupnorm_output_pass_through_every_gate():
    ev = evaluator("35_GroupNorm_", gpu="mi308x")
    body = ev.body_of(0)
    cores = [k for k in range(len(body.instructions)) if core_at(body, k) is not None]
    assert len(cores) == 4           # the four elements of a lane: one division each by the channel size
    new = version_uniform_quotients(body, cores[0])
    assert new is not None
    heat = heat_of(body, ev.profile(0), ev.lineage.get(0).cycles)     # the search proposes it at its hottest sites
    ops = tuple(op for op in OPERATORS if op.name == "version_uniform_quotients")
    assert any(p.body.items == new.items for p in propose(body, hot_sites(body, heat, SearchConfig().sites), ops))
    cand = evaluated(ev, body, new, "version_uniform_quotients")
    assert ev.lineage.get(0).cycles / cand.cycles > 1.8        # its HBM floor is 1.83x; 1.040x was the a963cf5 best
