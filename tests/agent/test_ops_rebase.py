"""rebase_row_addresses: rows X + c of one matrix addressed by a 64-bit multiply each, tested once for no wrap
(and X | c being X + c), then each row's address from the previous one by a uniform delta: the group recognised,
the layout, equivalence on the emulator where the test passes and where it fails (X with bits of an OR's c),
refusals; 9_Tall_skinny's epilogue through every gate."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.agent.gates import Evaluator
from asmevo.agent.ops_rebase import rebase_row_addresses, row_group
from asmevo.launches import launch_from_dict
from agenttools import body_of, code, evaluated, evaluator

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

OFFSETS = [("", 0), ("v_or_b32_e32", 1), ("v_or_b32_e32", 2), ("v_add_u32_e32", 8), ("v_add_u32_e32", 9)]


def row(offset: str, c: int, between: list[str] = ()) -> list[str]:
    """Store lane value v20 at y[(X + c) * N + col]: X in v3, N in s6, the column's address B in v[4:5]."""
    y = "v3" if not offset else "v10"
    return [*([f"{offset} v10, {c}, v3"] if offset else []), f"v_mad_i64_i32 v[8:9], s[12:13], s6, {y}, 0",
            *between, "v_lshl_add_u64 v[8:9], v[8:9], 2, v[4:5]", "global_store_dword v[8:9], v20, off"]


def kernel(between: dict[int, list[str]] | None = None, after: list[str] = ()) -> list[str]:
    """Rows X + c (c in OFFSETS) of y, X = X0 + 16 * (lane >> 5) read from the kernel arguments, col = lane & 31."""
    lines = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dwordx2 s[6:7], s[0:1], 0x10",
             "v_and_b32_e32 v6, 31, v0", "v_mov_b32_e32 v7, 0", "v_lshrrev_b32_e32 v1, 5, v0",
             "v_cvt_f32_u32_e32 v20, v0", "s_waitcnt lgkmcnt(0)", "v_lshl_add_u64 v[4:5], v[6:7], 2, s[2:3]",
             "v_lshl_add_u32 v3, v1, 4, s7"]
    for n, (offset, c) in enumerate(OFFSETS):
        lines += row(offset, c, (between or {}).get(n, []))
    return [*lines, *after, "s_endpgm"]


def first_mad(body) -> int:
    return next(k for k, x in enumerate(body.instructions) if x.mnemonic == "v_mad_i64_i32")


def test_the_rows_are_grouped_and_the_later_ones_rebased():
    b = body_of(kernel())
    group = row_group(b, first_mad(b))
    assert [(r.c, r.ored) for r in group.rows] == [(0, False), (1, True), (2, True), (8, False), (9, False)]
    assert (group.x, group.n, group.shift, group.b) == ("v3", "s6", 2, "v[4:5]")
    assert row_group(b, first_mad(b) + 4) is None       # a later multiply of the group heads none
    c = code(rebase_row_addresses(b, first_mad(b)))
    branch = c.index("s_cbranch_scc1 .Lrows_slow0")
    fast = c[branch + 1:c.index(".Lrows_slow0:")]
    f = fast[1].split()[1].rstrip(",")
    assert fast[:3] == ["v_mad_i64_i32 v[8:9], s[12:13], s6, v3, 0", f"v_lshl_add_u64 {f}, v[8:9], 2, v[4:5]",
                        f"global_store_dword {f}, v20, off"]
    adds = [x for x in fast if x.startswith("v_lshl_add_u64")][1:]
    assert len(adds) == 4 and all(x.startswith(f"v_lshl_add_u64 {f}, {f}, 0, s[") for x in adds)
    assert not any(x.startswith(("v_mad", "v_or", "v_add")) for x in fast[3:])
    # deltas 1, 1, 6, 1: two pairs, each (d * N) << 2; X < 2^31 - 9 and X & 3 = 0 tested
    test = c[:branch]
    assert sum(x.startswith("s_mul_hi_i32") for x in test) == 2 and "s_lshl_b64" in " ".join(test)
    assert any(x.endswith(", 0x7ffffff7") for x in test) and any(x.startswith("v_and_b32_e32") and ", 0x3, v3" in x
                                                                   for x in test)


@pytest.mark.parametrize("x0", [0, 1, 12])
def test_equivalent_on_the_emulator(x0):
    """X0 = 0 and 12 pass the test (X & 3 = 0); X0 = 1 fails it (X | 1 is X there), so the rows run as they were."""
    launch = launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "y", "dtype": "float32", "shape": [40 * 32], "init": "zeros"},
        {"buffer": "unused", "dtype": "float32", "shape": [1], "init": "zeros"},
        {"scalar": 32 + (x0 << 32), "dtype": "int64"}]}, label=f"x{x0}")
    co = asm("\n".join(f"  {ln}" for ln in kernel()), vgprs=32, sgprs=24, args=2)
    ev = Evaluator(co.path, [launch])
    body = ev.body_of(0)
    evaluated(ev, body, rebase_row_addresses(body, first_mad(body)), "rebase_row_addresses")


@pytest.mark.parametrize("change", [
    dict(between={2: ["v_add_u32_e32 v3, 1, v3"]}),                  # X changes between the rows
    dict(between={3: ["s_add_i32 s6, s6, 1"]}),                       # N changes
    dict(between={0: ["v_mov_b32_e32 v21, v8"]}),                     # T is read by another instruction
    dict(between={2: ["s_mov_b64 exec, s[14:15]"]}),                  # EXEC changes after the test
])
def test_refused(change):
    b = body_of(kernel(**change))
    assert rebase_row_addresses(b, first_mad(b)) is None


def test_tall_skinny_epilogue_through_every_gate():
    """9_Tall_skinny's epilogue stores 16 rows of a lane's column, each row's address by a 64-bit multiply: with its
    signed multiplies fused and its row masks versioned (`version_full_exec`), the rows rebase; faster at the bench
    shape on MI308X, verified on every verify shape and the held-out one."""
    from asmevo.agent.operators import OPERATORS, propose
    from asmevo.agent.search import heat_of, hot_sites, predict
    ev = evaluator("9_Tall_skinny_matrix_multiplication_", gpu="mi308x")
    cid = 0
    for name in ("fuse_signed_multiplies", "remove_redundant_copies", "version_full_exec"):   # the search's first
        body = ev.body_of(cid)
        heat = heat_of(body, ev.profile(cid), ev.lineage.get(cid).cycles)
        found = propose(body, hot_sites(body, heat, 64), tuple(op for op in OPERATORS if op.name == name))
        best = min(found, key=lambda q: predict(q.body, heat))
        cid = evaluated(ev, body, best.body, name, parent=cid).id
    body = ev.body_of(cid)
    rebased = evaluated(ev, body, rebase_row_addresses(body, first_mad_group(body)), "rebase_row_addresses", cid)
    assert ev.lineage.get(cid).cycles / rebased.cycles > 1.1


def first_mad_group(body) -> int:
    return next(k for k in range(len(body.instructions)) if row_group(body, k) is not None)
