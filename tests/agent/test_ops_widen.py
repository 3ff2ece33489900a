"""widen_loads / widen_stores: masked per-element dword accesses become one dwordx4 (dwordx3) for the
lanes that perform all four (three), with alignment proved from a pointer argument; loads under one
EXEC become one wide load in their place; refusals where alignment, bounds or ordering are not proved;
Triton's LeakyReLU through every gate."""
from __future__ import annotations

import pytest

from asmevo.agent.align import Alignment
from asmevo.agent.body import Body
from asmevo.agent.ops_rename import free_pairs
from asmevo.agent.ops_widen import widen_all_loads, widen_loads, widen_stores
from asmevo.agent.search import heat_of
from asmevo.agent.webs import VgprWebs
from agenttools import body_of, body_window, code, evaluator

POINTER = dict(kernarg=0, buffers=frozenset({0}))
PROLOGUE = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dword s6, s[0:1], 0x10",
            "v_lshlrev_b32_e32 v1, 2, v0",                  # element e = 4 x lane
            "v_mov_b32_e32 v2, 0", "s_waitcnt lgkmcnt(0)",
            "v_lshl_add_u64 v[4:5], v[1:2], 2, s[2:3]"]    # &x[e]: the pointer + 16 x lane


def masked_load(k: int, dst: int) -> list[str]:
    """Element e + k loaded into v`dst` (0 outside the bounds), as compilers emit it."""
    cmp_ = (["v_cmp_gt_i32_e32 vcc, s6, v1", "s_and_saveexec_b64 s[8:9], vcc"] if k == 0 else
            [f"v_or_b32_e32 v3, {k}, v1", f"v_cmp_gt_i32_e64 s[{10 + 2 * k}:{11 + 2 * k}], s6, v3",
             f"s_and_saveexec_b64 s[8:9], s[{10 + 2 * k}:{11 + 2 * k}]"])
    return [f"v_mov_b32_e32 v{dst}, 0", *cmp_, f"s_cbranch_execz .Ll{k}",
            f"global_load_dword v{dst}, v[4:5], off" + (f" offset:{4 * k}" if k else ""),
            f".Ll{k}:", "s_or_b64 exec, exec, s[8:9]"]


LOADS = [*PROLOGUE, *(x for k in range(4) for x in masked_load(k, 10 + k)), "s_waitcnt vmcnt(0)",
         "v_add_f32_e32 v14, v10, v11", "v_add_f32_e32 v15, v12, v13", "v_add_f32_e32 v14, v14, v15",
         "v_mov_b32_e32 v16, 0", "global_store_dword v[16:17], v14, off", "s_endpgm"]


def test_alignment_follows_shifts_and_adds_from_a_pointer_argument():
    b = body_of(LOADS, **POINTER)
    al = Alignment(b, VgprWebs(b))
    load = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword")
    assert al.operand(load, b.instructions[load].operands[1]) == 4     # 16-byte aligned
    unknown = body_of(LOADS, kernarg=0)                                   # offset 0 not known to be a buffer
    assert Alignment(unknown, VgprWebs(unknown)).operand(load, unknown.instructions[load].operands[1]) == 0


