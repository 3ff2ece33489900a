#!/usr/bin/env python3
"""Writes every problem.yaml and launch/*.json of the AITer suite from the tables below.

    python benchmarks/production/aiter/specs.py && python benchmarks/production/aiter/build.py --update

Each kernel takes AITer's host-packed `struct __attribute__((packed)) KernelArgs` (see the problem's
`source`, a host file of the wheel) as the whole kernarg area; `layout()` (asmevo.calibrate.aiter_launches,
shared with the calibration rows) transcribes such a struct field by field and the launch spec carries it as
a `struct` arg.
Grids and blocks are those the host code launches with.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from asmevo.calibrate.aiter_launches import (a8w8_m128, bf16gemm, buf, cdiv, fmoe_g1u1,  # noqa: E402
                                             fmoe_stage1, layout, null, ptr, slot)
from asmevo.calibrate.moe_routing import route  # noqa: E402

ROUTING = ("sorted_token_ids", "sorted_weights", "sorted_expert_ids", "num_valid_ids")
VERSION = "0.1.7.post2.dev18"
CO = f"cache:aiter/extract-{VERSION}/aiter_meta/hsa/gfx942/"
HOST = f"cache:aiter/host-{VERSION}/aiter_meta/"
# ---- launch builders: shape parameters -> (grid, block, struct arg) -------------------------------------

def topksoftmax(tokens):
    experts, topk, subm = 128, 8, 4
    rows = cdiv(tokens, 4) * 4
    s = layout([*ptr(buf("topk_ids", "int32", [rows, topk], "zeros")),
                *ptr(buf("topk_weights", "float32", [rows, topk], "zeros")),
                *ptr(buf("gating", "float32", [tokens, experts])),
                *slot("u32", "batch", tokens), *slot("u32", "expert", experts), *slot("u32", "topk", topk),
                *slot("u32", "renormalize", 1), *slot("u32", "out_stride", topk * 4)])
    return [cdiv(tokens, subm), 1, 1], [256, 1, 1], s


def layer_norm(rows):
    n = 8192
    s = layout([*ptr(buf("out", "bfloat16", [rows, n], "zeros")), *ptr(buf("x", "bfloat16", [rows, n])),
                *ptr(buf("weight", "bfloat16", [n])), *ptr(buf("bias", "bfloat16", [n])),
                *slot("f32", "epsilon", 1e-5), *slot("u32", "M", rows), *slot("u32", "N", n),
                *ptr(buf("residual_out", "bfloat16", [rows, n], "zeros")),
                *ptr(buf("residual_in", "bfloat16", [rows, n])),
                *null("ptr_OutYScale"), *null("ptr_XScale")])
    return [cdiv(rows, 2), 1, 1], [256, 1, 1], s


def paged_attention(batch, kv_heads, max_blocks, num_blocks):
    gqa, d, block, x = 8, 128, 16, 8
    heads = kv_heads * gqa
    log2e_over_sqrt_d = 1.4426950408889634 / d ** 0.5
    s = layout([*ptr(buf("out", "bfloat16", [batch, heads, d], "zeros")), *ptr(buf("q", "bfloat16", [batch, heads, d])),
                *ptr(buf("k_cache", "bfloat16", [num_blocks, kv_heads, d // x, block, x])),
                *ptr(buf("v_cache", "bfloat16", [num_blocks, kv_heads, block // x, d, x])),
                *ptr(buf("block_tables", "int32", [batch, max_blocks], "zeros")),
                *ptr(buf("context_lens", "int32", [batch], "zeros")), *null("ptr_KQ"), *null("ptr_VQ"),
                *slot("f32", "sclg2e", log2e_over_sqrt_d), *slot("u32", "mblk", max_blocks),
                *slot("u32", "kv_nheads", kv_heads), *slot("u32", "Qs", heads * d * 2),
                *slot("u32", "Bs", kv_heads * d * block * 2), *slot("u32", "KVs", d * block * 2),
                *slot("u32", "GQA", gqa), *null("ptr_QTP")])
    return [kv_heads, batch, 1], [256, 1, 1], s


def i8gemm(m, n, k):
    s = layout([*ptr(buf("C", "bfloat16", [m, n], "zeros")), *ptr(buf("A", "int8", [m, k])),
                *ptr(buf("B", "int8", [n, k])), *ptr(buf("a_scale", "float32", [m])),
                *ptr(buf("b_scale", "float32", [n])), *ptr(buf("bias", "float32", [n])),
                *slot("u32", "m", m), *slot("u32", "n", n), *slot("u32", "k", k), *slot("u32", "lda", k),
                *slot("u32", "ldb", k), *slot("u32", "ldc", n * 2), *slot("u32", "ks", 1)])
    return [n // 128, cdiv(m, 128), 1], [256, 1, 1], s


def fmha_fwd(batch, seq_q, seq_k, heads, kv_heads):
    d = 128
    q_row, kv_row = heads * d * 2, kv_heads * d * 2
    s = layout([*ptr(buf("out", "bfloat16", [batch, seq_q, heads, d], "zeros")),
                *ptr(buf("q", "bfloat16", [batch, seq_q, heads, d])),
                *ptr(buf("k", "bfloat16", [batch, seq_k, kv_heads, d])),
                *ptr(buf("v", "bfloat16", [batch, seq_k, kv_heads, d])),
                *ptr(buf("lse", "float32", [batch, heads, seq_q], "zeros")),
                *slot("f32", "scalar", 1 / d ** 0.5), *slot("u32", "seq_len", seq_q), *slot("u32", "Seqs", q_row),
                *slot("u32", "Ts", 256 * q_row), *slot("u32", "Hs", d * 2), *slot("u32", "Bs", seq_q * q_row),
                *slot("u32", "gqa", heads // kv_heads), *slot("u32", "k_Seqs", kv_row), *slot("u32", "k_Hs", d * 2),
                *slot("u32", "k_Bs", seq_k * kv_row), *slot("u32", "opt", 5), *slot("u32", "store_lse", 1),
                *slot("u32", "kv_seq_len", seq_k), *slot("u32", "qk_head_dim", d), *slot("u32", "v_head_dim", d),
                *slot("u32", "q_head_num", heads), *slot("u32", "v_Seqs", kv_row), *slot("u32", "v_Hs", d * 2),
                *slot("u32", "v_Bs", seq_k * kv_row), *slot("u32", "o_Seqs", q_row), *slot("u32", "o_Hs", d * 2),
                *slot("u32", "o_Bs", seq_q * q_row), *null("ptr_qseq"), *null("ptr_kseq"),
                *slot("u32", "lse_Hs", seq_q * 4), *null("ptr_qseq_padding"), *null("ptr_kseq_padding")])
    return [cdiv(seq_q, 256), heads, batch], [512, 1, 1], s


def mla_decode(batch, kv_split, pages):
    heads, d, dv = 16, 576, 512
    s = layout([*ptr(buf("split_out", "float32", [batch, kv_split, heads, dv], "zeros")),
                *ptr(buf("split_lse", "float32", [batch, kv_split, heads, 1], "zeros")),
                *ptr(buf("q", "bfloat16", [batch, heads, d])), *ptr(buf("kv", "bfloat16", [pages, 1, 1, d])),
                *ptr(buf("kv_indptr", "int32", [batch + 1], "zeros")),
                *ptr(buf("kv_page_indices", "int32", [batch * pages], "zeros")),
                *ptr(buf("kv_last_page_lens", "int32", [batch], "ones")),
                *slot("f32", "scalar", 1 / d ** 0.5), *slot("u32", "s_MQA", heads), *slot("u32", "kv_split", kv_split),
                *slot("u32", "Q_Bs", heads * d * 2), *slot("u32", "Bs", d * 2), *slot("u32", "log2_plen", 0)])
    return [1, batch, kv_split], [256, 1, 1], s


def flatmm_fp8(m, n, k):
    fp8 = "float8_e4m3fnuz"
    s = layout([("ptr", buf("A", fp8, [m, k])), ("ptr", buf("B", fp8, [n, k])), ("ptr", None, "c_ptr"),
                ("ptr", buf("a_scale", "float32", [k // 128, m])), ("ptr", buf("b_scale", "float32", [k // 128, n // 128])),
                ("ptr", None, "d_ptr"), ("ptr", buf("D", "float16", [m, n], "zeros")), ("ptr", None, "dbg_int_ptr"),
                ("ptr", None, "dbg_fp8_ptr"), ("ptr", None, "dbg_f16_ptr"), ("ptr", None, "dbg_fp32_ptr"),
                ("i32", "hidden_size", k), ("i32", "intermediate_size", n), ("i32", "num_tokens", m),
                ("i32", "num_experts", 0), ("i32", "topk", 0), ("i32", "stride_token", 0)])
    return [n // 256, cdiv(m, 128), 1], [256, 1, 1], s


def moe_routing(tokens, experts, topk, block_m, launch_dir: Path | None, shape: str) -> dict[str, str]:
    """Routing inits of an fmoe launch: verify/heldout buffers are zeros that the problem's generate() replaces with
    a routing drawn per trial; a bench launch (`launch_dir` given) reads the tuner-style routing
    (asmevo.calibrate.moe_routing.route, seed 0) from .npy files it writes beside its spec."""
    routing = {n: "zeros" for n in ROUTING}
    if launch_dir is not None:
        r = route(tokens, experts, topk, block_m, 0)
        for n in ROUTING:
            np.save(launch_dir / f"{shape}_{n}.npy", getattr(r, n))
            routing[n] = f"file:{shape}_{n}.npy"
    return routing


def moe_stage1(tile_m: int, tile_n: int, doweight: bool):
    """A builder for an fmoe_stage1 kernel (routing: `moe_routing`)."""
    def build(tokens, dim, inter, experts, topk, launch_dir: Path | None = None, shape: str = ""):
        routing = moe_routing(tokens, experts, topk, tile_m, launch_dir, shape)
        return fmoe_stage1(tokens, dim, inter, experts, topk, tile_m, tile_n, routing, doweight=doweight)
    build.writes_routing = True
    return build


def moe_1stage(block_m: int, sub_gu: int):
    """A builder for a one-stage fmoe_g1u1 kernel, not persistent (routing: `moe_routing`)."""
    def build(tokens, dim, inter, experts, topk, launch_dir: Path | None = None, shape: str = ""):
        routing = moe_routing(tokens, experts, topk, block_m, launch_dir, shape)
        return fmoe_g1u1(tokens, dim, inter, experts, topk, block_m, sub_gu, routing)
    build.writes_routing = True
    return build


# ---- problems ------------------------------------------------------------------------------------------

BF16_TOL = {"atol": 1e-2, "rtol": 1.6e-2}
HAZARD = "the shipped assembly lacks wait states LLVM's gfx940 hazard recognizer requires ({rules}); the emulator " \
         "computes the architecturally intended result, which matches the reference"

def moe_stage1_problem(doweight: bool) -> dict:
    """fmoe_stage1_bf16_pertokenFp8[_doweight]_g1u1_32x128_3tg_pf3: the two-stage fused MoE's stage 1."""
    tag = "_doweight" if doweight else ""
    name = f"fmoe_stage1_bf16_pertokenFp8{tag}_g1u1_32x128_3tg_pf3"
    weighted = ("gate and up each times the entry's routing weight (doweight_stage1), then " if doweight else "")
    return dict(
        builder=moe_stage1(32, 128, doweight), co=f"fmoe_2stages/{name}.co", kernel=f"_ZN5aiter{len(name)}{name}E",
        source="csrc/py_itfs_cu/asm_moe_2stage.cu", family="fused-moe-stage1", dtype="bfloat16", outputs=["out"],
        tolerance={"atol": 1e-2, "rtol": 1.6e-2},
        tolerance_reason="fp8 products accumulated in fp32, per-token/per-channel scales, SiLU, bf16 output (O(1) "
                         "values: x ~ N(0, 1), w1 ~ N(0, 1 / dim))",
        description="MoE stage 1 of the two-stage fused MoE: per routed (token t, slot s, expert e), gate = x[t] . "
                    "w1[e, :inter]^T and up = x[t] . w1[e, inter:]^T (fp8 e4m3fnuz codes times per-token / per-channel "
                    f"scales), {weighted}out[t, s] = silu(gate) * up in bf16; x [tokens, dim], w1 [E, 2 inter, dim] "
                    "pre-shuffled (16, 16), out [tokens, topk, inter]; 32-entry blocks of moe_sorting, 128-wide "
                    "inter tiles",
        why="moe_stage1_g1u1 (asm_moe_2stage.cu) from fused_moe.py asm_stage1 (per_Token): KernelArgs O, X, GU, XC = "
            "num_valid_ids, XQ, GUQ, SMQ null, STP, SEP, dim, hidden_dim, token_cnt, eprt_cnt, strides in bytes (Xs = "
            "GUs = dim, Os = topk inter 2, eGUs = 2 inter dim, eGUQs = 2 inter 4, eSMQs = inter 4), topk, splitk 0, "
            f"activation 0 (silu), SW {'= sorted_weights' if doweight else 'null'}; grid (inter / 128, "
            "len(sorted_expert_ids), 1), 256 threads; routing as the MoE tuner draws it (fused_topk of normal "
            "scores, moe_sorting with block 32)",
        known_findings={"hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... lds; "
                                                      "valu-sgpr-valu"),
                        "out_of_bounds": "the w1 tile loads (buffer_load_dwordx4 through V# s[84:87], num_records "
                                         "0xfffffff0, so unbounded) prefetch past the last expert's weights, and some "
                                         "x loads by LDS DMA (buffer_load_dword ... lds through s[20:23]) fall "
                                         "outside x: data the outputs do not depend on (they match the reference)",
                        "lds_race": "ds_write_b64 stores of the gate/up staging overwrite LDS that other waves read "
                                    "with ds_read_b128 in the same barrier phase (no s_barrier in between)",
                        "waitcnt": "ds_read_b32 / ds_write_b64 touch LDS that another wave's LDS-DMA load (the next x "
                                   "tile) has not yet retired by s_waitcnt vmcnt"},
        shapes=[("v_t10_d128_i128_e2_k2", "verify", (10, 128, 128, 2, 2)),
                ("v_t33_d128_i256_e1_k1", "verify", (33, 128, 256, 1, 1)),
                ("h_t20_d128_i128_e2_k1", "heldout", (20, 128, 128, 2, 1)),
                ("bench", "bench", (256, 7168, 512, 256, 8))])

