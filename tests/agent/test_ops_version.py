"""version_full_exec: a run of masked regions tested once for every lane in every mask, the wave's path then run
as one block (saves, restores and skip branches gone), the regions kept for the waves that fail; the fast path
widened and packed; refusals where the test could not stand for the regions; 21_Sigmoid through every gate at
its predicted time."""
from __future__ import annotations

import pytest

import sys
from pathlib import Path

from asmevo.agent.gates import Evaluator
from asmevo.agent.ops_version import full_path, version_full_exec, versioned
from asmevo.launches import launch_from_dict
from agenttools import best_versioned, body_of, code, evaluated, evaluator, masked_region

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

POINTER = dict(kernarg=0, buffers=frozenset({0}))
PROLOGUE = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x10",
            "v_lshlrev_b32_e32 v1, 2, v0",                  # element e = 4 x lane
            "v_mov_b32_e32 v2, 0", "s_waitcnt lgkmcnt(0)",
            "v_lshl_add_u64 v[4:5], v[1:2], 2, s[2:3]"]    # &y[e]: the pointer + 16 x lane


def mask(k: int, offset: str = "v_or_b32_e32") -> list[str]:
    """s[10+2k:11+2k]: the lanes whose element e + k is in bounds (e | k: e is a multiple of 4; `offset` another
    operation of e and k for masks that are no affine range checks)."""
    return [f"{offset} v3, {k}, v1", f"v_cmp_gt_i32_e64 s[{10 + 2 * k}:{11 + 2 * k}], s6, v3"]


def element(k: int) -> list[str]:
    return [f"v_mul_f32_e32 v{20 + k}, v0, v0",
            f"global_store_dword v[4:5], v{20 + k}, off" + (f" offset:{4 * k}" if k else "")]


def regions(masks_first: bool = True, after: dict[int, list[str]] | None = None, inside: list[str] = (),
            offset: str = "v_or_b32_e32", prologue: list[str] = PROLOGUE) -> list[str]:
    """Four masked regions storing y[e + k]; the masks computed before the first (else each before its own, by
    `offset`); `after[k]` after region k's restore; `inside` in region 0."""
    lines = [*prologue, *(x for k in range(4) for x in mask(k))] if masks_first else list(prologue)
    for k in range(4):
        lines += [] if masks_first else mask(k, offset)
        lines += masked_region(k, f"s[{10 + 2 * k}:{11 + 2 * k}]", [*(inside if k == 0 else ()), *element(k)],
                               saved="s[8:9]")
        lines += (after or {}).get(k, [])
    return [*lines, "s_endpgm"]


def head(body) -> int:
    return next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_and_saveexec_b64")


def test_the_regions_run_as_one_block_when_every_lane_is_in_every_mask():
    b = body_of(regions(), **POINTER)
    found = versioned(b, head(b))
    new, test, copied = found.body, found.test, found.copied
    c = code(new)
    slow = next(x for x in c if x.startswith(".Lfull"))[:-1]
    [t] = [n for n, x in enumerate(c) if x.startswith("s_and_b64") and x.endswith("s[10:11], s[12:13]")]
    temp = c[t].split()[1].rstrip(",")
    assert c[t:t + 6] == [f"s_and_b64 {temp}, s[10:11], s[12:13]", f"s_and_b64 {temp}, {temp}, s[14:15]",
                          f"s_and_b64 {temp}, {temp}, s[16:17]", f"s_andn2_b64 {temp}, exec, {temp}",
                          f"s_cbranch_scc1 {slow}", f"s_cbranch_execz {slow}"]
    assert c[t + 6:c.index(f"{slow}:")] == [*(x for k in range(4) for x in element(k)), "s_endpgm"]
    # the regions as they were follow for the waves that fail the test
    first = code(b).index("s_and_saveexec_b64 s[8:9], s[10:11]")
    assert c[c.index(f"{slow}:") + 1:] == code(b)[first:]
    assert len(test) == 6 and len(copied) == 9


def test_the_fast_path_is_widened_and_packed():
    b = body_of(regions(), **POINTER)
    c = code(version_full_exec(b, head(b)))
    fast = c[c.index(next(x for x in c if x.startswith("s_cbranch_execz .Lfull"))) + 1:c.index("s_endpgm")]
    assert sum(x.startswith("v_pk_mul_f32") for x in fast) == 2 and not any(x.startswith("v_mul_f32") for x in fast)
    [store] = [x for x in fast if x.startswith("global_store")]
    assert store.startswith("global_store_dwordx4 v[4:5], v[")


