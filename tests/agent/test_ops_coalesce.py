"""coalesce_copies: a value copied out of a register that dies at the copy lives in that register instead; the
renaming and deletion, tuples moving together, equivalence on the emulator, refusals (the source read after the
copy, an odd distance for a tuple, a value read across lanes, a masked copy whose value meets an older one), and
95_CrossEntropyLoss's online-softmax copies through every gate."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.agent.gates import Evaluator
from asmevo.agent.ops_coalesce import coalesce_copies, vector_copy
from asmevo.launches import launch_from_dict
from agenttools import body_of, code, evaluated, evaluator

sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
from emutools import asm  # noqa: E402

HEAD = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "v_cvt_f32_u32_e32 v1, v0", "v_lshlrev_b32_e32 v2, 3, v0",
        "v_mov_b32_e32 v3, 0", "s_waitcnt lgkmcnt(0)", "v_lshl_add_u64 v[2:3], v[2:3], 0, s[2:3]"]


def kernel(middle: list[str]) -> list[str]:
    """Lane l stores the pair v[6:7] at y[2l:2l+2]; `middle` computes it from v1 = float(l)."""
    return [*HEAD, *middle, "global_store_dwordx2 v[2:3], v[6:7], off", "s_endpgm"]


# The shape of 95_CrossEntropyLoss's loop: two results computed into v[10:11] while v[6:7] still holds an input
# of theirs, then copied into v[6:7] (a pair read whole afterwards).
PAIR = ["v_add_f32_e32 v6, 1.0, v1", "v_add_f32_e32 v7, 2.0, v1",
        "v_exp_f32_e32 v10, v6", "v_exp_f32_e32 v11, v7", "v_mul_f32_e32 v12, v6, v7",
        "v_add_f32_e32 v13, v6, v7", "v_mov_b32_e32 v6, v10", "v_mov_b32_e32 v7, v11",
        "v_pk_add_f32 v[6:7], v[6:7], v[12:13]"]
# v9 dies at the copy but is written again while the copied value lives: that later value moves out of the way.
EVICT = ["v_exp_f32_e32 v9, v1", "s_nop 0", "v_mov_b32_e32 v6, v9", "v_add_f32_e32 v9, 1.0, v1",
         "v_mul_f32_e32 v8, 2.0, v9", "v_mul_f32_e32 v6, v6, v8", "v_mov_b32_e32 v7, 0"]
SINGLE = ["v_exp_f32_e32 v9, v1", "s_nop 0", "v_mov_b32_e32 v6, v9", "v_mul_f32_e32 v6, v6, v6", "v_mov_b32_e32 v7, 0"]


def test_a_pair_is_written_where_it_was_computed():
    b = body_of(kernel(PAIR))
    first = next(k for k in range(len(b.instructions)) if vector_copy(b, k) is not None)
    assert vector_copy(b, first) == [(6, 10)]
    c = code(coalesce_copies(b, first))
    assert not any(x.startswith("v_mov_b32_e32 v6") or x.startswith("v_mov_b32_e32 v7") for x in c)
    assert "v_pk_add_f32 v[6:7], v[10:11], v[12:13]" in c      # the pair read from where it was computed


def test_a_single_value_is_renamed_alone():
    b = body_of(kernel(SINGLE))
    c = code(coalesce_copies(b, 8))
    assert "v_mul_f32_e32 v9, v9, v9" not in c            # v6's next value is in the stored pair: it stays
    assert "v_mul_f32_e32 v6, v9, v9" in c and "v_mov_b32_e32 v6, v9" not in c


def test_a_value_in_the_way_moves_to_a_free_register():
    b = body_of(kernel(EVICT))
    c = code(coalesce_copies(b, 8))
    add = next(x for x in c if x.startswith("v_add_f32_e32"))
    free = add.split()[1].rstrip(",")
    assert free not in ("v9", "v6", "v7", "v8") and f"v_mul_f32_e32 v8, 2.0, {free}" in c
    assert "v_mul_f32_e32 v6, v9, v8" in c and "v_mov_b32_e32 v6, v9" not in c


@pytest.mark.parametrize("middle", [PAIR, SINGLE, EVICT])
def test_equivalent_on_the_emulator(middle):
    launch = launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1], "args": [
        {"buffer": "y", "dtype": "float32", "shape": [128], "init": "zeros"}, {"scalar": 0, "dtype": "int64"}]},
        label="one")
    co = asm("\n".join(f"  {ln}" for ln in kernel(middle)), vgprs=16, sgprs=16, args=1)
    ev = Evaluator(co.path, [launch])
    body = ev.body_of(0)
    first = next(k for k in range(len(body.instructions)) if vector_copy(body, k) is not None)
    evaluated(ev, body, coalesce_copies(body, first), "coalesce_copies")


@pytest.mark.parametrize("middle", [
    # v10 is read after the copy: its value does not die there
    [*PAIR[:7], "v_add_f32_e32 v7, v10, v11", PAIR[8]],
    # the pair would move by an odd distance (v[6:7] -> v[11:12])
    ["v_exp_f32_e32 v11, v1", "v_exp_f32_e32 v12, v0", "v_mov_b32_e32 v6, v11", "v_mov_b32_e32 v7, v12"],
    # the copied value is read across lanes
    ["v_exp_f32_e32 v9, v1", "v_mov_b32_e32 v8, v9", "v_mov_b32_dpp v6, v8 row_shr:1 bound_ctrl:0",
     "v_mov_b32_e32 v7, 0"],
    # a masked copy: the stored value is the copy's in its lanes and the older one's in the others, and v8 holds
    # its own value where the older one lives
    ["v_mov_b32_e32 v6, 1.0", "v_exp_f32_e32 v8, v1", "v_cmp_gt_u32_e32 vcc, 5, v0", "s_and_saveexec_b64 s[4:5], vcc",
     "v_mov_b32_e32 v6, v8", "s_or_b64 exec, exec, s[4:5]", "v_mov_b32_e32 v7, 0"],
])
def test_refused(middle):
    b = body_of(kernel(middle))
    copies = [k for k in range(len(b.instructions)) if vector_copy(b, k) is not None]
    assert copies and all(coalesce_copies(b, k) is None for k in copies)


def test_cross_entropy_copies_through_every_gate():
    """95_CrossEntropyLoss's online logsumexp computes each chunk's exponentials into fresh registers while the
    rescale factors' inputs still occupy the pair the masked terms are added from, then copies them there: four
    VALU copies per iteration go; faster at the bench shape on MI308X, verified on every verify shape and the
    held-out one. The chain before it is the search's path to the fast iteration (`version_zero_selects` splits
    it off)."""
    ev = evaluator("95_CrossEntropyLoss", gpu="mi308x")
    from asmevo.agent.ops_zero_select import version_zero_selects
    body = ev.body_of(0)
    site = next(k for k in range(len(body.instructions)) if version_zero_selects(body, k) is not None)
    cid = evaluated(ev, body, version_zero_selects(body, site), "version_zero_selects").id
    body = ev.body_of(cid)
    copies = [k for k in range(len(body.instructions)) if vector_copy(body, k) is not None]
    found = {tuple(code(new)): new for k in copies if (new := coalesce_copies(body, k)) is not None}
    assert found
    best = min((evaluated(ev, body, new, "coalesce_copies", cid) for new in found.values()), key=lambda c: c.cycles)
    assert ev.lineage.get(cid).cycles / best.cycles > 1.01