ONE_STAGE = "fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_32x256"
MOE_1STAGE = dict(
    builder=moe_1stage(32, 256), co=f"fmoe/silu/{ONE_STAGE}.co", kernel=f"_ZN5aiter{len(ONE_STAGE)}{ONE_STAGE}E",
    source="csrc/py_itfs_cu/asm_fmoe.cu", family="fused-moe-1stage", dtype="bfloat16", outputs=["out"],
    tolerance=BF16_TOL,
    tolerance_reason="fp8 products accumulated in fp32, the intermediate re-quantised to fp8 as the kernel does (a "
                     "rounding that flips only when fp32 and float64 disagree at an fp8 midpoint), SiLU, bf16 partial "
                     "sums added by bf16 atomics (O(1) values: x ~ N(0, 1), w1 ~ N(0, 1 / dim), w2 ~ N(0, 1 / inter))",
    description="one-stage fused MoE: per routed (token t, slot s, expert e, weight w), a = silu(x[t] . "
                "w1[e, :inter]^T) * (x[t] . w1[e, inter:]^T) with fp8 e4m3fnuz codes times per-token / per-channel "
                "scales, re-quantised to fp8 per 256-wide slice (amax / 240), then out[t] += w * (a . w2[e]^T) * "
                "w2_scale[e] in bf16; x [tokens, dim], w1 [E, 2 inter, dim] and w2 [E, dim, inter] pre-shuffled "
                "(16, 16), out [tokens, dim]; 32-entry blocks of moe_sorting; padded entries' atomics are skipped "
                "with s_setvskip",
    why="fmoe_g1u1 (asm_fmoe.cu, FMoeKernel::launch_kernel<uint8_t, uint16_t>) from fused_moe_bf16_asm.py asm_moe "
        "(fp8 per-token): KernelArgs O, X, GU, XC = num_valid_ids, D, XQ, GUQ, DQ, SMQ null, STP, SW, SEP, dim, "
        "inter_dim, token_cnt, eprt_cnt, strides in bytes (Xs = GUs = dim, Ds = inter, Os = 2 dim, eGUs = 2 inter dim, "
        "eDs = dim inter, eGUQs = 8 inter, eDQs = 4 dim, eSMQs = 4 inter), topk, total_tgs 0, ps_deno = inter / 256; "
        "grid (inter / 256, len(sorted_expert_ids), 1), 256 threads; dim 256 or a multiple of 512 (the K loop runs "
        "two 256-wide halves per iteration and special-cases dim 256; dim 768 computes garbage); routing as the MoE "
        "tuner draws it",
    known_findings={"hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... lds; "
                                                  "valu-sgpr-valu: v_cmp_u_f32_e64 SGPR masks read by v_cndmask_b32 "
                                                  "too soon"),
                    "out_of_bounds": "with dim 256 the K loops prefetch one tile past the operands: x by LDS DMA "
                                     "(buffer_load_dword ... lds through s[20:23], 0x379c / 0x6598) past the last "
                                     "token's row, w2 and w2_scale (buffer_load_dwordx4 through s[12:15], "
                                     "buffer_load_dword through s[16:19]; V#s with num_records 0xfffffff0, so "
                                     "unbounded) past the last expert: data the outputs do not depend on (they match "
                                     "the reference)",
                    "waitcnt": "the down projection reads its packed bf16 partial sums back from LDS with ds_read_b32 "
                               "(0x50b8 ...) and adds them with global_atomic_pk_add_bf16 (0x59d8 ...) without an "
                               "s_waitcnt lgkmcnt retiring those reads"},
    shapes=[("v_t10_d256_i256_e2_k2", "verify", (10, 256, 256, 2, 2)),
            ("v_t40_d256_i512_e1_k1", "verify", (40, 256, 512, 1, 1)),
            ("v_t24_d512_i256_e1_k1", "verify", (24, 512, 256, 1, 1)),
            ("h_t20_d256_i256_e2_k1", "heldout", (20, 256, 256, 2, 1)),
            ("bench", "bench", (16, 7168, 256, 257, 9))])