def test_masks_computed_between_the_regions_are_computed_by_the_test():
    """Each later mask computed after the first save (as compiled code does) is computed again before the test, into
    fresh registers; the fast path no longer computes them."""
    b = body_of(regions(masks_first=False, offset="v_xor_b32_e32"), **POINTER)
    found = versioned(b, head(b))
    c, test = code(found.body), [it.text.strip() for it in found.test]
    assert test[:6] == ["v_xor_b32_e32 v6, 1, v1", "v_cmp_gt_i32_e64 s[18:19], s6, v6",
                        "v_xor_b32_e32 v7, 2, v1", "v_cmp_gt_i32_e64 s[20:21], s6, v7",
                        "v_xor_b32_e32 v8, 3, v1", "v_cmp_gt_i32_e64 s[22:23], s6, v8"]
    assert test[6:9] == ["s_and_b64 s[4:5], s[10:11], s[18:19]", "s_and_b64 s[4:5], s[4:5], s[20:21]",
                         "s_and_b64 s[4:5], s[4:5], s[22:23]"]
    slow = next(x for x in c if x.startswith(".Lfull"))
    fast = c[c.index(test[-1]) + 1:c.index(slow)]
    assert fast == [*(x for k in range(4) for x in element(k)), "s_endpgm"]
    assert full_path(b, head(b) - 1) is None    # a path starts at a save only


@pytest.mark.parametrize("offset", ["v_or_b32_e32", "v_add_u32_e32"])
def test_affine_range_checks_are_tested_once_for_their_largest_offset(offset):
    """Masks e + k < n of one e and n (k = 1..3, by OR or add) are one compare in the test: every lane with
    e < n - 3 passes all three (no e + k wraps there); the scalar subtraction's overflow leaves no lane passing."""
    b = body_of(regions(masks_first=False, offset=offset), **POINTER)
    test = [it.text.strip() for it in versioned(b, head(b)).test]
    bound = test[0].split()[1].rstrip(",")
    pair = test[2].split()[1].rstrip(",")
    assert test[:3] == [f"s_sub_i32 {bound}, s6, 3", f"s_cselect_b32 {bound}, 0x80000000, {bound}",
                        f"v_cmp_gt_i32_e64 {pair}, {bound}, v1"]
    assert test[3:] == [f"s_and_b64 s[4:5], s[10:11], {pair}", "s_andn2_b64 s[4:5], exec, s[4:5]",
                        "s_cbranch_scc1 .Lfull8_slow0", "s_cbranch_execz .Lfull8_slow0"]


@pytest.mark.parametrize("n", [256, 130, -2147483647])
def test_affine_range_checks_versioned_are_equivalent_on_the_emulator(n):
    """Element e stored by every lane, e + 1..3 where below n: every element in bounds (the fast path), a partial
    last row of elements, and n so low that n - 3 overflows (were the summary's bound not clamped, every lane would
    pass it and store e + 1..3)."""
    launch = launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "y", "dtype": "float32", "shape": [256], "init": "zeros"},
        {"buffer": "unused", "dtype": "float32", "shape": [1], "init": "zeros"},
        {"scalar": n, "dtype": "int64"}]}, label=f"n{n}")
    aligned = [*PROLOGUE[:2], "v_lshlrev_b32_e32 v24, 2, v0", "v_mov_b32_e32 v25, 0", "s_waitcnt lgkmcnt(0)",
               "v_lshl_add_u64 v[4:5], v[24:25], 2, s[2:3]", "v_mov_b32_e32 v1, v24"]   # v[1:2] is no aligned pair
    lines = [x.replace("v_cmp_gt_i32_e64 s[10:11], s6, v3", "v_cmp_le_i32_e64 s[10:11], 0, v3")
             for x in regions(masks_first=False, prologue=aligned)]
    co = asm("\n".join(f"  {ln}" for ln in lines), vgprs=32, sgprs=24, args=2)
    ev = Evaluator(co.path, [launch])
    body = ev.body_of(0)
    evaluated(ev, body, version_full_exec(body, head(body)), "version_full_exec")


