"""Production references on tiny inputs whose outputs are known by hand (the derivation beside each case).

The remaining families (paged and MLA decode, flash-attention forward, fused MoE, LoRA, the int8/fp8 GEMMs'
shuffled layouts) are pinned by their upstream binaries: every verify and held-out shape of K0 must match the
reference on the emulator (test_production_suites.py), and the shuffles have hand-derived tests there.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from asmevo.suites import load_suite

SUITES = {name: load_suite(name) for name in ("aiter", "triton")}
PHI_1 = 0.8413447460685429  # standard normal CDF at 1 (tables): exact GELU(1)


def bf16(rows) -> np.ndarray:
    """bfloat16 bits of values exact in bfloat16."""
    bits = np.array(rows, dtype=np.float32).view(np.uint32)
    assert not (bits & 0xFFFF).any(), "not exact in bfloat16"
    return (bits >> 16).astype(np.uint16)


def decoded(arr: np.ndarray, dtype: str) -> np.ndarray:
    return (arr.astype(np.uint32) << 16).view(np.float32) if dtype == "bfloat16" else arr


def f32(rows) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


def zeros(shape, dtype=np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


GATING = np.full((1, 128), -1.0, np.float32)
GATING[0, 10:18] = 1.0
GATING[0, 12] = 1 + math.log(2)
SCALE = np.ones(128, np.float32)
SCALE[12] = 0.5

# (suite, problem): (buffers, scalars, {output: (dtype, expected)}, exact?)
CASES = {
    # mean of squares 4 and 1: rows scale by 1/2 and 1 (eps 1e-6 vanishes in the bf16 rounding)
    ("triton", "vllm_rms_norm"): (
        {"x": bf16([[2, -2], [1, 1]]), "w": bf16([1, 2]), "y": zeros((2, 2), np.uint16)}, [2, 2, 2, 1e-6],
        {"y": ("bfloat16", [[1, -2], [1, 2]])}, True),
    # res_out = residual + delta = (2, -2), mean square 4; y = res_out / 2 * w
    ("triton", "vllm_add_rmsnorm"): (
        {"residual": bf16([[1, -3]]), "delta": bf16([[1, 1]]), "w": bf16([1, 0.5]), "y": zeros((1, 2), np.uint16),
         "res_out": zeros((1, 2), np.uint16)}, [1e-6, 2, 2, 2, 2, 2],
        {"y": ("bfloat16", [[1, -0.5]]), "res_out": ("bfloat16", [[2, -2]])}, True),
    # NeoX halves x1 = (1, 2), x2 = (3, 4) turned by 90 degrees (pair 0) and 0 degrees (pair 1):
    # (x1 cos - x2 sin, x1 sin + x2 cos) = ((-3, 2), (1, 4)); cos/sin rows past seqlen are unused
    ("triton", "vllm_rotary"): (
        {"out": zeros((1, 1, 1, 4), np.uint16), "x": bf16([[[[1, 2, 3, 4]]]]), "cos": bf16([[0, 1], [9, 9]]),
         "sin": bf16([[1, 0], [9, 9]])}, [0, 1, 4, 2, 4, 4, 4, 4, 4, 4],
        {"out": ("bfloat16", [[[[-3, 2, 1, 4]]]])}, True),
    # gelu(0) = 0, gelu(1) = PHI(1) = 0.84134 rounds to the bf16 0.83984375 first, times 2 exactly
    ("triton", "sglang_gelu_and_mul"): (
        {"out": zeros((1, 2), np.uint16), "x": bf16([[0, 1, 5, 2]])}, [],
        {"out": ("bfloat16", [[0, 2 * 0.83984375]])}, True),
    # limit 7: g = min((0, 10), 7) = (0, 7), u = clip((3, -9)) = (3, -7); silu(7) = 7 / (1 + e^-7)
    ("triton", "sglang_silu_and_mul_clamp"): (
        {"x": bf16([[0, 10, 3, -9]]), "out": zeros((1, 2), np.uint16)}, [2, 4, 2, 7.0],
        {"out": ("bfloat16", [[0, -7 * 7 / (1 + math.exp(-7))]])}, False),
    # experts 10..17 lead (12 by ln 2 more); ties go to the lower id; softmax over the top 8: 2/9 for 12 and
    # 1/9 for the others, then expert 12's scale 0.5
    ("triton", "sglang_gemma4_routing"): (
        {"gating": GATING, "expert_scale": SCALE, "topk_weights": zeros((1, 8)), "topk_ids": zeros((1, 8), np.int32)},
        [128], {"topk_weights": ("float32", [[1 / 9] * 8]),
                "topk_ids": ("int32", [[12, 10, 11, 13, 14, 15, 16, 17]])}, False),
    # softmax(0, ln 3, ln 2, ln 3) = (1, 3, 2, 3) / 9; top 2 = experts 1 and 3 (tie to the lower id first),
    # renormalised to 1/2 each; the padding row stays zero
    ("aiter", "topksoftmax"): (
        {"topk_ids": zeros((2, 2), np.int32), "topk_weights": zeros((2, 2)),
         "gating": f32([[0, math.log(3), math.log(2), math.log(3)]])},
        [{"batch": 1, "expert": 4, "topk": 2, "renormalize": 1, "out_stride": 8}],
        {"topk_weights": ("float32", [[0.5, 0.5], [0, 0]]), "topk_ids": ("int32", [[1, 3], [0, 0]])}, False),
    # residual_out = (1, 3): mean 2, variance 1; (-1, 1) / sqrt(1 + 1e-5) * (2, 1) + (0.5, 0) = (-1.49999, 0.999995),
    # which bf16 truncation (toward zero) makes -1.4921875 and 0.99609375
    ("aiter", "layer_norm"): (
        {"out": zeros((1, 2), np.uint16), "x": bf16([[1, 3]]), "weight": bf16([2, 1]), "bias": bf16([0.5, 0]),
         "residual_out": zeros((1, 2), np.uint16), "residual_in": bf16([[0, 0]])}, [{"epsilon": 1e-5}],
        {"out": ("bfloat16", [[-1.4921875, 0.99609375]]), "residual_out": ("bfloat16", [[1, 3]])}, True),
    # D = A @ B^T = (1*3 + 2*4, 1*5 + 2*6)
    ("aiter", "bf16gemm"): (
        {"D": zeros((1, 2)), "A": bf16([[1, 2]]), "B": bf16([[3, 4], [5, 6]])}, [{}], {"D": ("float32", [[11, 17]])},
        True),
    # acc = (3, -4) @ [[1, 2], [3, 4]] = (-9, -10); c = scale_b * (scale_a * acc) = (2 * 0.5 * -9, 0.25 * 0.5 * -10)
    ("triton", "vllm_scaled_mm_int8"): (
        {"a": np.array([[3, -4]], np.int8), "b": np.array([[1, 2], [3, 4]], np.int8), "scale_a": f32([[0.5]]),
         "scale_b": f32([[2], [0.25]]), "c": zeros((1, 2), np.uint16)}, [1, 2, 2, 2, 2, 2],
        {"c": ("bfloat16", [[-9, -1.25]])}, True),
    # token 0 (before prefill_tokens_with_context = 1): head 0 merges equal LSEs -> the mean, LSE 0 + ln 2;
    # head 1's prefix is empty (+inf) -> the suffix; token 1 copies the suffix
    ("triton", "vllm_merge_attn_states"): (
        {"out": zeros((2, 2, 2), np.uint16), "out_lse": zeros((2, 2)),
         "prefix_out": bf16([[[1, 1], [8, 8]], [[5, 5], [5, 5]]]), "prefix_lse": f32([[0, 0], [np.inf, 0]]),
         "suffix_out": bf16([[[3, -1], [2, 4]], [[7, 7], [6, 6]]]), "suffix_lse": f32([[0, 9], [1, 3]])},
        [2, 2, 2, 2, 2, 1],
        {"out": ("bfloat16", [[[2, 0], [2, 4]], [[7, 7], [6, 6]]]),
         "out_lse": ("float32", [[math.log(2), 9], [1, 3]])}, False),
    # seq_len 2 over 4 splits of ceil(2/4) = 1 token: splits 0 and 1 live (LSE 0 and ln 3, weights 1 and 3),
    # splits 2 and 3 hold garbage that must be ignored; o = (1*(1, 0) + 3*(0, 1)) / 4, lse = ln 4
    ("triton", "vllm_decode_attention_stage2"): (
        {"mid_o": f32([[[[1, 0, 0], [0, 1, math.log(3)], [100, 100, 50], [-100, 7, 60]]]]),
         "o": zeros((1, 1, 2), np.uint16), "lse": zeros((1, 1)), "seq_lens": np.array([2], np.int32)},
        [12, 12, 3, 12, 2, 1], {"o": ("bfloat16", [[[0.25, 0.75]]]), "lse": ("float32", [[math.log(4)]])}, False),
    # group 2: (1, -2) has absmax 2, s = 2/240, q = (120, -240) = E4M3FNUZ 0x77, 0xFF (bias 8: 1.875 * 2^6,
    # -1.875 * 2^7); (0, 0) takes s = eps / 240 and quantises to 0
    ("triton", "vllm_per_token_group_quant_fp8"): (
        {"x": bf16([[1, -2, 0, 0]]), "x_q": zeros((1, 4), np.uint8), "x_s": zeros((1, 2))}, [2, 4, 4, 1e-10],
        {"x_q": ("float8_e4m3fnuz", [[0x77, 0xFF, 0, 0]]), "x_s": ("float32", [[2 / 240, 1e-10 / 240]])}, False),
    # q = 0: every allowed logit is 0; causally token 0 sees v0 = (1, 2), token 1 the mean of v0 and v1 = (3, 6);
    # both query heads read the one KV head
    ("triton", "vllm_prefill_attention"): (
        {"q": bf16(np.zeros((2, 2, 2))), "k": bf16([[[1, -1]], [[2, 5]]]), "v": bf16([[[1, 2]], [[3, 6]]]),
         "start_loc": np.array([0], np.int32), "seq_lens": np.array([2], np.int32), "out": zeros((2, 2, 2), np.uint16)},
        [1 / math.sqrt(2)], {"out": ("bfloat16", [[[1, 2], [1, 2]], [[2, 4], [2, 4]]])}, True),
}


@pytest.mark.parametrize("suite,problem", sorted(CASES))
def test_reference_on_a_hand_computed_case(suite, problem):
    inputs, scalars, want, exact = CASES[(suite, problem)]
    got = SUITES[suite].problem(problem).reference_fn()({k: v.copy() for k, v in inputs.items()}, scalars)
    assert set(got) == set(want)
    for name, (dtype, values) in want.items():
        assert got[name].dtype == inputs[name].dtype and got[name].shape == inputs[name].shape, name
        actual = decoded(got[name], dtype)
        if exact or actual.dtype.kind in "iu":
            np.testing.assert_array_equal(actual, np.asarray(values, dtype=actual.dtype), err_msg=name)
        else:
            rtol = 2 ** -8 if dtype == "bfloat16" else 1e-6
            np.testing.assert_allclose(actual.astype(np.float64), np.asarray(values, np.float64), rtol=rtol, atol=1e-7,
                                       err_msg=name)