PROBLEMS = {
    "topksoftmax": dict(
        builder=topksoftmax, co="topksoftmax/topksoftmax_4x128x8.co", kernel="_ZN5aiter19topksoftmax_4x128x8E",
        source="csrc/py_itfs_cu/asm_topksoftmax.cu", family="softmax-topk", dtype="float32",
        outputs=["topk_weights", "topk_ids"], tolerance={"atol": 1e-6, "rtol": 1e-5},
        tolerance_reason="fp32 softmax over 128 experts; ids are exact integers",
        known_findings={"hazard": HAZARD.format(rules="valu-sgpr-valu: v_readlane_b32 s20 read by the next VALU")},
        description="MoE routing: softmax over 128 experts, top-8, renormalised (4 tokens per workgroup)",
        why="topk_softmax_asm: SUBM 4 for < 10000 tokens, grid cdiv(tokens, 4), 256 threads; outputs padded "
            "to a multiple of 4 rows (fused_moe.py)",
        shapes=[("v_t5", "verify", (5,)), ("v_t16", "verify", (16,)), ("h_t11", "heldout", (11,)),
                ("bench", "bench", (8192,))]),
    "layer_norm": dict(
        builder=layer_norm, co="layer_norm.co", kernel="layer_norm_kernel_func",
        source="csrc/py_itfs_cu/asm_layernorm.cu", family="norm", dtype="bfloat16",
        outputs=["out", "residual_out"], tolerance={"atol": 3e-2, "rtol": 1.6e-2},
        tolerance_reason="bf16 conversions truncate (round toward zero), and x_norm * weight cancels against the "
                         "bias, so small outputs carry up to ~2 bf16 ulps of an O(1) term",
        description="fused residual add + LayerNorm with weight and bias, bf16 rows of 8192 (2 rows per workgroup)",
        why="layernorm2d_with_add_asm: N == 8192, M even, grid cdiv(M, 2), 256 threads",
        known_findings={"lds_race": "the shipped kernel loops over its 2 rows with one barrier per row: waves "
                                    "write their partial sums for row 2 (ds_write_b32 at 0x23cc) into the slots "
                                    "other waves may still be reading for row 1, with no s_barrier in between "
                                    "(a cross-wave write-after-read race on LDS)"},
        shapes=[("v_m2", "verify", (2,)), ("v_m4", "verify", (4,)), ("h_m6", "heldout", (6,)),
                ("bench", "bench", (8192,))]),
    "bf16gemm": dict(
        builder=bf16gemm, co="bf16gemm/bf16gemm_outf32_tn_32x64_pf3.co",
        kernel="_ZN5aiter28bf16gemm_outf32_tn_32x64_pf3E", source="csrc/py_itfs_cu/asm_gemm_a16w16.cu",
        family="bf16-gemm", dtype="bfloat16", outputs=["D"], tolerance={"atol": 1e-3, "rtol": 1e-4},
        tolerance_reason="fp32 MFMA accumulation of bf16 products (fp32 output); split-K adds atomically",
        known_findings={"hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... lds")},
        description="D[M, N] (fp32) = A[M, K] @ B[N, K]^T in bf16, 32x64 tiles, optional split-K",
        why="gemm_a16w16_asm: grid (N / 64, cdiv(M, tileM), splitk), 256 threads, strides in bytes, alpha 1, "
            "beta 0, C null; splitk > 1 zeroes D first",
        shapes=[("v_m20_n64_k128", "verify", (20, 64, 128, 1)), ("v_m40_n128_k256", "verify", (40, 128, 256, 1)),
                ("h_m33_n64_k256_sk2", "heldout", (33, 64, 256, 2)), ("bench", "bench", (32, 8192, 8192, 4))]),
    "paged_attention": dict(
        builder=paged_attention, co="pa/pa_bf16_noquant_gqa8_1tg_4w.co", kernel="_ZN5aiter27pa_bf16_noquant_gqa8_1tg_4wE",
        source="csrc/py_itfs_cu/asm_pa.cu", family="paged-attention-decode", dtype="bfloat16", outputs=["out"],
        tolerance={"atol": 1.5e-2, "rtol": 2e-2},
        tolerance_reason="exp2 softmax with bf16 probabilities in the PV MFMA, bf16 output",
        known_findings={"hazard": HAZARD.format(rules="valu-sgpr-valu: v_cmp_*_e64 SGPR masks read by v_cndmask_b32 "
                                                      "one instruction later"),
                        "waitcnt": "the long-context loop (16 or more blocks, so only the bench shape) waits one load "
                                   "short: buffer_load_dword v16 of the next block-table entry (0x28b8; v17 at 0x3090, "
                                   "and 0x3870 / 0x4048 in waves 2-3's copy) is followed by 23 vector-memory loads, "
                                   "then s_waitcnt vmcnt(24) (0x2e70, 0x3648, 0x3e30, 0x4608) leaves it outstanding "
                                   "(vmcnt retires in issue order; LLVM's SIInsertWaitcnts would need vmcnt(23)), and "
                                   "v_mul_u32_u24_dpp (0x2fc4, 0x379c, 0x3f84, 0x475c) reads it after 8 more loads "
                                   "with no wait: correct only if that load has returned by timing"},
        description="paged decode attention, bf16 Q/K/V, GQA 8, head 128, block 16 (vLLM K layout, AITer V layout)",
        why="pa_fwd (pa_asm.csv: bf16/bf16, gqa 8, no mtp, block 16): grid (num_kv_heads, batch), 256 threads; "
            "K [blocks, kv_heads, d/8, 16, 8], V [blocks, kv_heads, 16/8, d, 8]; strides in bytes; "
            "sclg2e = log2(e)/sqrt(d)",
        shapes=[("v_b2_kv1", "verify", (2, 1, 3, 6)), ("v_b3_kv2", "verify", (3, 2, 2, 6)),
                ("h_b2_kv2", "heldout", (2, 2, 3, 7)), ("bench", "bench", (64, 8, 256, 16384))]),
    "i8gemm": dict(
        builder=i8gemm, co="i8gemm/I8gemm_bf16_perTokenI8_BpreShuffle_128x128.co",
        kernel="_ZN5aiter42I8gemm_bf16_perTokenI8_BpreShuffle_128x128E", source="csrc/py_itfs_cu/asm_gemm_a8w8.cu",
        family="int8-gemm", dtype="bfloat16", outputs=["C"], tolerance=BF16_TOL,
        tolerance_reason="exact int32 accumulation, fp32 per-token/per-channel scaling and bias, bf16 output",
        known_findings={"hazard": HAZARD.format(rules="dpp-vgpr, valu-sgpr-valu, salu-m0"),
                        "waitcnt": "the main loop always prefetches the next A tile by LDS DMA (beyond K it reads "
                                   "zeros), and the epilogue stages C through the same LDS (ds_write_b32 at 0x4eec, "
                                   "ds_read_b32 from 0x4f08) without an s_waitcnt vmcnt retiring those loads",
                        "lds_race": "at K = 256 the epilogue's first C staging writes "
                                    "(ds_write_b32 at 0x4724) reuse LDS other waves read in the last loop iteration, "
                                    "with no s_barrier in between"},
        description="C[M, N] (bf16) = (A[M, K] @ B[N, K]^T) * a_scale[M] * b_scale[N] + bias[N], int8 A/B with B "
                    "pre-shuffled in (32, 16) tiles, 128x128 tiles",
        why="gemm_a8w8_asm (i8gemm_bf16_perTokenI8.csv, bpreshuffle): grid (N / 128, cdiv(M, 128)), 256 threads, "
            "lda = ldb = K, ldc = 2 N bytes, ks 1; B = shuffle_weight(B, layout=(32, 16))",
        shapes=[("v_m20_n128_k256", "verify", (20, 128, 256)), ("v_m130_n256_k128", "verify", (130, 256, 128)),
                ("h_m40_n128_k384", "heldout", (40, 128, 384)), ("bench", "bench", (128, 8192, 8192))]),
    "a8w8_gemm": dict(
        builder=a8w8_m128, co="gemm_a8w8_m128_noSplitK.co", kernel="gemm_kernel_func",
        source="csrc/py_itfs_cu/asm_gemm_a8w8.cu", family="int8-gemm-m128", dtype="bfloat16", outputs=["C"],
        tolerance=BF16_TOL, tolerance_reason="exact int32 accumulation, fp32 per-token/per-channel scaling and bias, "
                                             "bf16 output",
        description="C[M, N] (bf16) = (A[M, K] @ B[N, K]^T) * a_scale[M] * b_scale[N] + bias[N], int8 A/B with B "
                    "pre-shuffled in (32, 16) tiles, 128x128 tiles, no split-K (the kernel asm_a8w8_gemm.csv times)",
        why="gemm_a8w8_asm as of ROCm/aiter 3c5bf0092eff (the host that read asm_a8w8_gemm.csv; today's "
            "asm_gemm_a8w8.cu keeps its KernelArgs): grid ((N / 128) << ks, cdiv(M, 128)), 256 threads, lda = ldb "
            "= K, ldc = 2 N bytes, ks 0 selects gemm_a8w8_m128_noSplitK.co; B = shuffle_weight(B, layout=(32, 16))",
        known_findings={"hazard": HAZARD.format(rules="dpp-vgpr, valu-sgpr-valu, salu-m0: s_mov_b32 / s_add_i32 m0 "
                                                      "right before buffer_load_dword ... lds"),
                        "out_of_bounds": "the per-token scale loads (buffer_load_dword v104-v107 at 0x21bc-0x21d4, V# "
                                         "s[72:75] with num_records 0x80000000, so unbounded) read a_scale for all 128 "
                                         "rows of the M tile (rows past M lie beyond the [M] buffer and are never "
                                         "stored), and with a single K tile (K = 128) the prefetch of the next one "
                                         "(buffer_load_dwordx4 at 0x2768-0x2828 through B's unbounded V# s[8:11], "
                                         "buffer_load_dword at 0x265c) reads past the end of the operands",
                        "waitcnt": "the main loop always prefetches the next A tile by LDS DMA (beyond K it reads "
                                   "zeros), and the epilogue stages C through the same LDS (ds_write_b32 from 0x34e0, "
                                   "ds_read_b32 from 0x37bc) without an s_waitcnt vmcnt retiring those loads",
                        "lds_race": "at K = 256 the epilogue's first C staging writes (ds_write_b32 at 0x2fd8-0x3298) "
                                    "reuse LDS other waves read in the last loop iteration, with no s_barrier in "
                                    "between",
                        "uninitialized": "(checked mode) s_and_b32 s61, s61, 0xffff at 0x213c masks a register "
                                         "nothing wrote (s[60:63] is never used as a V#), and the epilogue's "
                                         "v_add_f32_dpp row_newbcast (0x2f18-0x2f60) count as reading their "
                                         "destinations v116-v119 in lanes not yet written; a row_newbcast source is "
                                         "valid in every lane, so results do not depend on them"},
        shapes=[("v_m20_n128_k256", "verify", (20, 128, 256, 0)), ("v_m130_n256_k128", "verify", (130, 256, 128, 0)),
                ("h_m40_n128_k384", "heldout", (40, 128, 384, 0)), ("bench", "bench", (1024, 8192, 1024, 0))]),
    "fmoe_stage1_fp8": moe_stage1_problem(doweight=False),
    "fmoe_stage1_fp8_doweight": moe_stage1_problem(doweight=True),
    "fmoe_1stage_fp8": MOE_1STAGE,
    "fmha_fwd": dict(
        builder=fmha_fwd, co="fmha_v3_fwd/MI300/fwd_hd128_bf16_rtne.co", kernel="_ZN5aiter24fmha_fwd_hd128_bf16_rtneE",
        source="hsa/gfx942/fmha_v3_fwd/codegen.py", family="flash-attention-forward", dtype="bfloat16",
        outputs=["out", "lse"], tolerance={"atol": 1e-2, "rtol": 1.6e-2},
        tolerance_reason="online exp2 softmax in fp32 with bf16 probabilities in the PV MFMA, bf16 output "
                         "(round to nearest even); the fp32 log-sum-exp is compared at the same tolerance",
        known_findings={"hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... lds; "
                                                      "mfma-result-read: v_max3_f32 reads a 32x32 MFMA result 5-10 "
                                                      "wait states after it instead of 11"),
                        "waitcnt": "the KV loop writes the next V tile to LDS (ds_write_b64 at 0x5300, 0x5308) and "
                                   "passes s_barrier at 0x5314 without an s_waitcnt lgkmcnt retiring those stores",
                        "store_conflict": "with NaN/Inf inputs (verification's nan_inf set), two lanes of "
                                          "buffer_store_dword at 0x7af8 write different data to one address"},
        description="flash attention forward, no mask: O = softmax(Q K^T / sqrt(d)) V and the row log-sum-exp, "
                    "bf16 Q/K/V [batch, seq, heads, 128] with GQA, 256 query rows per workgroup",
        why="fmha_v3_fwd (asm_mha_fwd.cu -> fmha_fwd_v3_dispatcher, no mask, bf16 cvt 0 = rtne, store LSE): "
            "fmha_fwd_v3_args from csrc/include/mha_fwd.h, strides in bytes, s_Ts = 256 rows, tune_opt 5, "
            "LSE [batch, heads, seq_q]; grid (cdiv(seq_q, 256), heads, batch), 512 threads",
        shapes=[("v_b1_q70_k45_h2", "verify", (1, 70, 45, 2, 1)), ("v_b2_q33_k100_h2", "verify", (2, 33, 100, 2, 2)),
                ("v_b1_q300_k40_h1", "verify", (1, 300, 40, 1, 1)),
                ("h_b1_q50_k64_h4_g2", "heldout", (1, 50, 64, 4, 2)), ("bench", "bench", (4, 4096, 4096, 32, 8))]),
    "mla_decode": dict(
        builder=mla_decode, co="mla/mla_dec_stage1_bf16_a16w16_subQ16_mqa16.co",
        kernel="_ZN5aiter39mla_dec_stage1_bf16_a16w16_subQ16_mqa16E", source="csrc/py_itfs_cu/asm_mla.cu",
        family="mla-decode", dtype="bfloat16", outputs=["split_out", "split_lse"],
        tolerance={"atol": 2e-3, "rtol": 1e-2},
        tolerance_reason="fp32 split outputs of an exp2 softmax whose probabilities enter the PV MFMA as bf16 "
                         "(~3 significant digits); LSE in fp32",
        known_findings={"hazard": HAZARD.format(rules="valu-sgpr-valu: v_cmp_u_f32_e64 SGPR masks read by "
                                                      "v_cndmask_b32 too soon"),
                        "waitcnt": "s_waitcnt lgkmcnt(8) then s_barrier (0x32f4, 0x38d4, 0x4aac, 0x500c): the up to 8 "
                                   "LDS operations left outstanding include this wave's ds_write_b32 stores"},
        description="MLA decode stage 1 (DeepSeek latent attention, 16 heads, 1 query token): per sequence and KV "
                    "split, softmax(q kv^T * scale) kv[:, :512] over the split's tokens and its log-sum-exp; "
                    "kv [pages, 1, 1, 576] paged through kv_indptr / kv_page_indices, page size 1",
        why="mla_decode_stage1_asm_fwd (bf16/bf16, gqa 16, max_seqlen_q 1, not persistent): KernelArgs up to "
            "s_log2_plen (the kernel's 208-byte kernarg), s_MQA = 16, s_Q_Bs = Q row bytes, s_Bs = page bytes; "
            "grid (1, batch, kv_split), 256 threads; stage 2 (mla.py) merges the splits by their LSE",
        shapes=[("v_b2_s4_p100", "verify", (2, 4, 100)), ("v_b3_s2_p70", "verify", (3, 2, 70)),
                ("h_b1_s6_p110", "heldout", (1, 6, 110)), ("bench", "bench", (64, 16, 65536))]),
    "flatmm_fp8": dict(
        builder=flatmm_fp8, co="flatmm_uk_gfx9_f16f8_128x256x128_1x4x1_16x16x32.co",
        kernel="flatmm_uk_gfx9_f16f8_128x256x128_1x4x1_16x16x32", source="csrc/py_itfs_cu/asm_flatmm_a8w8_blockscale.cu",
        family="fp8-blockscale-gemm", dtype="float16", outputs=["D"], tolerance={"atol": 2e-2, "rtol": 2e-3},
        tolerance_reason="fp8 products accumulated in fp32 per 128-wide K block, scaled per block, fp16 output",
        known_findings={"hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... lds; "
                                                      "mfma-result-read: v_fmac_f32 reads a 16x16 fp8 MFMA result "
                                                      "too soon"),
                        "out_of_bounds": "the a_scale loads (buffer_load_dword v[227:230] / v[235:238] ... "
                                         "s[24:27], whose V# does not bound them) read the scales of all 128 rows of "
                                         "the M tile, so in the last K block rows past M lie beyond the [K / 128, M] "
                                         "buffer; those rows are never stored"},
        description="D[M, N] (fp16) = sum over 128-wide K blocks b of (A[:, b] @ B[:, b]^T) * a_scale[b, M] * "
                    "b_scale[b, N / 128], fp8 (e4m3fnuz) A/B with B pre-shuffled, 128x256x128 tiles",
        why="flatmm_a8w8_blockscale_asm: KernelArgs (unpadded) a, b, c (null), sa, sb, d (null), d_f16, four "
            "debug pointers (null), K, N, M; grid (N / 256, cdiv(M, 128)), 256 threads; N % 256 == 0, K % 128 == 0; "
            "B = shuffle_weight(B, layout=(16, 16))",
        shapes=[("v_m50_n256_k256", "verify", (50, 256, 256)), ("v_m130_n256_k128", "verify", (130, 256, 128)),
                ("h_m70_n512_k128", "heldout", (70, 512, 128)), ("bench", "bench", (128, 7168, 2048))]),
}