def test_four_masked_loads_become_one_for_the_lanes_in_bounds_of_all_four():
    b = body_of(LOADS, **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword")
    new = widen_loads(b, first)
    assert new is not None and new.no_worse(b)
    c = code(new)
    [wide] = [x for x in c if x.startswith("global_load_dwordx4")]
    quad = wide.split()[1].rstrip(",")
    assert wide == f"global_load_dwordx4 {quad}, v[4:5], off"
    lo = int(quad[2:].split(":")[0])
    # the narrow loads remain, for the lanes outside F, into the quad's registers; readers read the quad
    assert [x for x in c if x.startswith("global_load_dword ")] == [
        f"global_load_dword v{lo + k}, v[4:5], off" + (f" offset:{4 * k}" if k else "") for k in range(4)]
    assert f"v_add_f32_e32 v14, v{lo}, v{lo + 1}" in c
    # F = the four masks (the later ones recomputed before the first region); each region excludes F
    assert sum(x.startswith("s_andn2_b64") for x in c) == 4
    assert c.index(wide) < c.index("s_waitcnt vmcnt(0)")


def test_an_address_not_proved_aligned_is_checked_per_lane():
    lines = "\n".join(LOADS).replace("v[1:2], 2, s[2:3]", "v[1:2], 1, s[2:3]").split("\n")  # 8-byte aligned only
    b = body_of(lines, **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword")
    c = code(widen_loads(b, first))
    # the lanes whose address is 16-byte aligned (v4 & 15 == 0) ...
    [check] = [x for x in c if x.startswith("v_and_b32_e32") and x.endswith(", 15, v4")]
    [cmp_] = [x for x in c if x.startswith("v_cmp_eq_u32_e64") and x.endswith(f", 0, {check.split()[1].rstrip(',')}")]
    lanes = cmp_.split()[1].rstrip(",")
    # ... are part of F, which the wide load runs under
    [fmask] = {x.split()[1].rstrip(",") for x in c if x.startswith("s_and_b64") and x.endswith(f", {lanes}")}
    wide = next(n for n, x in enumerate(c) if x.startswith("global_load_dwordx4"))
    assert c.index(check) < c.index(cmp_) < wide and c[wide - 1].startswith("s_and_saveexec_b64") and \
        c[wide - 1].endswith(f", {fmask}")
    # where alignment is proved, nothing is checked
    assert not any(x.startswith("v_cmp_eq_u32") for x in code(widen_loads(body_of(LOADS, **POINTER), first)))


@pytest.mark.parametrize("change", [
    ("global_load_dword v10, v[4:5], off", "global_load_dword v10, v[4:5], off offset:16"),  # 4..16: misaligned
    ("s_or_b64 exec, exec, s[8:9]", "global_store_dword v[4:5], v0, off offset:64\n\ts_or_b64 exec, exec, s[8:9]"),
    ("v_or_b32_e32 v3, 2, v1", "v_add_u32_e32 v1, 8, v1\n\tv_or_b32_e32 v3, 2, v1"),       # mask input changes
])
def test_it_refuses_when_alignment_or_order_is_not_proved(change):
    lines = "\n".join(LOADS).replace(change[0], change[1], 1).split("\n")
    b = body_of(lines, **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword")
    assert widen_loads(b, first) is None


def masked_store(k: int) -> list[str]:
    mask = "vcc" if k == 0 else f"s[{10 + 2 * k}:{11 + 2 * k}]"
    return [f"s_and_saveexec_b64 s[8:9], {mask}", f"s_cbranch_execz .Ls{k}", f"v_mul_f32_e32 v6, 2.0, v{20 + k}",
            f"global_store_dword v[4:5], v6, off" + (f" offset:{4 * k}" if k else ""), f".Ls{k}:",
            "s_or_b64 exec, exec, s[8:9]"]


STORES = [*PROLOGUE, "v_cmp_gt_i32_e32 vcc, s6, v1", *(x for k in (1, 2, 3) for x in (
    f"v_or_b32_e32 v3, {k}, v1", f"v_cmp_gt_i32_e64 s[{10 + 2 * k}:{11 + 2 * k}], s6, v3")),
    *(f"v_cvt_f32_u32_e32 v{20 + k}, v{1 + k % 2}" for k in range(4)),
    *(x for k in range(4) for x in masked_store(k)), "s_endpgm"]


def test_four_masked_stores_become_one_after_the_last():
    b = body_of(STORES, **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_store_dword")
    new = widen_stores(b, first)
    assert new is not None and new.no_worse(b)
    c = code(new)
    [wide] = [x for x in c if x.startswith("global_store_dwordx4")]
    last = c.index("global_store_dword v[4:5], v11, off offset:12")  # the fourth value moved to v11
    assert c[last + 2:last + 4] == [f"s_mov_b64 exec, {c[last - 2].split()[-1]}", wide]
    assert wide == "global_store_dwordx4 v[4:5], v[8:11], off"
    # each narrow store keeps the lanes outside F and is skipped when there are none
    assert sum(x.startswith("s_andn2_b64 exec, exec, ") for x in c) == 4


def test_stores_interleaved_with_a_load_are_left_alone():
    lines = [x for x in STORES]
    lines.insert(lines.index("s_endpgm") - 4, "global_load_dword v30, v[4:5], off offset:256")
    b = body_of(lines, **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_store_dword")
    assert widen_stores(b, first) is None


def test_triton_leaky_relu_widened_loads_and_stores_verify_and_touch_fewer_lines():
    ev = evaluator("20_LeakyReLU")
    body = ev.body_of(0)
    load = next(i for i, x in enumerate(body.instructions) if x.mnemonic == "global_load_dword")
    new = widen_loads(body, load)
    cand = ev.evaluate(0, new.edit(body, "widen_loads", "x"), body_window(ev), agent="test", step=1)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()
    body1 = ev.body_of(cand.id)
    store = next(i for i, x in enumerate(body1.instructions) if x.mnemonic == "global_store_dword")
    new = widen_stores(body1, store)
    cand2 = ev.evaluate(cand.id, new.edit(body1, "widen_stores", "x"), body_window(ev, cand.id), agent="test", step=2)
    assert cand2.status == "verified" and cand2.verdict["kind"] == "equivalent", cand2.summary()
    lines = lambda c: (c.profile or ev.baseline.profile.estimate).terms["vmem_path"]
    assert lines(cand2) < lines(cand) < lines(ev.lineage.get(0))
    # The search's next step counts the candidate's cache lines from its stored, traceless estimate.
    ev._profile = lambda co: pytest.fail("a verified candidate was traced again")
    heat = heat_of(ev.body_of(cand2.id), ev.profile(cand2.id), cand2.cycles)
    wide = [id(x) for x in heat.instructions if x.mnemonic.endswith("dwordx4") and x.mnemonic.startswith("global")]
    assert cand2.profile.traced is None and len(wide) == 2 and all(heat.lines[w] > 0 for w in wide)


@pytest.mark.parametrize("widen, lines, pairs", [(widen_loads, LOADS, 3 + 4), (widen_stores, STORES, 1)])
def test_a_proved_alignment_takes_no_registers_for_a_per_lane_check(widen, lines, pairs):
    """With exactly the SGPR pairs a widening needs left free (loads: F, EXEC saved, a region's mask and
    a copy of each mask; stores: F) it goes ahead; with one fewer it refuses."""
    def tight(left: int) -> tuple[Body, int]:
        free = free_pairs(body_of(lines, **POINTER))
        b = body_of([f"s_mov_b64 {p}, 0" for p in free[left:]] + lines, **POINTER)
        return b, next(i for i, x in enumerate(b.instructions) if x.mnemonic.startswith("global_"))
    assert widen(*tight(pairs)) is not None
    assert widen(*tight(pairs - 1)) is None


def test_cumsum_loop_widened_loads_and_stores_verify_and_touch_fewer_lines():
    """89_cumsum's loop: four masked loads at v[6:7] offsets -8..4 and four stores at v[8:9], the
    addresses advanced by 0x1000 per iteration; a row starts wherever rows * cols puts it, so the
    16-byte alignment is checked per lane (the verify shapes 3x999 and 5x1001 start rows at every
    residue mod 16: lanes left to the narrow accesses next to lanes of the wide ones)."""
    ev = evaluator("89_cumsum")
    body = ev.body_of(0)
    load = next(i for i, x in enumerate(body.instructions) if x.mnemonic == "global_load_dword")
    new = widen_loads(body, load)
    assert "global_load_dwordx4 v[18:21], v[6:7], off offset:-8" in code(new)
    cand = ev.evaluate(0, new.edit(body, "widen_loads", "x"), body_window(ev), agent="test", step=1)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()
    body1 = ev.body_of(cand.id)
    store = next(i for i, x in enumerate(body1.instructions) if x.mnemonic == "global_store_dword")
    new = widen_stores(body1, store)
    assert any(x.startswith("global_store_dwordx4 v[8:9], v[") and x.endswith("off offset:-8") for x in code(new))
    cand2 = ev.evaluate(cand.id, new.edit(body1, "widen_stores", "x"), body_window(ev, cand.id), agent="test", step=2)
    assert cand2.status == "verified" and cand2.verdict["kind"] == "equivalent", cand2.summary()
    lines = lambda c: (c.profile or ev.baseline.profile.estimate).terms["vmem_path"]
    assert lines(cand2) < lines(cand) < lines(ev.lineage.get(0))


def loop_load(k: int) -> list[str]:
    """Element e + k of the iteration (e = s7 + 4 x lane) loaded into v1`k` (0 outside the bounds)."""
    mask = "vcc" if k == 0 else f"s[{10 + 2 * k}:{11 + 2 * k}]"
    cmp_ = ["v_cmp_gt_i32_e32 vcc, s6, v30"] if k == 0 else [f"v_add_u32_e32 v3, {k}, v30",
                                                            f"v_cmp_gt_i32_e64 {mask}, s6, v3"]
    return [*cmp_, f"v_mov_b32_e32 v{10 + k}, 0", f"s_and_saveexec_b64 s[8:9], {mask}", f"s_cbranch_execz .Ll{k}",
            f"global_load_dword v{10 + k}, v[4:5], off" + (f" offset:{4 * k}" if k else ""),
            f".Ll{k}:", "s_or_b64 exec, exec, s[8:9]"]


STEP = "s_mov_b64 s[20:21], 0x400"  # 64 lanes x 16 bytes per iteration
LOOP = [*PROLOGUE, STEP, "s_mov_b32 s7, 0", "v_mov_b32_e32 v16, 0", ".Lloop:", "v_add_u32_e32 v30, s7, v1",
        *(x for k in range(4) for x in loop_load(k)), "s_waitcnt vmcnt(0)",
        "v_add_f32_e32 v14, v10, v11", "v_add_f32_e32 v15, v12, v13", "v_add_f32_e32 v16, v16, v14",
        "v_add_f32_e32 v16, v16, v15", "v_lshl_add_u64 v[4:5], v[4:5], 0, s[20:21]", "s_addk_i32 s7, 0x100",
        "s_cmp_lt_i32 s7, s6", "s_cbranch_scc1 .Lloop", "global_store_dword v[4:5], v16, off", "s_endpgm"]


def widened_loop(lines: list[str]):
    b = body_of(lines, **POINTER)
    return widen_loads(b, next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword"))


def test_masked_loads_in_a_loop_widen_within_the_iteration():
    new = widened_loop(LOOP)
    assert new is not None and new.no_worse(body_of(LOOP, **POINTER))
    c = code(new)
    [wide] = [x for x in c if x.startswith("global_load_dwordx4")]
    assert c.index(".Lloop:") < c.index(wide) < c.index("s_waitcnt vmcnt(0)")
    # F is recomputed in every iteration (the compares of the later masks copied before the first region)
    [fmask] = {x.split()[1].rstrip(",") for x in c if x.startswith("s_and_b64")}
    assert c.index(".Lloop:") < min(c.index(x) for x in c if x.startswith("s_and_b64"))
    assert sum(x.startswith("s_andn2_b64") and x.endswith(fmask) for x in c) == 4
    assert not any(x.startswith("v_cmp_eq_u32") for x in c)  # base and step 16-byte aligned: proved


def test_in_a_loop_an_unknown_step_is_checked_per_lane():
    lines = [x if x != STEP else "s_load_dwordx2 s[20:21], s[0:1], 0x18" for x in LOOP]  # not a buffer
    c = code(widened_loop(lines))
    assert "v_and_b32_e32 v" in " ".join(c) and any(x.startswith("v_cmp_eq_u32_e64") and ", 0, v" in x for x in c)


@pytest.mark.parametrize("after, insert", [
    (".Ll1:", "v_lshl_add_u64 v[4:5], v[4:5], 0, 0"),       # the address written inside the iteration
    (".Ll1:", "global_store_dword v[4:5], v0, off offset:64"),  # a store between two loads
    (".Ll2:", "s_barrier"),
    ("global_load_dword v10, v[4:5], off", None),  # offsets 4..16 of a 16-byte aligned address: misaligned
])
def test_in_a_loop_it_refuses_what_it_refuses_outside(after, insert):
    lines = list(LOOP)
    if insert is None:
        lines[lines.index(after)] = after + " offset:16"
    else:
        lines.insert(lines.index(after) + 2, insert)  # after the region's restore
    assert widened_loop(lines) is None


def test_accesses_of_different_iterations_are_left_alone():
    region = loop_load(3)
    lines = [x for x in LOOP if x not in region]  # the fourth load after the loop
    at = lines.index("global_store_dword v[4:5], v16, off")
    lines[at:at] = ["v_add_u32_e32 v30, s7, v1", *region, "s_waitcnt vmcnt(0)", "v_add_f32_e32 v16, v16, v13"]
    lines[lines.index("v_add_f32_e32 v15, v12, v13")] = "v_add_f32_e32 v15, v12, v12"
    assert widened_loop(lines) is None


# Lane l's element is l (a dword stride): addresses are dword aligned, not 8- or 16-byte aligned.
DWORD_PROLOGUE = [x if x != "v_lshlrev_b32_e32 v1, 2, v0" else "v_mov_b32_e32 v1, v0" for x in PROLOGUE]
THREE = [*DWORD_PROLOGUE, *(x for k in range(3) for x in masked_load(k, 10 + k)), "s_waitcnt vmcnt(0)",
         "v_add_f32_e32 v14, v10, v11", "v_add_f32_e32 v14, v14, v12",
         "v_mov_b32_e32 v16, 0", "global_store_dword v[16:17], v14, off", "s_endpgm"]


def test_three_masked_loads_become_one_dwordx3_that_needs_dword_alignment_only():
    """A multi-dword access needs a dword-aligned address (the hardware ignores its two low bits), so a
    dwordx3 at a dword stride needs no per-lane check; x2 or x4 there would."""
    b = body_of(THREE, **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword")
    new = widen_loads(b, first)
    assert new is not None and new.no_worse(b)
    c = code(new)
    [wide] = [x for x in c if x.startswith("global_load_dwordx3")]
    lo = int(wide.split()[1].split(":")[0][2:])
    assert wide == f"global_load_dwordx3 v[{lo}:{lo + 2}], v[4:5], off" and lo % 2 == 0
    assert not any(x.startswith("v_cmp_eq_u32") for x in c)
    assert sum(x.startswith("global_load_dword ") for x in c) == 3  # kept for the lanes outside F
    four = body_of([*DWORD_PROLOGUE, *(x for k in range(4) for x in masked_load(k, 10 + k)), "s_endpgm"], **POINTER)
    c4 = code(widen_loads(four, next(i for i, x in enumerate(four.instructions) if x.mnemonic == "global_load_dword")))
    assert any(x.startswith("global_load_dwordx4") for x in c4) and any(x.startswith("v_cmp_eq_u32") for x in c4)


def one_exec(between: str | None = None, base: str = "v[4:5]") -> list[str]:
    """An older load (v20), then three adjacent loads under one EXEC in one block; a wait for the older load
    alone (three younger loads), then one for all. `between` goes between the first two of the three."""
    loads = [f"global_load_dword v{10 + k}, {base}, off" + (f" offset:{4 * k}" if k else "") for k in range(3)]
    return [*DWORD_PROLOGUE, "global_load_dword v20, v[4:5], off offset:256",
            "v_mov_b32_e32 v10, 0", "v_mov_b32_e32 v11, 0", "v_mov_b32_e32 v12, 0",
            "v_cmp_gt_i32_e32 vcc, s6, v1", "s_and_saveexec_b64 s[8:9], vcc",
            loads[0], *([between] if between else []), *loads[1:], "s_or_b64 exec, exec, s[8:9]",
            "s_waitcnt vmcnt(3)", "v_mov_b32_e32 v21, v20",
            "s_waitcnt vmcnt(0)", "v_add_f32_e32 v14, v10, v11", "v_add_f32_e32 v14, v14, v12",
            "v_add_f32_e32 v14, v14, v21", "v_mov_b32_e32 v16, 0", "global_store_dword v[16:17], v14, off", "s_endpgm"]


def wait_for_older_load(c: list[str]) -> str:
    """In `one_exec`'s code, the wait before the older load's value is read."""
    return c[c.index("v_mov_b32_e32 v21, v20") - 1]


def test_loads_under_one_exec_become_one_wide_load_and_the_waits_are_recounted():
    """The same lanes run the three loads (nothing between writes EXEC), so one dwordx3 replaces them where the
    first was; the wait for the older load counted three younger loads, now one."""
    b = body_of(one_exec(), **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_load_dword" and "offset:256" not in
                 x.text())
    new = widen_loads(b, first)
    assert new is not None and new.no_worse(b)
    c = code(new)
    [wide] = [x for x in c if x.startswith("global_load_dwordx3")]
    lo = int(wide.split()[1].split(":")[0][2:])
    assert [x for x in c if x.startswith("global_load")] == ["global_load_dword v20, v[4:5], off offset:256", wide]
    assert c.index("s_and_saveexec_b64 s[8:9], vcc") < c.index(wide) < c.index("s_or_b64 exec, exec, s[8:9]")
    assert f"v_mov_b32_e32 v{lo + 2}, 0" in c and f"v_add_f32_e32 v14, v14, v{lo + 2}" in c  # the values moved
    assert wait_for_older_load(c) == "s_waitcnt vmcnt(1)"


@pytest.mark.parametrize("between", [
    "global_store_dword v[4:5], v0, off offset:64",   # memory written between two of the loads
    "s_mov_b64 exec, -1",                             # EXEC written
    "v_lshl_add_u64 v[4:5], v[4:5], 0, 4",            # the address written
    "v_mov_b32_e32 v13, v12",                         # the third value read before its load
])
def test_loads_under_one_exec_are_left_alone_when_something_between_depends_on_them(between):
    b = body_of(one_exec(between), **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.text().startswith("global_load_dword v10,"))
    assert widen_loads(b, first) is None


def test_widen_all_loads_widens_every_group():
    lines = one_exec()
    k = lines.index("s_or_b64 exec, exec, s[8:9]")
    lines[k:k] = [f"global_load_dword v{30 + n}, v[6:7], off" + (f" offset:{4 * n}" if n else "") for n in range(3)]
    lines[lines.index("s_waitcnt vmcnt(3)")] = "s_waitcnt vmcnt(6)"
    lines.insert(lines.index("v_cmp_gt_i32_e32 vcc, s6, v1"), "v_lshl_add_u64 v[6:7], v[1:2], 2, s[2:3]")
    b = body_of(lines, **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.text().startswith("global_load_dword v10,"))
    one, every = code(widen_loads(b, first)), code(widen_all_loads(b, first))
    assert sum(x.startswith("global_load_dwordx3") for x in one) == 1
    assert [x.split(",")[1].strip() for x in every if x.startswith("global_load_dwordx3")] == ["v[4:5]", "v[6:7]"]
    assert wait_for_older_load(every) == "s_waitcnt vmcnt(2)"


def one_block_stores(between: str | None = None) -> list[str]:
    """Four values computed and stored one after another to the consecutive dwords at x[4 x lane] under one EXEC
    (a versioned fast path's form); `between` goes right after the first store."""
    lines = list(PROLOGUE)
    for k in range(4):
        lines += [f"v_add_u32_e32 v{10 + k}, {k}, v0",
                  "global_store_dword v[4:5], v10, off" if k == 0 else f"global_store_dword v[4:5], v{10 + k}, off offset:{4 * k}"]
        if k == 0 and between:
            lines.append(between)
    return [*lines, "s_endpgm"]


def test_stores_under_one_exec_become_one_wide_store_where_the_last_was():
    b = body_of(one_block_stores(), **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_store_dword")
    new = widen_stores(b, first)
    assert new is not None and new.no_worse(b)
    c = code(new)
    [wide] = [x for x in c if x.startswith("global_store")]
    lo = int(wide.split(",")[1].strip()[2:].split(":")[0])
    assert wide == f"global_store_dwordx4 v[4:5], v[{lo}:{lo + 3}], off" and c[-2:] == [wide, "s_endpgm"]
    assert [x for x in c if x.startswith("v_add_u32")] == [f"v_add_u32_e32 v{lo + k}, {k}, v0" for k in range(4)]


@pytest.mark.parametrize("between", [
    "global_load_dword v20, v[4:5], off offset:64",   # global memory read between two of the stores
    "s_mov_b64 exec, -1",                             # EXEC written
    "v_lshl_add_u64 v[4:5], v[4:5], 0, 4",            # the address written
    "global_store_dword v[6:7], v0, off",             # another store: a reader could tell their order
])
def test_stores_under_one_exec_are_left_alone_when_moving_them_could_be_seen(between):
    b = body_of(one_block_stores(between), **POINTER)
    first = next(i for i, x in enumerate(b.instructions) if x.mnemonic == "global_store_dword")
    assert widen_stores(b, first) is None