def test_a_mask_register_each_region_computes_again_is_a_mask_of_its_own():
    """Each region's mask computed into VCC right before it: the test computes the three later ones into three
    pairs (the VOPC compares in VOP3 form), and ANDs all four."""
    lines = list(PROLOGUE)
    for k in range(4):
        lines += [f"v_xor_b32_e32 v3, {k}, v1", "v_cmp_gt_i32_e32 vcc, s6, v3",
                  *masked_region(k, "vcc", element(k), saved="s[8:9]")]
    b = body_of([*lines, "s_endpgm"], **POINTER)
    test = [it.text.strip() for it in versioned(b, head(b)).test]
    pairs = [x.split()[1].rstrip(",") for x in test if x.startswith("v_cmp_gt_i32_e64")]
    assert len(set(pairs)) == 3 and "vcc" not in pairs
    combine = [x for x in test if x.startswith("s_and_b64")]
    assert combine[0].endswith(f"vcc, {pairs[0]}") and [x.split()[-1] for x in combine[1:]] == pairs[1:]


def test_a_mask_whose_slice_reads_a_destination_as_such_is_not_computed():
    """A partial write (SDWA preserving the other half) reads what its destination held: renamed to a fresh
    register it would not, so the regions are not versioned."""
    lines = regions(after={0: ["v_mov_b32_sdwa v3, v1 dst_sel:WORD_0 dst_unused:UNUSED_PRESERVE src0_sel:DWORD",
                               "v_cmp_gt_i32_e64 s[12:13], s6, v3"]})
    b = body_of(lines, **POINTER)
    assert full_path(b, head(b)).computed and versioned(b, head(b)) is None


@pytest.mark.parametrize("lines", [
    regions(masks_first=False, after={0: ["global_load_dword v1, v[4:5], off", "s_waitcnt vmcnt(0)"]}),
    # a later mask depends on a value the path loads
    regions(after={0: ["s_cmp_lt_i32 s6, 8", "s_cselect_b64 s[12:13], -1, 0"]}),   # a mask from the path's SCC
    regions(after={0: ["s_and_b64 s[12:13], s[8:9], s[12:13]"]}),                   # a mask from a save's pair
    regions(after={1: ["s_cselect_b32 s20, 1, 0"]}),                 # SCC a dropped restore set is read
    regions(inside=["v_cmpx_gt_i32_e64 s[30:31], s6, v1"]),          # a region writes EXEC
])
def test_it_refuses_where_one_test_cannot_stand_for_the_regions(lines):
    b = body_of(lines, **POINTER)
    assert full_path(b, head(b)) is None and version_full_exec(b, head(b)) is None


def test_in_a_loop_the_path_ends_at_the_latch_and_joins_it():
    lines = regions()
    end = lines.index("s_endpgm")
    lines[end:end] = ["s_add_i32 s20, s20, 1", "s_cmp_lt_i32 s20, s6", "s_cbranch_scc1 .Lloop"]
    lines.insert(lines.index(mask(0)[0]), ".Lloop:")
    lines.insert(lines.index(".Lloop:"), "s_mov_b32 s20, 0")
    b = body_of(lines, **POINTER)
    path = full_path(b, head(b))
    assert path is not None and b.instructions[path.join].text() == "s_cbranch_scc1 .Lloop"
    c = code(versioned(b, head(b)).body)
    slow = c.index(next(x for x in c if x.startswith(".Lfull") and "_slow" in x))
    assert c[slow - 3:slow - 1] == ["s_add_i32 s20, s20, 1", "s_cmp_lt_i32 s20, s6"]
    join = c[slow - 1].split()[1]
    assert c[slow - 1] == f"s_branch {join}" and c[c.index(f"{join}:") + 1] == "s_cbranch_scc1 .Lloop"


def test_sigmoid_versioned_verifies_and_runs_at_its_predicted_time():
    """KernelBench's Sigmoid guards each of a lane's four elements by its own mask, each region computing one
    element's sigmoid and storing it. At its bench shape on MI308X every wave passes the test: the fast path's
    stores widen to one dwordx4 and the four elements' arithmetic packs in pairs, verified equivalent on every
    verify shape and the held-out one (whose tail waves take the kept regions)."""
    ev = evaluator("21_Sigmoid", gpu="mi308x")
    predicted, body, new = best_versioned(ev)
    cand = evaluated(ev, body, new, "version_full_exec")
    assert cand.speedup > 1.45
    assert cand.cycles == pytest.approx(predicted, rel=0.01)
