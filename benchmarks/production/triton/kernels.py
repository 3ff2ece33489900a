"""What to compile: one entry per problem, naming the kernel in a pinned wheel and the Triton
specialisation vLLM / SGLang launch it with on MI300X (gfx942).

`signature` follows the kernel's parameters in order: pointer and scalar types as Triton spells them,
`constexpr` for parameters fixed at compile time (values in `constexprs`; a string `tl.<dtype>` names a
Triton dtype). Integer arguments a torch launch always passes as 1 (unit strides) are constexpr 1, as
Triton's launcher specialises them; `None` arguments are constexpr None. Each `why` cites the host code
the configuration comes from.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Recipe:
    package: str
    member: str
    function: str
    signature: dict[str, str]
    constexprs: dict[str, object]
    options: dict[str, object]
    family: str
    why: str
    description: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def _sig(*pairs: str) -> dict[str, str]:
    """'name:type' pairs in parameter order."""
    return dict(p.split(":", 1) for p in pairs)


C = "constexpr"

RECIPES: dict[str, Recipe] = {
    "vllm_rms_norm": Recipe(
        "vllm", "vllm/model_executor/determinism/batch_invariant.py", "_rms_norm_kernel",
        _sig("input_ptr:*bf16", "weight_ptr:*bf16", "output_ptr:*bf16", "input_row_stride:i32",
             "output_row_stride:i32", "n_cols:i32", "eps:fp32", f"BLOCK_SIZE:{C}", f"HAS_WEIGHT:{C}"),
        {"BLOCK_SIZE": 1024, "HAS_WEIGHT": True}, {"num_warps": 4},
        "norm", "rms_norm_batch_invariant: BLOCK_SIZE=1024, default num_warps",
        "RMSNorm over rows of a bf16 [rows, n_cols] tensor with weight (two passes over BLOCK_SIZE chunks)"),
    "vllm_add_rmsnorm": Recipe(
        "vllm", "vllm/models/inkling/amd/ops/norm.py", "_add_rmsnorm_fwd_kernel",
        _sig("res_ptr:*bf16", "delta_ptr:*bf16", "weight_ptr:*bf16", "y_ptr:*bf16", "res_out_ptr:*bf16",
             "eps:fp32", "res_stride_0:i32", "delta_stride_0:i32", "y_stride_0:i32", "res_out_stride_0:i32",
             "n_cols:i32", f"block_size_n:{C}"),
        {"block_size_n": 4096}, {"num_warps": 8},
        "norm", "add_rmsnorm (AMD ops): block_size_n = next_power_of_2(hidden=4096), num_warps 8 for >= 2048",
        "fused residual add + RMSNorm (bf16 rows up to 4096 wide)"),
    "vllm_rotary": Recipe(
        "vllm", "vllm/vllm_flash_attn/ops/triton/rotary.py", "rotary_kernel",
        _sig("OUT:*bf16", "X:*bf16", "COS:*bf16", "SIN:*bf16", f"CU_SEQLENS:{C}", "SEQLEN_OFFSETS:i32",
             "seqlen:i32", "rotary_dim:i32", "seqlen_ro:i32", "stride_out_batch:i32", "stride_out_seqlen:i32",
             "stride_out_nheads:i32", f"stride_out_headdim:{C}", "stride_x_batch:i32", "stride_x_seqlen:i32",
             "stride_x_nheads:i32", f"stride_x_headdim:{C}", f"BLOCK_K:{C}", f"IS_SEQLEN_OFFSETS_TENSOR:{C}",
             f"IS_VARLEN:{C}", f"INTERLEAVED:{C}", f"CONJUGATE:{C}", f"BLOCK_M:{C}"),
        {"CU_SEQLENS": None, "stride_out_headdim": 1, "stride_x_headdim": 1, "BLOCK_K": 128,
         "IS_SEQLEN_OFFSETS_TENSOR": False, "IS_VARLEN": False, "INTERLEAVED": False, "CONJUGATE": False,
         "BLOCK_M": 8},
        {"num_warps": 4},
        "rotary", "apply_rotary: rotary_dim 128 -> BLOCK_K 128, BLOCK_M 8 (not interleaved), num_warps 4",
        "rotary embedding (GPT-NeoX halves) of bf16 [batch, seqlen, heads, 128] with cos/sin tables"),
    "sglang_gelu_and_mul": Recipe(
        "sglang", "sglang/kernels/ops/activation/gelu_and_mul_triton.py", "gelu_and_mul_kernel",
        _sig("out_hidden_states_ptr:*bf16", f"out_scales_ptr:{C}", "hidden_states_ptr:*bf16", f"quant_max:{C}",
             f"static_scale:{C}", f"hidden_dim:{C}", f"BLOCK_SIZE:{C}"),
        {"out_scales_ptr": None, "quant_max": None, "static_scale": False, "hidden_dim": 2048, "BLOCK_SIZE": 2048},
        {"num_warps": 8},
        "activation", "gelu_and_mul_triton: BLOCK_SIZE = next_power_of_2(hidden_dim), "
                      "num_warps = max(min(next_pow2(cdiv(hidden_dim, 256)), 16), 4) = 8",
        "gelu(x[:, :H]) * x[:, H:] for bf16 rows, H = 2048"),
    "sglang_silu_and_mul_clamp": Recipe(
        "sglang", "sglang/kernels/ops/activation/silu_and_mul_clamp_hip.py", "_silu_and_mul_clamp_kernel",
        _sig("x_ptr:*bf16", "out_ptr:*bf16", f"scale_ptr:{C}", "inter_size:i32", "stride_xm:i32", "stride_om:i32",
             f"stride_sm:{C}", "limit:fp32", f"BLOCK_I:{C}", f"FP8_GRID:{C}", f"EMIT_FP8:{C}"),
        {"scale_ptr": None, "stride_sm": 0, "BLOCK_I": 1024, "FP8_GRID": False, "EMIT_FP8": False},
        {"num_warps": 4},
        "activation", "silu_and_mul_clamp (ROCm SwiGLU with clamped branches), bf16 output, BLOCK_I 1024",
        "silu(min(g, limit)) * clamp(u, -limit, limit) for bf16 rows [g | u]"),
    "sglang_gemma4_routing": Recipe(
        "sglang", "sglang/kernels/ops/moe/gemma4_routing.py", "_gemma4_routing_kernel",
        _sig("gating_ptr:*fp32", "per_expert_scale_ptr:*fp32", "topk_weights_ptr:*fp32", "topk_ids_ptr:*i32",
             "stride_g_t:i32", f"E:{C}", f"K:{C}", f"BLOCK_E:{C}"),
        {"E": 128, "K": 8, "BLOCK_E": 128}, {"num_warps": 1},
        "softmax-topk", "gemma4_fused_routing: BLOCK_E = next_power_of_2(E), num_warps 1",
        "MoE router: top-8 of 128 experts by bitonic sort, softmax over the top-8, per-expert scale"),
    "vllm_decode_attention_stage1": Recipe(
        "vllm", "vllm/v1/attention/ops/triton_decode_attention.py", "_fwd_grouped_kernel_stage1",
        _sig("Q:*bf16", "K_Buffer:*bf16", "V_Buffer:*bf16", "sm_scale:fp32", "Req_to_tokens:*i32",
             "B_Seqlen:*i32", "Att_Out:*fp32", "stride_req_to_tokens_b:i32", "stride_qbs:i32", "stride_qh:i32",
             "stride_buf_kpbs:i32", "stride_buf_kbs:i32", "stride_buf_kh:i32", "stride_buf_vpbs:i32",
             "stride_buf_vbs:i32", "stride_buf_vh:i32", "stride_mid_ob:i32", "stride_mid_oh:i32",
             "stride_mid_os:i32", "k_scale:*fp32", "v_scale:*fp32", f"kv_group_num:{C}", f"q_head_num:{C}",
             f"BLOCK_DMODEL:{C}", f"BLOCK_DPE:{C}", f"BLOCK_DV:{C}", f"BLOCK_N:{C}", f"BLOCK_H:{C}",
             f"NUM_KV_SPLITS:{C}", f"PAGE_SIZE:{C}", f"logit_cap:{C}", f"Lk:{C}", f"Lv:{C}", f"IS_MLA:{C}"),
        {"kv_group_num": 4, "q_head_num": 8, "BLOCK_DMODEL": 128, "BLOCK_DPE": 0, "BLOCK_DV": 128, "BLOCK_N": 16,
         "BLOCK_H": 16, "NUM_KV_SPLITS": 4, "PAGE_SIZE": 16, "logit_cap": 0.0, "Lk": 128, "Lv": 128,
         "IS_MLA": False},
        {"num_warps": 4, "num_stages": 1, "waves_per_eu": 1, "matrix_instr_nonkdim": 16, "kpack": 2},
        "decode-attention", "_decode_grouped_att_m_fwd on HIP: BLOCK_N 16, BLOCK_H 16, num_stages 1, "
                            "waves_per_eu 1, matrix_instr_nonkdim 16, kpack 2; GQA 8 q heads / 2 kv heads, "
                            "head 128, page 16, 4 KV splits",
        "paged GQA decode attention, stage 1: per-split partial softmax(QK^T)V and log-sum-exp (MFMA)"),
    "vllm_decode_attention_stage2": Recipe(
        "vllm", "vllm/v1/attention/ops/triton_decode_attention.py", "_fwd_kernel_stage2",
        _sig("Mid_O:*fp32", "o:*bf16", "lse:*fp32", "B_Seqlen:*i32", "stride_mid_ob:i32", "stride_mid_oh:i32",
             "stride_mid_os:i32", "stride_obs:i32", "stride_oh:i32", "stride_lse_bs:i32", f"NUM_KV_SPLITS:{C}",
             f"BLOCK_DV:{C}", f"Lv:{C}", f"OUTPUT_FP16:{C}"),
        {"NUM_KV_SPLITS": 4, "BLOCK_DV": 128, "Lv": 128, "OUTPUT_FP16": 0},
        {"num_warps": 4, "num_stages": 2, "waves_per_eu": 4, "matrix_instr_nonkdim": 16, "kpack": 2},
        "decode-attention", "_decode_softmax_reducev_fwd on HIP: num_warps 4, num_stages 2, waves_per_eu 4",
        "paged decode attention, stage 2: merge the KV-split partials into the output and its LSE"),
    "vllm_prefill_attention": Recipe(
        "vllm", "vllm/v1/attention/ops/triton_prefill_attention.py", "_fwd_kernel",
        _sig("Q:*bf16", "K:*bf16", "V:*bf16", "Sinks:*bf16", "sm_scale:fp32", "B_Start_Loc:*i32",
             "B_Seqlen:*i32", "Out:*bf16", "stride_qbs:i32", "stride_qh:i32", "stride_kbs:i32", "stride_kh:i32",
             "stride_vbs:i32", "stride_vh:i32", "stride_obs:i32", "stride_oh:i32", f"kv_group_num:{C}",
             f"BLOCK_M:{C}", f"BLOCK_DMODEL:{C}", f"BLOCK_N:{C}", f"IS_CAUSAL:{C}", f"SLIDING_WINDOW_Q:{C}",
             f"SLIDING_WINDOW_K:{C}", f"SINKS_BIAS_KEY0:{C}", f"USE_SINKS:{C}", f"Lk:{C}"),
        {"kv_group_num": 2, "BLOCK_M": 128, "BLOCK_DMODEL": 64, "BLOCK_N": 128, "IS_CAUSAL": True,
         "SLIDING_WINDOW_Q": 0, "SLIDING_WINDOW_K": 0, "SINKS_BIAS_KEY0": False, "USE_SINKS": False, "Lk": 64},
        {"num_warps": 4, "num_stages": 1},
        "prefill-attention", "context_attention_fwd: BLOCK 128 (bf16, capability >= 8.0), head 64 -> num_warps 4, "
                             "num_stages 1; causal, GQA 4 q heads / 2 kv heads",
        "varlen causal prefill attention over packed sequences (flash-attention style, MFMA)"),
    "vllm_merge_attn_states": Recipe(
        "vllm", "vllm/v1/attention/ops/triton_merge_attn_states.py", "merge_attn_states_kernel",
        _sig("output:*bf16", "output_lse:*fp32", "prefix_output:*bf16", "prefix_lse:*fp32", "suffix_output:*bf16",
             "suffix_lse:*fp32", "prefix_head_stride:i32", "output_head_stride:i32", "prefix_lse_head_stride:i32",
             f"prefix_lse_token_stride:{C}", "suffix_lse_head_stride:i32", f"suffix_lse_token_stride:{C}",
             "output_lse_head_stride:i32", f"output_lse_token_stride:{C}", f"output_scale:{C}",
             "prefill_tokens_with_context:i32", f"HEAD_SIZE:{C}", f"PADDED_HEAD_SIZE:{C}", f"OUTPUT_LSE:{C}",
             f"USE_FP8:{C}", f"FP8_MIN:{C}", f"FP8_MAX:{C}"),
        {"prefix_lse_token_stride": 1, "suffix_lse_token_stride": 1, "output_lse_token_stride": 1,
         "output_scale": None, "HEAD_SIZE": 128, "PADDED_HEAD_SIZE": 128, "OUTPUT_LSE": True, "USE_FP8": False,
         "FP8_MIN": -240.0, "FP8_MAX": 240.0},
        {"num_warps": 4},
        "attention-merge", "merge_attn_states: grid (tokens, heads), default num_warps; lse [heads, tokens]",
        "merge prefix and suffix attention partials by their log-sum-exps (cascade / chunked prefill)"),
    "vllm_per_token_group_quant_fp8": Recipe(
        "vllm", "vllm/model_executor/layers/quantization/utils/fp8_utils.py", "_per_token_group_quant_fp8",
        _sig("y_ptr:*bf16", "y_q_ptr:*fp8e4b8", "y_s_ptr:*fp32", "group_size:i32", "y_num_columns:i32",
             "y_row_stride:i32", "eps:fp32", f"fp8_min:{C}", f"fp8_max:{C}", f"use_ue8m0:{C}", f"BLOCK:{C}"),
        {"fp8_min": -240.0, "fp8_max": 240.0, "use_ue8m0": False, "BLOCK": 128},
        {"num_warps": 1, "num_stages": 1},
        "fp8-quant", "per_token_group_quant_fp8 Triton fallback: group 128 -> BLOCK 128, num_warps "
                     "min(max(BLOCK // 256, 1), 8) = 1; ROCm float8_e4m3fnuz (max 240)",
        "per-token-group (128) dynamic quantization of bf16 activations to fp8 e4m3fnuz with fp32 scales"),
    "vllm_scaled_mm_int8": Recipe(
        "vllm", "vllm/model_executor/layers/quantization/compressed_tensors/triton_scaled_mm.py", "scaled_mm_kernel",
        _sig("a_ptr:*i8", "b_ptr:*i8", "scale_a_ptr:*fp32", "scale_b_ptr:*fp32", "c_ptr:*bf16", f"bias_ptr:{C}",
             "M:i32", "N:i32", "K:i32", "stride_am:i32", f"stride_ak:{C}", "stride_bk:i32", f"stride_bn:{C}",
             "stride_cm:i32", f"stride_cn:{C}", f"ACCUMULATOR_DTYPE:{C}", f"BLOCK_SIZE_M:{C}", f"BLOCK_SIZE_N:{C}",
             f"BLOCK_SIZE_K:{C}", f"BLOCK_SIZE_SCALE_A:{C}", f"BLOCK_SIZE_SCALE_B:{C}", f"USE_TD:{C}", f"B_T:{C}"),
        {"bias_ptr": None, "stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "ACCUMULATOR_DTYPE": "tl.int32",
         "BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 256, "BLOCK_SIZE_SCALE_A": 64,
         "BLOCK_SIZE_SCALE_B": 64, "USE_TD": False, "B_T": False},
        {"num_warps": 4},
        "scaled-mm", "triton_scaled_mm heuristic for M <= 32, N < 8192: tile (64, 64, 256); per-token scale_a, "
                     "per-channel scale_b, int32 accumulator",
        "w8a8 int8 GEMM with per-token and per-channel fp32 scales, bf16 output (MFMA i8)"),
    "vllm_fused_moe": Recipe(
        "vllm", "vllm/model_executor/layers/fused_moe/fused_moe.py", "fused_moe_kernel",
        _sig("a_ptr:*bf16", "b_ptr:*bf16", "c_ptr:*bf16", f"b_bias_ptr:{C}", f"a_scale_ptr:{C}", f"b_scale_ptr:{C}",
             "topk_weights_ptr:*fp32", "sorted_token_ids_ptr:*i32", "expert_ids_ptr:*i32",
             "num_tokens_post_padded_ptr:*i32", "N:i32", "K:i32", "EM:i32", "num_valid_tokens:i32",
             "stride_am:i32", f"stride_ak:{C}", "stride_be:i32", f"stride_bk:{C}", "stride_bn:i32",
             "stride_cm:i32", f"stride_cn:{C}", "stride_asm:i32", "stride_ask:i32", "stride_bse:i32",
             "stride_bsk:i32", "stride_bsn:i32", "stride_bbe:i32", "stride_bbn:i32", f"group_n:{C}",
             f"group_k:{C}", f"naive_block_assignment:{C}", f"BLOCK_SIZE_M:{C}", f"BLOCK_SIZE_N:{C}",
             f"BLOCK_SIZE_K:{C}", f"GROUP_SIZE_M:{C}", f"SPLIT_K:{C}", f"MUL_ROUTED_WEIGHT:{C}", f"top_k:{C}",
             f"compute_type:{C}", f"use_fp8_w8a8:{C}", f"use_int8_w8a8:{C}", f"use_int8_w8a16:{C}",
             f"per_channel_quant:{C}", f"HAS_BIAS:{C}", f"SWAP_AB:{C}", f"USE_TD:{C}"),
        {"b_bias_ptr": None, "a_scale_ptr": None, "b_scale_ptr": None, "stride_ak": 1, "stride_bk": 1,
         "stride_cn": 1, "group_n": 0, "group_k": 0, "naive_block_assignment": False, "BLOCK_SIZE_M": 16,
         "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "SPLIT_K": 1, "MUL_ROUTED_WEIGHT": False,
         "top_k": 2, "compute_type": "tl.bfloat16", "use_fp8_w8a8": False, "use_int8_w8a8": False,
         "use_int8_w8a16": False, "per_channel_quant": False, "HAS_BIAS": False, "SWAP_AB": False,
         "USE_TD": False},
        {"num_warps": 2, "num_stages": 2, "waves_per_eu": 0, "matrix_instr_nonkdim": 16, "kpack": 2},
        "fused-moe", "invoke_fused_moe_triton_kernel with configs/E=8,N=14336,device_name=AMD_Instinct_MI300X.json "
                     "entry M=16 (BLOCK 16x64x64, GROUP 1, 2 warps, kpack 2); bf16, top_k 2, w13 GEMM",
        "fused MoE grouped GEMM over tokens sorted by expert (bf16, MFMA)"),
    "vllm_lora_shrink": Recipe(
        "vllm", "vllm/lora/ops/triton_ops/lora_shrink_op.py", "_lora_shrink_kernel",
        _sig("input_ptr:*bf16", "lora_ptr:*bf16", "out_ptr:*fp32", "M:i32", "N:i32", "K:i32",
             "token_indices_sorted_by_lora_ids:*i32", "num_tokens_per_lora:*i32", "lora_token_start_loc:*i32",
             "lora_ids:*i32", "scaling:fp32", "input_d0_stride:i32", f"input_d1_stride:{C}", "lora_d0_stride:i32",
             "lora_d1_stride:i32", f"lora_d2_stride:{C}", "output_d0_stride:i32", "output_d1_stride:i32",
             f"output_d2_stride:{C}", f"BLOCK_M:{C}", f"BLOCK_N:{C}", f"BLOCK_K:{C}", f"EVEN_K:{C}", f"SPLIT_K:{C}",
             f"GROUP_SIZE_M:{C}", f"SLICE_NUM:{C}", f"USE_GDC:{C}", f"launch_pdl:{C}", f"STORE_PARTIALS:{C}",
             "output_split_stride:i32", f"PARTIAL_N:{C}", f"PARTIAL_K:{C}"),
        {"input_d1_stride": 1, "lora_d2_stride": 1, "output_d2_stride": 1, "BLOCK_M": 32, "BLOCK_N": 16,
         "BLOCK_K": 32, "EVEN_K": True, "SPLIT_K": 8, "GROUP_SIZE_M": 8, "SLICE_NUM": 1, "USE_GDC": False,
         "launch_pdl": False, "STORE_PARTIALS": False, "PARTIAL_N": 0, "PARTIAL_K": 0},
        {"num_warps": 4, "num_stages": 2},
        "lora", "get_lora_op_configs('shrink') default for batch >= 128: 32x16x32, split_k 8, 4 warps, 2 stages; "
                "one slice; hidden a multiple of 256 (EVEN_K)",
        "punica LoRA shrink: out[slice, tok, :] += scaling * x[tok] @ A[lora]^T, split-K with fp32 atomics"),
    "vllm_lora_expand": Recipe(
        "vllm", "vllm/lora/ops/triton_ops/lora_expand_op.py", "_lora_expand_kernel",
        _sig("input_ptr:*fp32", "lora_ptr:*bf16", "out_ptr:*bf16", "M:i32", "N:i32", "K:i32",
             "token_indices_sorted_by_lora_ids:*i32", "num_tokens_per_lora:*i32", "lora_token_start_loc:*i32",
             "lora_ids:*i32", "slice_start_loc:i32", "input_d0_stride:i32", "input_d1_stride:i32",
             f"input_d2_stride:{C}", "ls_d0_ptr:i32", "ls_d1_ptr:i32", f"ls_d2_ptr:{C}", "output_d0_stride:i32",
             f"output_d1_stride:{C}", "output_hs_ptr:i32", f"BLOCK_M:{C}", f"BLOCK_N:{C}", f"BLOCK_K:{C}",
             f"EVEN_K:{C}", f"ADD_INPUTS:{C}", f"CAST_TYPE:{C}", f"SLICE_NUM:{C}", f"SAME_STRIDE:{C}",
             f"USE_GDC:{C}", f"launch_pdl:{C}"),
        {"input_d2_stride": 1, "ls_d2_ptr": 1, "output_d1_stride": 1, "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32,
         "EVEN_K": False, "ADD_INPUTS": True, "CAST_TYPE": True, "SLICE_NUM": 1, "SAME_STRIDE": True,
         "USE_GDC": False, "launch_pdl": False},
        {"num_warps": 4, "num_stages": 2},
        "lora", "get_lora_op_configs('expand') default with one slice: 64x128x32, 4 warps, 2 stages; rank 16 "
                "(EVEN_K False); fp32 shrink output as input -> CAST_TYPE; add_inputs",
        "punica LoRA expand: y[tok, :] += x[slice, tok] @ B[lora]^T (fp32 input cast to bf16, MFMA)"),
}
