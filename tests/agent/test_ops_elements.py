"""repack_elements: a block's elements paired whatever was packed before. `unpacked` splits a packed FP32 op into
its two halves (selects, negations, constants, the order that keeps each half's reads) or refuses; two elements
left unpaired, one partly packed within itself, with a packed chain of two other elements between them, are
unpacked, ordered pairwise and packed into fewer VALU instructions; elements computing different things are left
alone; 29_Softplus versioned from its first region so through every gate, faster at its bench shape."""
from __future__ import annotations

import pytest

from asmevo.agent.body import make_item
from asmevo.agent.ops_elements import element_tags, repack_elements, unpacked
from asmevo.agent.ops_version import version_full_exec
from agenttools import body_of, code, evaluated, evaluator, first_guard


def halves(text: str) -> list[str] | None:
    return unpacked(make_item(text).ins)


@pytest.mark.parametrize("packed, expected", [
    ("v_pk_add_f32 v[14:15], v[8:9], v[10:11] neg_lo:[0,1] neg_hi:[0,1]",
     ["v_sub_f32_e32 v14, v8, v10", "v_sub_f32_e32 v15, v9, v11"]),
    ("v_pk_mul_f32 v[4:5], v[2:3], s[4:5] op_sel_hi:[1,0]", ["v_mul_f32_e64 v4, v2, s4", "v_mul_f32_e64 v5, v3, s4"]),
    ("v_pk_fma_f32 v[4:5], v[4:5], s[4:5], v[14:15] neg_lo:[1,0,0] neg_hi:[1,0,0]",
     ["v_fma_f32 v4, -v4, s4, v14", "v_fma_f32 v5, -v5, s5, v15"]),
    ("v_pk_add_f32 v[6:7], v[4:5], 1.0 op_sel_hi:[1,0] neg_lo:[0,1] neg_hi:[0,1]",
     ["v_add_f32_e64 v6, v4, -1.0", "v_add_f32_e64 v7, v5, -1.0"]),
    ("v_pk_mov_b32 v[8:9], v[14:15], v[14:15] op_sel:[1,0]", ["v_mov_b32_e32 v8, v15", "v_mov_b32_e32 v9, v14"]),
    # the high half reads the low half's destination: it goes first
    ("v_pk_add_f32 v[4:5], v[4:5], v[6:7] op_sel_hi:[0,1]", ["v_add_f32_e32 v5, v4, v7", "v_add_f32_e32 v4, v4, v6"]),
])
def test_a_packed_op_splits_into_its_halves(packed, expected):
    assert halves(packed) == expected


@pytest.mark.parametrize("packed", [
    "v_pk_add_f32 v[4:5], v[4:5], v[6:7] clamp",                               # a modifier with no unpacked twin here
    "v_pk_add_f32 v[6:7], v[4:5], 1.0",                  # the high half reads a constant's high dword
    # -1/(2 pi) is no inline constant
    "v_pk_mul_f32 v[6:7], v[4:5], 0.15915494 op_sel_hi:[1,0] neg_lo:[0,1] neg_hi:[0,1]",
    "v_pk_add_f32 v[4:5], v[4:5], v[8:9] op_sel:[1,0] op_sel_hi:[0,1]",     # each half reads the other's result
    "v_pk_mul_f32 v[4:5], s[2:3], s[2:3] op_sel:[0,1]",                       # the low half would read two SGPRs
])
def test_unpacking_refuses(packed):
    assert halves(packed) is None


LOADS = ["v_lshlrev_b32_e32 v0, 4, v0", "v_mov_b32_e32 v1, 0", "global_load_dword v10, v[0:1], off",
         "global_load_dword v11, v[0:1], off offset:4", "global_load_dwordx2 v[12:13], v[0:1], off offset:8",
         "s_waitcnt vmcnt(0)"]