def write_problem(name: str, d: dict, here: Path = HERE, co: str = CO) -> None:
    """problem.yaml and launch/*.json of problem `name` (a PROBLEMS-style entry `d`) under `here`, its code
    object `co + d["co"]` (the gfx950 suite's specs.py writes its problems with this too)."""
    pdir = here / name
    (pdir / "launch").mkdir(parents=True, exist_ok=True)
    shapes = []
    for shape, role, params, *seed in d["shapes"]:
        files = dict(launch_dir=pdir / "launch", shape=shape) \
            if role == "bench" and getattr(d["builder"], "writes_routing", False) else {}
        grid, block, struct = d["builder"](*params, **files)
        spec = {"kernel": d["kernel"], "grid": grid, "block": block, "dynamic_lds": 0, "seed": seed[0] if seed else 0,
                "args": [struct]}
        (pdir / "launch" / f"{shape}.json").write_text(json.dumps(spec) + "\n")
        shapes.append({"name": shape, "role": role, "launch": f"launch/{shape}.json"})
    problem = {"name": name, "level": 0, "description": d["description"], "kernel": d["kernel"],
               "code_object": co + d["co"], "source": HOST + d["source"], "toolchain": "aiter-asm",
               "dtype": d["dtype"], "tolerance": d["tolerance"], "tolerance_reason": d["tolerance_reason"],
               "outputs": d["outputs"], "shapes": shapes,
               "notes": f"{d['family']}: {d['co']} from amd-aiter {VERSION}; {d['why']}"}
    if "known_findings" in d:
        problem["known_findings"] = d["known_findings"]
    (pdir / "problem.yaml").write_text(yaml.safe_dump(problem, sort_keys=False, width=110))


def write_suite(name: str, processor: str, problems: list[str], here: Path = HERE) -> None:
    """suite.yaml of an AITer suite (this one, or the gfx950 one beside it)."""
    suite = {"name": name,
             "description": f"Hand-written {processor} assembly kernels shipped in the pinned amd-aiter wheel, "
                            "launched with the packed KernelArgs structs of AITer's host code. Code objects are "
                            "fetched into benchmarks/.cache by build.py (the prepare hook), never committed.",
             "prepare": "build.py", "problems": problems}
    (here / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False, width=110))
    print(f"wrote {len(problems)} problems")


def main() -> int:
    for name, d in PROBLEMS.items():
        write_problem(name, d)
    write_suite("aiter", "gfx942", list(PROBLEMS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
