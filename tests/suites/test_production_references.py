"""Production references on tiny inputs whose outputs are known by hand (the derivation beside each case).

Every problem of the production suites has a case (test_every_production_problem_has_a_hand_case): values exact in
the dtypes involved, chosen so that a reference misreading a layout, a transpose, a scale, a softmax scale, a
routing weight, a pre-shuffled weight layout, a split boundary or a top-k choice fails. Pre-shuffled weights (the
int8 and fp8 GEMMs, the fused MoE kernels) are built by `aiter_preshuffled`, an element-by-element placement written
from AITer's shuffle_weight, not by the suites' own shuffle helpers. Each K0 is tied to its reference on the emulator
by test_production.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from asmevo.suites import load_suite

SUITES = {name: load_suite(name) for name in ("aiter", "aiter_gfx950", "triton")}
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


# ---- AITer's pre-shuffled weights, element by element --------------------------------------------------------------

def aiter_preshuffled(w: np.ndarray, rows: int) -> np.ndarray:
    """AITer's shuffle_weight(w, layout=(rows, 16)) for 1-byte elements (aiter/ops/shuffle.py: view [N, K] as
    [N/rows, rows, K/32, 2, 16], permute to (row tile, k tile, 16-byte half, row, byte)), placed element by element:
    w[n, k] of each [N, K] matrix lands at flat offset (((n // rows * K/32 + k // 32) * 2 + k % 32 // 16) * rows
    + n % rows) * 16 + k % 16. Written independently of asmevo.suites.refutil."""
    *lead, n, k = w.shape
    src, out = w.reshape(-1, n * k), np.empty((int(np.prod(lead, dtype=int)), n * k), w.dtype)
    for i in range(n):
        for j in range(k):
            out[:, (((i // rows * (k // 32) + j // 32) * 2 + j % 32 // 16) * rows + i % rows) * 16 + j % 16] = \
                src[:, i * k + j]
    return out.reshape(w.shape)


def sparse(shape, entries: dict, dtype=np.float64) -> np.ndarray:
    """Zeros of `shape` with `entries` ({index: value}) set."""
    a = np.zeros(shape, dtype)
    for index, value in entries.items():
        a[index] = value
    return a


# E4M3FNUZ codes (sign bit 7, exponent bits 6-3 with bias 8, mantissa bits 2-0): 1 = 0x40, 2 = 0x48, 4 = 0x50,
# 16 = 0x60, 0.5 = 0x38, 0.5625 = 1.125 * 2^-1 = 0x39, -1 = 0xC0, -1.5 = 0xC4.
E4M3 = {1: 0x40, 2: 0x48, 4: 0x50, 16: 0x60, 0.5: 0x38, 0.5625: 0x39, -1: 0xC0, -1.5: 0xC4}
# gfx950's OCP E4M3 codes (the same fields, bias 7): every value one exponent step lower than its FNUZ code
OCP_E4M3 = {1: 0x38, 2: 0x40, 4: 0x48, 16: 0x58, 0.5: 0x30, 0.5625: 0x31, -1: 0xB8, -1.5: 0xBC}


def fp8(shape, entries: dict, codes: dict = E4M3) -> np.ndarray:
    return sparse(shape, {i: codes[v] for i, v in entries.items()}, np.uint8)


def silu(x: float) -> float:
    return x / (1 + math.exp(-x))


def int8_gemm_case():
    """C = (A @ B^T) * a_scale[m] * b_scale[n] + bias[n] (AITer's gemm_a8w8_asm, aiter/ops/gemm_op_a8w8.py: A [M, K]
    and B [N, K] int8, x_scale [M, 1], w_scale [1, N], bias [1, N], bf16 out), B passed as
    shuffle_weight(B, layout=(32, 16)). N = K = 64: two row tiles and two k tiles, so a reference that skips the
    unshuffle, or orders the tiles k-major, reads other entries of B. Products (all other entries of A and B are 0):
      C[0, 0] = 3*1 + (-2)*5 = -7, C[0, 3] = 1*(-4) = -4, C[0, 40] = (-2)*2 = -4, C[0, 33] = 0;
      C[1, 0] = 1*5 = 5, C[1, 40] = 1*2 = 2, C[1, 33] = 2*(-3) = -6, C[1, 3] = 0;
    scaled by a_scale = (0.5, 2), b_scale[40] = 0.25 (others 1), plus bias[3] = 1, bias[33] = -0.5:
      row 0: C[0, 0] = -3.5, C[0, 3] = -1, C[0, 33] = -0.5, C[0, 40] = -0.5;
      row 1: C[1, 0] = 10, C[1, 3] = 1, C[1, 33] = -12.5, C[1, 40] = 1; every other column is its bias, 0."""
    a = sparse((2, 64), {(0, 3): 3, (0, 40): -2, (0, 20): 1, (1, 40): 1, (1, 63): 2}, np.int8)
    b = sparse((64, 64), {(0, 3): 1, (0, 40): 5, (40, 40): 2, (33, 63): -3, (3, 20): -4}, np.int8)
    c = sparse((2, 64), {(0, 0): -3.5, (0, 3): -1, (0, 33): -0.5, (0, 40): -0.5,
                         (1, 0): 10, (1, 3): 1, (1, 33): -12.5, (1, 40): 1})
    return ({"C": zeros((2, 64), np.uint16), "A": a, "B": aiter_preshuffled(b, 32), "a_scale": f32([0.5, 2]),
             "b_scale": f32(sparse(64, {n: 1 for n in range(64)} | {40: 0.25})),
             "bias": f32(sparse(64, {3: 1, 33: -0.5}))},
            [{"m": 2, "n": 64, "k": 64, "lda": 64, "ldb": 64, "ldc": 128}], {"C": ("bfloat16", c)}, True)


def flatmm_case():
    """D = sum over 128-wide K blocks b of (A[:, b] @ B[:, b]^T) * a_scale[b, m] * b_scale[b, n // 128] (AITer's
    flatmm_a8w8_blockscale_asm, csrc/include/asm_flatmm_a8w8_blockscale.h: x_scale [K/128, M], w_scale [K/128, N/128];
    aiter's op_tests/test_gemm_a8w8_blockscale.py run_torch scales each 128-wide K block of A per token and each
    128x128 block of B), fp8 E4M3FNUZ A and B, B passed as shuffle_weight(B, layout=(16, 16)). N = 128 (eight 16-row
    tiles), K = 256 (two scale blocks, eight k tiles).
    a_scale = [[0.5, 1], [2, 4]] ([block, m]), b_scale = [[1], [0.25]] ([block, n // 128]):
      D[0, 5]   = 1*2 (k 3, block 0) * 0.5 * 1 + 2*0.5 (k 130, block 1) * 2 * 0.25 = 1 + 0.5 = 1.5
      D[0, 100] = 2*1 (k 130, block 1) * 2 * 0.25 = 1
      D[1, 5]   = -1.5*4 (k 20, block 0) * 1 * 1 = -6;  D[1, 17] = -1.5*1 * 1 * 1 = -1.5
    (a reference reading a_scale as [m, block] gives D[1, 5] = -12)."""
    a = fp8((2, 256), {(0, 3): 1, (0, 130): 2, (1, 20): -1.5})
    b = fp8((128, 256), {(5, 3): 2, (5, 130): 0.5, (100, 130): 1, (17, 20): 1, (5, 20): 4})
    d = sparse((2, 128), {(0, 5): 1.5, (0, 100): 1, (1, 5): -6, (1, 17): -1.5})
    return ({"A": a, "B": aiter_preshuffled(b, 16), "a_scale": f32([[0.5, 1], [2, 4]]), "b_scale": f32([[1], [0.25]]),
             "D": zeros((2, 128), np.float16)}, [{"hidden_size": 128, "intermediate_size": 256, "num_tokens": 2}],
            {"D": ("float16", d)}, True)


def paged_attention_case():
    """softmax(q K^T / sqrt(d)) V per query head h over its sequence's tokens, read through the block table, KV head
    h // 8 (pa_fwd_asm: GQA 8). Caches in AITer's asm layouts (aiter/ops/cache.py, the cache arguments of
    reshape_and_cache_with_block_quant_for_asm_pa): K [blocks, kv_heads, d/8, 16, 8] and V [blocks, kv_heads, 16/8,
    d, 8], i.e. token t of a block, dim j at
    K[.., j // 8, t, j % 8] and V[.., t // 8, j, t % 8]. d = 16 (scale 1/4), 2 KV heads, 16 query heads, 20 tokens in
    blocks 2 (tokens 0-15) and 0 (tokens 16-19); block 1 and the slots past token 19 hold 100, which must not be read.
    q = 4 at dim 9 for every head. KV head 0: token 19 has k = 1 at dim 9 (logit 4 * 1 / 4 = 1), the others 0, and
    v[t] = (t at dim 0, 1 at dim 15), so heads 0-7 get dim 0 = (0 + ... + 18 + 19 e) / (19 + e) = (171 + 19 e) /
    (19 + e) and dim 15 = 1. KV head 1: every k is 0 (uniform weights) and v[t] = t - 8 at dim 3, so heads 8-15 get
    the mean, 9.5 - 8 = 1.5, at dim 3. A reference with the vLLM V layout [.., d, 16], or K as [.., 16, d], reads
    other tokens; one with KV head h // 2 or h % 2 mixes the groups; one without the 1/sqrt(d) scale has logit 4."""
    d, x, blk = 16, 8, 16
    k_cache, v_cache = np.full((3, 2, d // x, blk, x), 100.0), np.full((3, 2, blk // x, d, x), 100.0)
    for t in range(20):
        block, slot = (2, t) if t < 16 else (0, t - 16)
        k = {0: sparse(d, {9: 1.0 if t == 19 else 0.0}), 1: np.zeros(d)}
        v = {0: sparse(d, {0: t, 15: 1}), 1: sparse(d, {3: t - 8})}
        for h in (0, 1):
            for j in range(d):
                k_cache[block, h, j // x, slot, j % x] = k[h][j]
                v_cache[block, h, slot // x, j, slot % x] = v[h][j]
    e = math.e
    out = np.zeros((1, 16, d))
    out[0, :8, 0], out[0, :8, 15], out[0, 8:, 3] = (171 + 19 * e) / (19 + e), 1, 1.5
    return ({"out": zeros((1, 16, d), np.uint16), "q": bf16(np.tile(sparse(d, {9: 4}), (1, 16, 1))),
             "k_cache": bf16(k_cache), "v_cache": bf16(v_cache), "block_tables": np.array([[2, 0]], np.int32),
             "context_lens": np.array([20], np.int32)},
            [{"sclg2e": math.log2(math.e) / 4, "mblk": 2, "kv_nheads": 2, "GQA": 8}], {"out": ("bfloat16", out)},
            False)


def fmha_case():
    """O = softmax(Q K^T * scale) V per batch and query head h with KV head h // (heads / kv_heads), no mask, and
    LSE = log sum exp(Q K^T * scale) [batch, heads, seq_q] (aiter's mha_fwd contract, csrc/include/mha_fwd.h; its
    torch reference attention_ref in aiter/test_mha_common.py). Q [1, 2, 4, 2], K/V [1, 3, 2, 2], scale 0.5 (not
    1/sqrt(2)). KV head 0: k = (1, 0), (0, 1), (0, 0) and v = (1, 0), (0, 1), (4, 4); KV head 1: k = 0 (uniform
    weights), v = (2, 0), (0, 2), (1, 1), mean (1, 1), LSE ln 3 for heads 2 and 3 whatever q is.
      head 0, row 0: q = (4, 0), logits (2, 0, 0): O = (e^2 + 4, 5) / (e^2 + 2), LSE ln(e^2 + 2)
      head 0, row 1: q = (0, -2), logits (0, -1, 0): O = (5, 4 + 1/e) / (2 + 1/e), LSE ln(2 + 1/e)
      head 1, row 0: q = 0, uniform: O = (5/3, 5/3), LSE ln 3
      head 1, row 1: q = (2, 2), logits (1, 1, 0): O = (e + 4, e + 4) / (2e + 1), LSE ln(2e + 1)
    A reference mapping head h to KV head h % 2 swaps heads 1 and 2."""
    e = math.e
    q = np.zeros((1, 2, 4, 2))
    q[0, 0, 0], q[0, 1, 0], q[0, 1, 1], q[0, :, 2], q[0, :, 3] = (4, 0), (0, -2), (2, 2), (4, 4), (-2, 6)
    k = np.zeros((1, 3, 2, 2))
    k[0, :, 0] = [[1, 0], [0, 1], [0, 0]]
    v = np.zeros((1, 3, 2, 2))
    v[0, :, 0], v[0, :, 1] = [[1, 0], [0, 1], [4, 4]], [[2, 0], [0, 2], [1, 1]]
    out = np.zeros((1, 2, 4, 2))
    out[0, 0, 0] = np.array([e * e + 4, 5]) / (e * e + 2)
    out[0, 1, 0] = np.array([5, 4 + 1 / e]) / (2 + 1 / e)
    out[0, 0, 1] = 5 / 3
    out[0, 1, 1] = (e + 4) / (2 * e + 1)
    out[0, :, 2:] = 1
    lse = np.array([[[math.log(e * e + 2), math.log(2 + 1 / e)], [math.log(3), math.log(2 * e + 1)],
                     [math.log(3)] * 2, [math.log(3)] * 2]])
    return ({"out": zeros((1, 2, 4, 2), np.uint16), "q": bf16(q), "k": bf16(k), "v": bf16(v), "lse": zeros((1, 4, 2))},
            [{"scalar": 0.5, "seq_len": 2, "kv_seq_len": 3, "q_head_num": 4, "gqa": 2}],
            {"out": ("bfloat16", out), "lse": ("float32", lse)}, False)


def mla_decode_case():
    """MLA decode stage 1 (aiter/mla.py mla_decode_fwd: stage 1 writes per-KV-split partial outputs and LSEs that
    stage 2, _fwd_kernel_stage2_asm, merges over min(splits, cdiv(n, 64)) splits): sequence b's tokens are
    kv[kv_page_indices[kv_indptr[b]:kv_indptr[b + 1]]] (page size 1), logits q . kv (all 576 dims) * scale, values
    kv[:, :512]; split i holds tokens [i L, (i + 1) L) with L = 64 * ceil(ceil(n / splits) / 64). 3 splits, scale
    0.5. Sequence 0: 65 tokens on pages 64, 63, ..., 0, so L = 64: split 0 = tokens 0-63, split 1 = token 64 (page
    0), split 2 empty (it keeps its initial -1). Token 10 (page 54) has kv 1 at dims 0 and 570; page 0 has 3 at
    dim 5 and 2 at dim 570; other pages are 0. q[0, head 0] = 2 at dim 570, head 1 = 0:
      split 0, head 0: token 10 has logit 0.5 * 2 = 1, the 63 others 0: out dim 0 = e / (63 + e), LSE ln(63 + e)
      split 0, head 1: uniform over 64 tokens: out dim 0 = 1/64, LSE ln 64
      split 1: out dim 5 = 3; LSE = the logit, 0.5 * 2 * 2 = 2 (head 0) and 0 (head 1)
    Sequence 1: 2 tokens on pages 66 and 65 (L = 64: both in split 0); page 65 has 2 at dims 511 and 575, page 66 is 0.
    q[1, head 0] = 1 at dim 575: logits (0, 1): out dim 511 = 2e / (1 + e), LSE ln(1 + e); head 1: out dim 511 = 1,
    LSE ln 2; its splits 1 and 2 stay -1. Page 67 (100 everywhere) is never indexed."""
    e = math.e
    kv = np.zeros((68, 1, 1, 576))
    kv[54, 0, 0, [0, 570]] = 1
    kv[0, 0, 0, 5], kv[0, 0, 0, 570] = 3, 2
    kv[65, 0, 0, [511, 575]] = 2
    kv[67] = 100
    q = np.zeros((2, 2, 576))
    q[0, 0, 570], q[1, 0, 575] = 2, 1
    out, lse = np.full((2, 3, 2, 512), -1.0), np.full((2, 3, 2, 1), -1.0)
    out[0, :2], out[1, 0], lse[0, :2], lse[1, 0] = 0, 0, 0, 0  # the written splits: all 512 dims, then the values
    out[0, 0, 0, 0], lse[0, 0, 0] = e / (63 + e), math.log(63 + e)
    out[0, 0, 1, 0], lse[0, 0, 1] = 1 / 64, math.log(64)
    out[0, 1, :, 5], lse[0, 1, 0] = 3, 2
    out[1, 0, 0, 511], lse[1, 0, 0] = 2 * e / (1 + e), math.log(1 + e)
    out[1, 0, 1, 511], lse[1, 0, 1] = 1, math.log(2)
    return ({"split_out": np.full((2, 3, 2, 512), -1, np.float32), "split_lse": np.full((2, 3, 2, 1), -1, np.float32),
             "q": bf16(q), "kv": bf16(kv),
             "kv_indptr": np.array([0, 65, 67], np.int32),
             "kv_page_indices": np.array(list(range(64, -1, -1)) + [66, 65], np.int32),
             "kv_last_page_lens": np.ones(2, np.int32)},
            [{"scalar": 0.5, "s_MQA": 2, "kv_split": 3}],
            {"split_out": ("float32", out), "split_lse": ("float32", lse)}, False)


def mock_id(token: int, slot: int) -> int:
    """moe_sorting's packed entry: token in bits 0-23, top-k slot in bits 24-31 (CK's MOE_SORTING_MOCK_ID)."""
    return token | slot << 24


def fmoe_stage1_case(doweight: bool, codes: dict = E4M3):
    """AITer's MoE stage 1, g1u1, per-token fp8 (aiter/fused_moe.py torch_moe_stage1 with QuantType.per_Token):
    h = (x[t] * x_scale[t]) . (w1[e] * w1_scale[e])^T, gate / up = its first / second `inter` rows, with doweight
    both times the routing weight, then out[t, slot] = silu(gate) * up. w1 passed as shuffle_weight(w1, layout=(16,
    16)); 2 tokens, 2 experts, top-2, dim 32, inter 8 (w1 [2, 16, 32]: one 16-row tile whose two 16-byte halves the
    shuffle stores apart). Routing in moe_sorting's form (block 32: 2*2 + 2*32 - 2 = 66 entries): slot 0 of both
    tokens goes to expert 1, slot 1 to expert 0, so expert 0 holds (t0, slot 1), (t1, slot 1) with weights 0.25, 0.5
    and expert 1 holds (t0, slot 0), (t1, slot 0) with 0.75, 0.5 (reading the packed id's token and slot the wrong
    way round moves results between experts). Entry 64, past num_valid_ids = 64, is a real-looking id that must be
    ignored. `codes`: the fp8 format's codes (FNUZ on gfx942, OCP E4M3 on gfx950).
    x[0] = (1 at k 0, 2 at k 16) * x_scale 0.5 = (0.5, 1); x[1] = 1 at k 1, x_scale 1. Nonzero weights (row, k):
      expert 0: gate row 0 (0: 1, 16: 1, 1: 2), up row 8 (0: 2, 1: 1) with w1_scale 0.5;
      expert 1: gate row 0 (0: 1, 1: -1), up row 8 (16: 4, 1: 1).
    So (gate, up) at inter column 0 is, for t0: expert 0 (1.5, 0.5), expert 1 (0.5, 4); for t1: expert 0 (2, 0.5),
    expert 1 (-1, 1); every other column has gate 0, so silu(0) * up = 0.
      out[0, 0] = silu(0.5) * 4, out[0, 1] = silu(1.5) * 0.5, out[1, 0] = silu(-1) * 1, out[1, 1] = silu(2) * 0.5
    and with doweight (weights w = 0.75, 0.25, 0.5, 0.5 in the same order): silu(w gate) * (w up)."""
    x = fp8((2, 32), {(0, 0): 1, (0, 16): 2, (1, 1): 1}, codes)
    w1 = fp8((2, 16, 32), {(0, 0, 0): 1, (0, 0, 16): 1, (0, 0, 1): 2, (0, 8, 0): 2, (0, 8, 1): 1,
                           (1, 0, 0): 1, (1, 0, 1): -1, (1, 8, 16): 4, (1, 8, 1): 1}, codes)
    w1_scale = np.ones((2, 16, 1), np.float32)
    w1_scale[0, 8, 0] = 0.5
    ids = np.full(66, mock_id(2, 2), np.uint32)
    ids[[0, 1, 32, 33, 64]] = [mock_id(0, 1), mock_id(1, 1), mock_id(0, 0), mock_id(1, 0), mock_id(0, 0)]
    weights = sparse(66, {0: 0.25, 1: 0.5, 32: 0.75, 33: 0.5, 64: 1})
    gate_up = {(0, 0): (0.5, 4, 0.75), (0, 1): (1.5, 0.5, 0.25), (1, 0): (-1, 1, 0.5), (1, 1): (2, 0.5, 0.5)}
    out = np.zeros((2, 2, 8))
    for (t, slot), (gate, up, w) in gate_up.items():
        out[t, slot, 0] = silu(w * gate) * (w * up) if doweight else silu(gate) * up
    inputs = {"out": zeros((2, 2, 8), np.uint16), "x": x, "w1": aiter_preshuffled(w1, 16), "x_scale": f32([[0.5], [1]]),
              "w1_scale": w1_scale, "num_valid_ids": np.array([64, 2], np.int32),
              "sorted_token_ids": ids.view(np.int32), "sorted_expert_ids": np.array([0, 1, 0], np.int32)}
    if doweight:
        inputs["sorted_weights"] = f32(weights)
    scalars = [{"dim": 32, "hidden_dim": 8, "token_cnt": 2, "eprt_cnt": 2, "topk": 2}]
    return inputs, scalars, {"out": ("bfloat16", out)}, False


def fmoe_1stage_case():
    """AITer's one-stage fused MoE, g1u1, per-token fp8, SiLU (aiter/fused_moe.py torch_moe: out[t] = sum over slots
    of w * (silu(gate) * up) . w2[e]^T, with w1, w2 scaled per channel), where the kernel re-quantises the
    intermediate a to fp8 per 256-wide slice (amax / 240; see the reference's docstring). w1 [2, 64, 32] and w2
    [2, 32, 32] passed as shuffle_weight(w, layout=(16, 16)); 1 token, top-2: slot 0 -> expert 0 (weight 0.75), slot 1
    -> expert 1 (0.25); moe_sorting block 32 (1*2 + 2*32 - 2 = 64 entries). x = 1 at k 0 and k 17, x_scale 1.
    s = silu(16) = 16 / (1 + e^-16).
      expert 0: gate rows 0, 1 = 1 at k 0 with w1_scale 16 (gate 16); up row 32 = 1, row 33 = 0.5625 at k 0, so
        a = (s, 0.5625 s, 0, ...). Re-quantised by amax s: 240 and 135 -> fp8 240 and 128 (135 lies between 128 and
        144), so a' = (s, s * 128/240). w2[0] row 0 = 1 at cols 0, 1; row 5 = 2 at col 1 with w2_scale 0.5:
        partial (row 0) = s * (1 + 128/240), (row 5) = s * 128/240; times 0.75.
      expert 1: gate row 0 = 16 (k 0), up row 32 = 2 at k 17: a = (2s, 0, ...), re-quantised exactly. w2[1] row 0 = 1
        at col 0, row 31 = -1 at col 0: partial (row 0) = 2s, (row 31) = -2s; times 0.25.
    The kernel adds into out (global_atomic_pk_add_bf16; aiter's asm_moe has moe_sorting zero it first, CK's
    moe_sorting_kernel.hpp), which starts at 1 here:
      out[0, 0] = 1 + 0.75 s (1 + 128/240) + 0.5 s, out[0, 5] = 1 + 0.75 s * 128/240, out[0, 31] = 1 - 0.5 s,
      every other out[0, n] = 1
    (without the re-quantisation out[0, 5] would be 1 + 0.75 * 0.5625 s, 5 % larger)."""
    s = silu(16)
    x = fp8((1, 32), {(0, 0): 1, (0, 17): 1})
    w1 = fp8((2, 64, 32), {(0, 0, 0): 1, (0, 1, 0): 1, (0, 32, 0): 1, (0, 33, 0): 0.5625, (1, 0, 0): 16,
                           (1, 32, 17): 2})
    w1_scale = np.ones((2, 64, 1), np.float32)
    w1_scale[0, :2] = 16
    w2 = fp8((2, 32, 32), {(0, 0, 0): 1, (0, 0, 1): 1, (0, 5, 1): 2, (1, 0, 0): 1, (1, 31, 0): -1})
    w2_scale = np.ones((2, 32, 1), np.float32)
    w2_scale[0, 5] = 0.5
    ids = np.full(64, mock_id(1, 2), np.uint32)
    ids[[0, 32]] = [mock_id(0, 0), mock_id(0, 1)]
    out = 1 + sparse((1, 32), {(0, 0): 0.75 * s * (1 + 128 / 240) + 0.5 * s, (0, 5): 0.75 * s * 128 / 240,
                               (0, 31): -0.5 * s})
    return ({"out": bf16(np.ones((1, 32))), "x": x, "w1": aiter_preshuffled(w1, 16), "w2": aiter_preshuffled(w2, 16),
             "x_scale": f32([[1]]), "w1_scale": w1_scale, "w2_scale": w2_scale,
             "num_valid_ids": np.array([64, 1], np.int32), "sorted_token_ids": ids.view(np.int32),
             "sorted_weights": f32(sparse(64, {0: 0.75, 32: 0.25})), "sorted_expert_ids": np.array([0, 1], np.int32)},
            [{"dim": 32, "inter_dim": 32, "token_cnt": 1, "eprt_cnt": 2, "topk": 2}], {"out": ("bfloat16", out)}, False)


def decode_attention_stage1_case():
    """vLLM's _fwd_grouped_kernel_stage1 (vllm/v1/attention/ops/triton_decode_attention.py): per sequence, query head
    h (KV head h // kv_group_num, 4 here: 8 query heads over 2 KV heads) and split s of NUM_KV_SPLITS = 4, the tokens
    [s L, min((s + 1) L, n)) with L = cdiv(n, 4), read through the page table (page 16, K/V [pages, 16, kv_heads, d]);
    att_out[.., s, :d] = softmax(q K^T * sm_scale) V and att_out[.., s, d] = max + log(sum exp). Splits without tokens
    are not written. n = 5 tokens on page 1 (page 0 holds 100 everywhere): L = 2, splits [0, 2), [2, 4), [4, 5), and
    split 3 empty (att_out starts at -1 there and stays). d = 2, q = (2, 0) for every head, sm_scale = ln(3) / 2, so a
    token's logit is k[0] ln 3.
      KV head 0 (heads 0-3): k[0] = (1, 0, 0, 0, 5), v[t] = (t, 1):
        split 0: logits (ln 3, 0), weights (3, 1) / 4: out (1/4, 1), LSE ln 4; split 1: logits 0: out (2.5, 1),
        LSE ln 2; split 2: token 4 alone: out (4, 1), LSE 5 ln 3.
      KV head 1 (heads 4-7): k = 0, v[t] = (-t, 2t): split 0 (-0.5, 1), LSE ln 2; split 1 (-2.5, 5), LSE ln 2;
        split 2 (-4, 8), LSE 0."""
    k, v = np.full((2, 16, 2, 2), 100.0), np.full((2, 16, 2, 2), 100.0)
    for t in range(5):
        k[1, t, 0], k[1, t, 1] = ((1, 0, 0, 0, 5)[t], 0), (0, 0)
        v[1, t, 0], v[1, t, 1] = (t, 1), (-t, 2 * t)
    att = np.full((1, 8, 4, 3), -1.0)
    att[0, :4, :3] = [[0.25, 1, math.log(4)], [2.5, 1, math.log(2)], [4, 1, 5 * math.log(3)]]
    att[0, 4:, :3] = [[-0.5, 1, math.log(2)], [-2.5, 5, math.log(2)], [-4, 8, 0]]
    return ({"q": bf16(np.tile([2.0, 0.0], (1, 8, 1))), "k_cache": bf16(k), "v_cache": bf16(v),
             "page_table": np.array([[1]], np.int32), "seq_lens": np.array([5], np.int32),
             "att_out": np.full((1, 8, 4, 3), -1, np.float32)},
            [math.log(3) / 2, 1, 16, 2, 64, 4, 2, 64, 4, 2, 36, 12, 3], {"att_out": ("float32", att)}, False)


def fused_moe_case():
    """vLLM's fused_moe_kernel (vllm/model_executor/layers/fused_moe/fused_moe.py) as compiled here (top_k 2,
    MUL_ROUTED_WEIGHT False): for each entry i < num_tokens_post_padded of sorted_token_ids with id < tokens * top_k,
    c[id // 2, id % 2] = a[id // 2] @ w[e]^T with e = expert_ids[i // 16] and w [E, N, K], or zeros when e = -1 (an
    expert on another rank: write_zeros_to_output); pad ids are skipped. Tokens 0 and 1 route to experts (remote, 0)
    and (0, 1), i.e. ids 0 -> -1, 1 -> 0, 2 -> 0, 3 -> 1; moe_align_block_size's layout in 16-entry blocks: [1, 2,
    pad...] (expert 0), [3, pad...] (expert 1), [0, pad...] (expert -1); num_tokens_post_padded 48, and a fourth block
    (id 0 under expert 1) lies past it. c starts at 9. a = ((1, 2), (3, -1)); w[0] = ((1, 2), (0, 1)),
    w[1] = ((0, 1), (1, 1)):
      c[0, 0] = 0 (remote expert);       c[0, 1] = w[0] (1, 2) = (5, 2)
      c[1, 0] = w[0] (3, -1) = (1, -1); c[1, 1] = w[1] (3, -1) = (-1, 2)
    (with a transposed w, c[0, 1] would be (1, 4); indexing w with -1, c[0, 0] would be w[1] (1, 2) = (2, 3))."""
    ids = np.full(64, 4, np.int32)
    ids[[0, 1, 16, 32, 48]] = [1, 2, 3, 0, 0]
    return ({"a": bf16([[1, 2], [3, -1]]), "w": bf16([[[1, 2], [0, 1]], [[0, 1], [1, 1]]]),
             "c": bf16(np.full((2, 2, 2), 9.0)), "topk_weights": f32([[0.5, 0.5], [0.5, 0.5]]), "sorted_token_ids": ids,
             "expert_ids": np.array([0, 1, -1, 1], np.int32), "num_tokens_post_padded": np.array([48], np.int32)},
            [2, 2, 64, 4, 2, 4, 2, 4], {"c": ("bfloat16", [[[0, 0], [5, 2]], [[1, -1], [-1, 2]]])}, True)


# vLLM's LoRA mapping metadata (vllm/lora/ops/triton_ops/lora_kernel_metadata.py): tokens 0, 1, 2 map to LoRAs 1, -1
# (none), 0; grouped by LoRA id in ascending order: lora_ids (-1, 0, 1), one token each, token_indices (1, 2, 0).
LORA_GROUPS = {"token_indices": np.array([1, 2, 0], np.int32), "tokens_per_lora": np.array([1, 1, 1], np.int32),
               "lora_start_loc": np.array([0, 1, 2, 3], np.int32), "lora_ids": np.array([-1, 0, 1], np.int32)}


def lora_shrink_case():
    """vLLM's _lora_shrink_kernel (vllm/lora/ops/triton_ops/lora_shrink_op.py, SPLIT_K 8: atomic adds):
    out[0, t] += scaling * lora_a[l(t)] @ x[t] for tokens with a LoRA; lora_a [loras, rank, hidden]. scaling 0.5.
    x = ((1, 2), (5, 5), (3, -1)); lora_a[0] = ((1, 0), (1, 1)), lora_a[1] = ((0, 1), (2, -1)); out starts at
    ((0.25, 0), (7, 7), (0, 0)):
      token 0 (LoRA 1): 0.25 + 0.5 * (0*1 + 1*2) = 1.25, 0 + 0.5 * (2*1 - 1*2) = 0
      token 1 (none): (7, 7) unchanged;  token 2 (LoRA 0): 0.5 * (3, 3 - 1) = (1.5, 1)."""
    return ({"x": bf16([[1, 2], [5, 5], [3, -1]]), "lora_a": bf16([[[1, 0], [1, 1]], [[0, 1], [2, -1]]]),
             "out": f32([[[0.25, 0], [7, 7], [0, 0]]]), **LORA_GROUPS},
            [3, 2, 2, 0.5, 2, 4, 2, 6, 2], {"out": ("float32", [[[1.25, 0], [7, 7], [1.5, 1]]])}, True)


def lora_expand_case():
    """vLLM's _lora_expand_kernel (vllm/lora/ops/triton_ops/lora_expand_op.py, CAST_TYPE, ADD_INPUTS): the fp32 input
    cast to bf16, the product rounded to bf16 (tiled_c = accumulator.to(bf16)), added to out in bf16:
    out[t] = bf16(out[t] + bf16(bf16(x[0, t]) @ lora_b[l(t)]^T)); lora_b [loras, hidden, rank].
      token 0 (LoRA 1): x = (1 + 2^-10, 2) casts to (1, 2); lora_b[1] = ((1, 128), (0.5, 0)): product (257, 0.5),
        rounded 257 -> 256 (ties to even); out (1, 1) + (256, 0.5) = (257 -> 256, 1.5). Without the product's
        rounding out[0] is 1 + 257 = 258; without the input cast the product 257.001 rounds to 258 and 259 to 260.
      token 1 (none): (3, -3) unchanged.
      token 2 (LoRA 0): x = (0.5, 0.25), lora_b[0] = ((1, 1), (2, 0)): (0.75, 1); out (0, 2) -> (0.75, 3)."""
    return ({"x": f32([[[1 + 2 ** -10, 2], [9, 9], [0.5, 0.25]]]),
             "lora_b": bf16([[[1, 1], [2, 0]], [[1, 128], [0.5, 0]]]),
             "out": bf16([[1, 1], [3, -3], [0, 2]]), **LORA_GROUPS},
            [3, 2, 2, 0, 6, 2, 4, 2, 2, 2], {"out": ("bfloat16", [[256, 1.5], [3, -3], [0.75, 3]])}, True)


# E2M1 (fp4) codes, OCP MX: sign bit 3, exponent bits 2-1 with bias 1, mantissa bit 0
E2M1 = {0.5: 0x1, 1: 0x2, 2: 0x4, 3: 0x5, 4: 0x6, 6: 0x7, -1.5: 0xB, -2: 0xC}


def fp4_bytes(rows: int, k: int, entries: dict) -> np.ndarray:
    """[rows, k / 2] bytes holding the fp4 values `entries` ({(row, k): value}), element 2j in the low nibble
    (aiter/utility/fp4_utils.py pack_uint4: x[1::2] << 4 | x[::2])."""
    out = np.zeros((rows, k // 2), np.uint8)
    for (r, j), value in entries.items():
        out[r, j // 2] |= E2M1[value] << (4 * (j % 2))
    return out


def e8m0_placed(rows: int, blocks: int, entries: dict) -> np.ndarray:
    """E8M0 codes ({(row, K block): code}, all others 127 = 1.0) as fp4_utils.e8m0_shuffle stores them, placed one
    by one: padded to (cdiv(rows, 256) * 256, cdiv(blocks, 8) * 8) = (R, C), viewed as (R / 32, 2, 16, C / 8, 2, 4)
    = (a, b, c, d, e, f) with row = 32 a + 16 b + c and block = 8 d + 4 e + f, and stored in (a, d, f, c, e, b)
    order, i.e. at flat offset ((((a * C / 8 + d) * 4 + f) * 16 + c) * 2 + e) * 2 + b."""
    rows_p, cols_p = -(-rows // 256) * 256, -(-blocks // 8) * 8
    out = np.full(rows_p * cols_p, 127, np.uint8)
    for (r, blk), code in entries.items():
        a, b, c = r // 32, r % 32 // 16, r % 16
        d, e, f = blk // 8, blk % 8 // 4, blk % 4
        out[((((a * cols_p // 8 + d) * 4 + f) * 16 + c) * 2 + e) * 2 + b] = code
    return out.reshape(rows_p, cols_p)


def f4gemm_case():
    """AITer's MXFP4 GEMM (op_tests/test_gemm_a4w4.py run_torch: fp4 values times their row's E8M0 scale 2^(s - 127)
    per 32-wide K block, then x @ w^T in bf16), B passed as shuffle_weight(B, layout=(16, 16)). M = 2, N = 16,
    K = 64 (two K blocks; bytes 0 and 16 of a row, which the shuffle stores 256 bytes apart). Nonzero values
    (row, k): A (0, 0) 1, (0, 1) 3, (0, 33) -2, (1, 32) 6; B (0, 0) 2, (0, 1) 0.5, (0, 32) 0.5, (0, 33) 1,
    (5, 1) 4, (5, 32) -1.5. Scales (row, block): A (0, 0) 2^1, (0, 1) 2^-1, (1, 1) 2^2; B (0, 1) 2^3, (5, 0) 2^-2;
    all others 1.
      D[0, 0] = (1*2)(2*1) + (3*2)(0.5*1) + (-2 * 0.5)(1*8) = 4 + 3 - 8 = -1
      D[0, 5] = (3*2)(4 * 0.25) = 6;  D[1, 0] = (6*4)(0.5*8) = 96;  D[1, 5] = (6*4)(-1.5*1) = -36
    Swapping nibbles, rows of a scale pair, the two K blocks or B's shuffle halves changes them."""
    a = fp4_bytes(2, 64, {(0, 0): 1, (0, 1): 3, (0, 33): -2, (1, 32): 6})
    b = fp4_bytes(16, 64, {(0, 0): 2, (0, 1): 0.5, (0, 32): 0.5, (0, 33): 1, (5, 1): 4, (5, 32): -1.5})
    scale_a = e8m0_placed(2, 2, {(0, 0): 128, (0, 1): 126, (1, 1): 129})
    scale_b = e8m0_placed(16, 2, {(0, 1): 130, (5, 0): 125})
    d = np.zeros((2, 16))
    d[0, 0], d[0, 5], d[1, 0], d[1, 5] = -1, 6, 96, -36
    return ({"D": zeros((2, 16), np.uint16), "A": a, "B": aiter_preshuffled(b, 16), "scale_A": scale_a,
             "scale_B": scale_b}, [{"M": 2, "N": 16, "K": 64}], {"D": ("bfloat16", d)}, True)


CASES |= {
    ("aiter", "i8gemm"): int8_gemm_case(),
    ("aiter", "a8w8_gemm"): int8_gemm_case(),  # the same contract (gemm_a8w8_asm), another code object
    ("aiter", "flatmm_fp8"): flatmm_case(),
    ("aiter", "paged_attention"): paged_attention_case(),
    ("aiter", "fmha_fwd"): fmha_case(),
    ("aiter", "mla_decode"): mla_decode_case(),
    ("aiter", "fmoe_stage1_fp8"): fmoe_stage1_case(doweight=False),
    ("aiter", "fmoe_stage1_fp8_doweight"): fmoe_stage1_case(doweight=True),
    ("aiter", "fmoe_1stage_fp8"): fmoe_1stage_case(),
    ("triton", "vllm_decode_attention_stage1"): decode_attention_stage1_case(),
    ("triton", "vllm_fused_moe"): fused_moe_case(),
    ("triton", "vllm_lora_shrink"): lora_shrink_case(),
    ("triton", "vllm_lora_expand"): lora_expand_case(),
}
# gfx950: the gfx942 cases where the reference is the gfx942 one; OCP fp8 for the MoE stage 1; the MXFP4 GEMM
CASES |= {("aiter_gfx950", name): CASES[("aiter", name)] for name in ("bf16gemm", "paged_attention", "mla_decode",
                                                                     "fmha_fwd")}
CASES |= {("aiter_gfx950", "fmoe_stage1_fp8"): fmoe_stage1_case(doweight=False, codes=OCP_E4M3),
          ("aiter_gfx950", "f4gemm"): f4gemm_case()}


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


def test_every_production_problem_has_a_hand_case():
    assert set(CASES) == {(name, p.name) for name, suite in SUITES.items() for p in suite.problems}