def element(src: str, dst: str, packed_square: bool) -> list[str]:
    """One element's computation from `src` into `dst` through the temporaries v2, v3, v6, v7; with `packed_square`
    its two squares are one packed op reading `src` in both halves (the pair around it holds another element)."""
    squares = (["v_pk_mul_f32 v[2:3], v[10:11], v[10:11] op_sel_hi:[0,0]"] if packed_square else
               [f"v_mul_f32_e32 v2, {src}, {src}", f"v_mul_f32_e32 v3, {src}, {src}"])
    return [*squares, "v_mul_f32_e32 v6, v2, v3", "v_exp_f32_e32 v6, v6", f"v_fma_f32 v2, v6, v2, {src}",
            f"v_mul_f32_e32 v7, v6, {src}", f"v_add_f32_e32 {dst}, v2, v7"]


def kernel(last: list[str]) -> list[str]:
    """Element 0 (v10) partly packed within itself, elements 1 and 2 (v[12:13]) packed together, then `last`
    (element 3's computation, from v11)."""
    middle = ["v_pk_mul_f32 v[14:15], v[12:13], v[12:13]", "v_pk_add_f32 v[16:17], v[14:15], v[12:13]"]
    stores = ["global_store_dword v[0:1], v20, off", "global_store_dword v[0:1], v16, off offset:4",
              "global_store_dword v[0:1], v17, off offset:8", "global_store_dword v[0:1], v23, off offset:12"]
    return [*LOADS, *element("v10", "v20", True), *middle, *last, *stores, "s_endpgm"]


def valu(lines: list[str]) -> int:
    return sum(x.startswith("v_") for x in lines)


def test_packed_halves_are_tagged_with_their_own_elements():
    b = body_of(kernel(element("v11", "v23", False)))
    blk = b.cfg.blocks[b.cfg.block_of[0]]
    tags = element_tags(b, blk.start, blk.end)
    middle = next(k for k, x in enumerate(b.instructions) if x.text().startswith("v_pk_add_f32 v[16:17]"))
    square = next(k for k, x in enumerate(b.instructions) if x.text().startswith("v_pk_mul_f32 v[2:3]"))
    assert len(tags[middle][0]) == len(tags[middle][1]) == 1 and tags[middle][0] != tags[middle][1]
    assert tags[square][0] == tags[square][1] and len(tags[square][0]) == 1


def test_unevenly_packed_elements_pair_and_pack():
    b = body_of(kernel(element("v11", "v23", False)))
    new = repack_elements(b, 2)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert valu(c) == valu(code(b)) - 5    # 6 + 7 ops of elements 0 and 3: 6 packed pairs and 2 exponentials
    packed = [x for x in c if x.startswith(("v_pk_mul_f32", "v_pk_fma_f32", "v_pk_add_f32"))]
    assert len(packed) == 6 + 2            # the two chains' ops and the middle chain, still packed
    assert sum("v[10:11], v[10:11]" in x for x in packed) == 2     # element 0's and 3's squares, in pairs
    exps = [n for n, x in enumerate(c) if x.startswith("v_exp_f32")]
    assert len(exps) == 2 and exps[1] - exps[0] <= 2                    # the two chains run side by side


def test_elements_computing_different_things_are_left_alone():
    other = ["v_add_f32_e32 v2, v11, v11", "v_exp_f32_e32 v3, v2", "v_sub_f32_e32 v6, v3, v11", "v_log_f32_e32 v7, v6",
             "v_max_f32_e32 v2, v7, v3", "v_cvt_i32_f32_e32 v3, v2", "v_cvt_f32_i32_e32 v23, v3"]
    b = body_of(kernel(other))
    assert repack_elements(b, 2) is None


def test_softplus_elements_left_unpaired_pair_through_every_gate():
    """29_Softplus versioned from its first region: `pack_elements` pairs the middle two elements (the copies next
    to each other), `repack_elements` the outer two; verified on every verify shape and the held-out one."""
    ev = evaluator("29_Softplus", gpu="mi308x")
    k0 = ev.body_of(0)
    versioned = version_full_exec(k0, first_guard(k0))
    cand = evaluated(ev, k0, versioned, "version_full_exec")
    assert ev.lineage.get(0).cycles / cand.cycles > 1.3     # 1.214x with pack_elements alone (the 9797e7f record)
