"""interleave_elements / pack_elements: two copies of one computation in a block (the same code on two
elements, reusing temporaries) are ordered pairwise with the second's values renamed apart, then packed;
copies a compiler scheduled a little differently still pair up; a division's VCC is freed so two divisions
overlap; refusals where the second copy depends on the first."""
from __future__ import annotations

from asmevo.agent.ops_interleave import copies, interleave_elements, pack_elements
from agenttools import body_of, code

PROLOGUE = ["v_cvt_f32_u32_e32 v10, v0", "v_cvt_f32_i32_e32 v11, v0", "v_mov_b32_e32 v4, 0", "v_mov_b32_e32 v5, 0"]


def copy(src: str, dst: str, divide: bool = False) -> list[str]:
    """One element's computation from `src` into `dst`, through the temporaries v2, v3, v6 (and VCC)."""
    return ["v_mul_f32_e32 v2, {0}, {0}".format(src), f"v_add_f32_e32 v3, v2, {src}", "v_exp_f32_e32 v3, v3",
            f"v_fma_f32 v2, v3, v2, {src}", "v_mul_f32_e32 v6, v2, v3",
            *(["v_div_scale_f32 v7, vcc, v6, v6, 1.0", "v_div_fmas_f32 v6, v7, v6, v2"] if divide else []),
            f"v_add_f32_e32 {dst}, v6, v2"]


def kernel(second_src: str = "v11", divide: bool = False, swap: bool = False) -> list[str]:
    second = copy(second_src, "v21", divide)
    if swap:  # the compiler ordered the second copy's last two instructions the other way (the shapes matter here)
        second[4], second[5] = second[5], second[4]
    return [*PROLOGUE, *copy("v10", "v20", divide), *second, "global_store_dwordx2 v[4:5], v[20:21], off", "s_endpgm"]


def first_mul(body) -> int:
    return next(i for i, x in enumerate(body.instructions) if x.mnemonic == "v_mul_f32_e32")


def test_two_copies_are_ordered_pairwise_with_the_second_renamed_apart():
    b = body_of(kernel())
    new = interleave_elements(b, first_mul(b))
    assert new is not None and new.no_worse(b)
    c = [x for x in code(new) if not x.startswith("s_nop")]
    body = c[len(PROLOGUE):c.index("global_store_dwordx2 v[4:5], v[20:21], off")]
    assert [x.split()[0] for x in body] == [m for x in copy("v10", "v20") for m in [x.split()[0]] * 2]
    assert body[0::2] == copy("v10", "v20")                     # the first copy as it was
    second = body[1::2]
    assert second[0].startswith("v_mul_f32_e32") and second[0].endswith("v11, v11") and second[-1].startswith(
        "v_add_f32_e32 v21,")
    assert not {x.split()[1] for x in second} & {"v2,", "v3,", "v6,"}     # its temporaries moved


def test_interleaved_copies_pack():
    b = body_of(kernel())
    c = code(pack_elements(b, first_mul(b)))
    assert {x.split()[0] for x in c if x.startswith("v_pk_")} >= {"v_pk_mul_f32", "v_pk_add_f32", "v_pk_fma_f32"}
    assert sum(x.startswith("v_") for x in c) < sum(x.startswith("v_") for x in code(b))


def test_copies_scheduled_a_little_differently_still_pair():
    b = body_of(kernel(swap=True))
    found = copies(b, first_mul(b))
    assert found is not None
    first, second, pairs = found
    assert len(first) == len(second) == 6 and len(pairs) == 5


def test_a_division_frees_vcc_so_both_copies_divide_together():
    b = body_of(kernel(divide=True))
    c = [x for x in code(interleave_elements(b, first_mul(b))) if not x.startswith("s_nop")]
    scales = [x for x in c if x.startswith("v_div_scale_f32")]
    assert len(scales) == 2 and not any(", vcc," in x for x in scales)
    for x in (n for n, x in enumerate(c) if x.startswith("v_div_fmas_f32")):
        assert c[x - 1].startswith("s_mov_b64 vcc, s[")
    assert c.index(scales[1]) < c.index(next(x for x in c if x.startswith("v_div_fmas_f32")))


def test_a_second_copy_that_reads_the_first_ones_result_is_left_alone():
    b = body_of(kernel(second_src="v20"))
    assert interleave_elements(b, first_mul(b)) is None
