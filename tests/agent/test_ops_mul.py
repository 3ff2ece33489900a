"""A 64-bit product of two sign-extended 32-bit values made one `v_mad_i64_i32` (`fuse_signed_multiply`): the
shapes it takes, how the SGPR pair's sign extension is proved, the cases it must refuse, and results through
every gate (negative factors included)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.agent.ops_mul import fuse_signed_multiplies, fuse_signed_multiply, signed_multiply
from agenttools import body_of, code, evaluated, evaluator

PAIR = ["s_load_dword s13, s[0:1], 0x8", "s_waitcnt lgkmcnt(0)", "s_ashr_i32 s17, s13, 31", "s_mov_b32 s16, s13"]
MUL = ["v_ashrrev_i32_e32 v19, 31, v3", "v_mul_lo_u32 v22, s17, v3", "v_mul_lo_u32 v19, s16, v19",
       "v_mad_u64_u32 v[20:21], s[2:3], s16, v3, 0", "v_add3_u32 v21, v21, v19, v22"]
STORE = ["global_store_dwordx2 v[20:21], v[4:5], off", "s_endpgm"]
FUSED = "v_mad_i64_i32 v[20:21], s[2:3], s16, v3, 0"


def _fuse(lines: list[str], launch_sgprs: int | None = 4):
    body = body_of(lines, launch_sgprs=launch_sgprs)
    return fuse_signed_multiply(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "v_mad_u64_u32"))


def test_the_five_instructions_become_one_signed_multiply_add():
    new = _fuse(PAIR + ["v_add_u32_e32 v3, 7, v0"] + MUL + STORE)
    assert code(new) == PAIR + ["v_add_u32_e32 v3, 7, v0", FUSED] + STORE


def test_operand_orders_and_an_addend_carry_over():
    swapped = ["v_ashrrev_i32_e32 v19, 31, v3", "v_mul_lo_u32 v23, s16, v19", "v_mul_lo_u32 v22, v3, s17",
               "v_mad_u64_u32 v[20:21], s[2:3], v3, s16, v[6:7]", "v_add3_u32 v21, v22, v21, v23"]
    new = _fuse(["s_load_dword s16, s[0:1], 0x8", "s_waitcnt lgkmcnt(0)", "s_ashr_i32 s17, s16, 31"] + swapped + STORE)
    assert code(new)[3:] == ["v_mad_i64_i32 v[20:21], s[2:3], v3, s16, v[6:7]"] + STORE


def test_every_path_may_set_the_pair_and_an_unwritten_pair_is_undefined_when_no_launch_sets_it():
    paths = ["s_cmp_gt_i32 s14, 0", "s_cbranch_scc1 .Lb", *PAIR[2:], "s_branch .Lj", ".Lb:", *PAIR[2:], ".Lj:"]
    head = ["s_load_dwordx2 s[12:13], s[0:1], 0x8", "s_load_dword s14, s[0:1], 0x10", "s_waitcnt lgkmcnt(0)"]
    assert FUSED in code(_fuse(head + paths + MUL + STORE))
    one_path = ["s_cmp_gt_i32 s14, 0", "s_cbranch_scc1 .Lj", *PAIR[2:], ".Lj:"]
    assert FUSED in code(_fuse(head + one_path + MUL + STORE))  # s16, s17 unwritten on the other path
    assert _fuse(head + one_path + MUL + STORE, launch_sgprs=None) is None  # unknown: they may be launch values
    assert _fuse(head + one_path + MUL + STORE, launch_sgprs=18) is None  # the hardware sets them
    half = ["s_cmp_gt_i32 s14, 0", "s_cbranch_scc1 .Lj", *PAIR[2:], "s_branch .Lk", ".Lj:", "s_mov_b32 s16, s12",
            ".Lk:"]
    assert _fuse(head + half + MUL + STORE) is None  # a path writes the low word alone


@pytest.mark.parametrize("lines", [
    PAIR[:2] + ["s_lshr_b32 s17, s13, 31", "s_mov_b32 s16, s13"] + MUL + STORE,  # not a sign extension
    PAIR[:2] + ["s_ashr_i32 s17, s13, 31", "s_mov_b32 s16, s14"] + MUL + STORE,  # high of another value
    PAIR[:2] + ["s_ashr_i32 s17, s13, 31", "s_add_u32 s13, s13, 1", "s_mov_b32 s16, s13"] + MUL + STORE,
    PAIR + ["v_lshrrev_b32_e32 v19, 31, v3"] + MUL[1:] + STORE,  # vA's high is not its sign
    PAIR + MUL[:2] + ["v_add_u32_e32 v3, 1, v3"] + MUL[2:] + STORE,  # vA changes on the way
    PAIR + MUL + ["global_store_dword v[20:21], v22, off", "s_endpgm"],  # a partial product is read later
    PAIR + MUL[:2] + ["v_mov_b32_e32 v19, 0"] + MUL[2:] + STORE,  # a's high word overwritten before I3 reads it
    PAIR + MUL[:4] + ["v_mov_b32_e32 v22, 1"] + MUL[4:] + STORE,  # a partial product overwritten before the sum
    PAIR + MUL + ["s_cselect_b64 s[6:7], s[2:3], 0"] + STORE,  # the carry-out is read
    PAIR + MUL[:4] + ["v_add3_u32 v21, v21, v19, v19"] + STORE,  # not both cross terms
    PAIR + MUL[:4] + ["v_add_u32_e32 v21, v21, v19"] + STORE,
])
def test_refused(lines):
    assert _fuse(lines) is None


def _product(n: int):
    """A launch of a kernel storing (long)(lane - 32) * n per lane (n: its scalar argument)."""
    from asmevo.launches import launch_from_dict
    return launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "out", "dtype": "int32", "shape": [128], "init": "zeros"}, {"scalar": n, "dtype": "int64"}]},
        label=f"n{n}")


def test_the_signed_multiply_is_equivalent_for_factors_of_either_sign():
    from asmevo.agent.gates import Evaluator
    sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
    from emutools import asm
    lines = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dword s13, s[0:1], 0x8", "v_add_u32_e32 v3, -32, v0",
             "v_lshlrev_b32_e32 v1, 3, v0", "s_waitcnt lgkmcnt(0)", "s_ashr_i32 s17, s13, 31", "s_mov_b32 s16, s13",
             *MUL, "global_store_dwordx2 v1, v[20:21], s[4:5]", "s_endpgm"]
    co = asm("\n".join(f"  {ln}" for ln in lines), args=1)
    ev = Evaluator(co.path, [_product(n) for n in (-7, 5, 2**30 + 3, -2**31)])
    body = ev.body_of(0)
    new = fuse_signed_multiply(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "v_mad_u64_u32"))
    assert FUSED in code(new)
    evaluated(ev, body, new, "fuse_signed_multiply")


def test_tall_skinny_gemm_addresses_its_sixteen_stores_with_one_multiply_each():
    ev = evaluator("9_Tall_skinny_matrix_multiplication_")
    body = ev.body_of(0)
    sites = [i for i in range(len(body.instructions)) if signed_multiply(body, i)]
    assert len(sites) == 16
    new = fuse_signed_multiplies(body, sites[0])
    assert len(body.instructions) - len(new.instructions) == 4 * 16
    assert sum(c.startswith("v_mad_i64_i32") for c in code(new)) - sum(
        c.startswith("v_mad_i64_i32") for c in code(body)) == 16
    evaluated(ev, body, new, "fuse_signed_multiplies")
