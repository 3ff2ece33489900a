#!/usr/bin/env python3
"""Writes every problem.yaml and launch/*.json of the AITer gfx950 (MI355X, CDNA4) suite.

    python benchmarks/production/aiter_gfx950/specs.py && python benchmarks/production/aiter_gfx950/build.py --update

The wheel's gfx950 builds take the KernelArgs of the gfx942 ones, so the launch builders, shapes, descriptions
and tolerances are the gfx942 suite's (benchmarks/production/aiter/specs.py), and so are the references where the
math is the same. Four problems run gfx950 objects whose text is byte-identical to the gfx942 build (bf16 GEMM,
paged attention, MLA decode, MoE stage 1: the processor's formats, LDS and hazard rules differ); two are CDNA4's
own kernels (flash-attention forward, the MXFP4 GEMM). fp8 is OCP E4M3 on gfx950 (`float8_e4m3fn`).
Known findings are those the gfx950 runs report (the hazard rules are LLVM's gfx950 ones).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from asmevo.calibrate.aiter_launches import f4gemm, fmoe_stage1  # noqa: E402


def _gfx942_specs():
    spec = importlib.util.spec_from_file_location("aiter_gfx942_specs", HERE.parent / "aiter" / "specs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


G = _gfx942_specs()
CO = f"cache:aiter/extract-{G.VERSION}/aiter_meta/hsa/gfx950/"
HAZARD = G.HAZARD.replace("gfx940", "gfx950")
OCP_FP8 = "float8_e4m3fn"


def moe_stage1_ocp(tile_m: int, tile_n: int):
    """The gfx942 suite's fmoe_stage1 builder with OCP fp8 x and w1."""
    def build(tokens, dim, inter, experts, topk, launch_dir: Path | None = None, shape: str = ""):
        routing = G.moe_routing(tokens, experts, topk, tile_m, launch_dir, shape)
        return fmoe_stage1(tokens, dim, inter, experts, topk, tile_m, tile_n, routing, qdtype=OCP_FP8)
    build.writes_routing = True
    return build


def twin(name: str, **changes) -> dict:
    """The gfx942 suite's problem `name`, its code object the gfx950 file of the same path."""
    return {**G.PROBLEMS[name], **changes}


F4GEMM = "f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256"
MOE = G.moe_stage1_problem(doweight=False)
PROBLEMS = {
    "bf16gemm": twin("bf16gemm", known_findings={
        "hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... lds")}),
    "paged_attention": twin("paged_attention", known_findings={
        "hazard": HAZARD.format(rules="valu-sgpr-valu: v_cmp_u_f32_e64 SGPR masks read by v_cndmask_b32 one "
                                      "instruction later"),
        # the same text at the same addresses as the gfx942 build: the same wait one load short
        "waitcnt": G.PROBLEMS["paged_attention"]["known_findings"]["waitcnt"]}),
    "mla_decode": twin("mla_decode", known_findings={
        "hazard": HAZARD.format(rules="valu-sgpr-valu: v_cmp_u_f32_e64 SGPR masks read by v_cndmask_b32 too soon"),
        "waitcnt": G.PROBLEMS["mla_decode"]["known_findings"]["waitcnt"]}),
    "fmoe_stage1_fp8": {
        **MOE, "builder": moe_stage1_ocp(32, 128),
        "description": MOE["description"].replace("fp8 e4m3fnuz", "OCP fp8 e4m3fn"),
        "tolerance_reason": MOE["tolerance_reason"].replace("fp8 products", "OCP fp8 products"),
        "why": MOE["why"] + "; x and w1 OCP E4M3 (aiter/utility/dtypes.py: fp8 is float8_e4m3fn on gfx950), "
                            "scales max|x| / 448",
        "known_findings": {**MOE["known_findings"],
                           "hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... "
                                                         "lds; valu-sgpr-valu")}},
    "fmha_fwd": twin(
        "fmha_fwd", co="fmha_v3_fwd/fwd_hd128_bf16.co", kernel="_ZN5aiter19fmha_fwd_hd128_bf16E",
        source="hsa/gfx950/fmha_v3_fwd/codegen.py",
        tolerance_reason="online exp2 softmax in fp32 with bf16 probabilities in the PV MFMA, bf16 output "
                         "(v_cvt_pk_bf16_f32, round to nearest even); the fp32 log-sum-exp is compared at the same "
                         "tolerance",
        why="fmha_v3_fwd (asm_mha_fwd.cu -> fmha_fwd_v3_dispatcher, no mask, store LSE; gfx950's codegen.py maps "
            "hd128 bf16 with either bf16_cvt to fwd_hd128_bf16.co): fmha_fwd_v3_args from csrc/include/mha_fwd.h, "
            "strides in bytes, s_Ts = 256 rows, tune_opt 5, LSE [batch, heads, seq_q]; grid (cdiv(seq_q, 256), "
            "heads, batch), 512 threads; CDNA4 instructions: v_mfma_f32_32x32x16_bf16, v_permlane16/32_swap_b32, "
            "v_cvt_pk_bf16_f32, ds_read_b64_tr_b16, 128-bit LDS DMA",
        known_findings={"hazard": HAZARD.format(
            rules="salu-m0: s_mov_b32 / s_add_u32 m0 right before buffer_load_dwordx4 ... lds; valu-sgpr-valu: "
                  "v_cmp_lt_i32_e64 SGPR masks read by v_cndmask_b32_e64 one instruction later; "
                  "valu-vgpr-permlane-swap: v_permlane16_swap_b32 swaps a VGPR v_permlane32_swap_b32 wrote one "
                  "instruction earlier")}),
    "f4gemm": dict(
        builder=lambda m, n, k: f4gemm(m, n, k, 256, 256), co=f"f4gemm/{F4GEMM}.co",
        kernel=f"_ZN5aiter{len(F4GEMM)}{F4GEMM}E", source="csrc/py_itfs_cu/asm_gemm_a4w4.cu", family="mxfp4-gemm",
        dtype="bfloat16", outputs=["D"], tolerance={"atol": 1e-2, "rtol": 1.6e-2},
        tolerance_reason="exact fp4 x fp4 products times powers of two accumulated in fp32 (order differs from "
                         "numpy's float64), bf16 output",
        description="MXFP4 GEMM: D[M, N] (bf16) = (A * 2^(sA - 127)) @ (B * 2^(sB - 127))^T with A [M, K] and "
                    "B [N, K] fp4 E2M1 (two per byte, low nibble first), one E8M0 scale per row and 32-wide K "
                    "block, scales in e8m0_shuffle's layout, B in shuffle_weight's (16, 16), 256x256 tiles; each "
                    "scaled MFMA picks its scale byte with op_sel / op_sel_hi, and its v_mfma_ld_scale prefix sets "
                    "bits 0x6000 (asmevo/emu/README_mfma.md)",
        why="gemm_a4w4_asm (a4w4_blockscale_tuned_gemm.csv's most used asm kernel at cu_num 256): KernelArgs D, C "
            "null, A, B, alpha 1, beta 0, stride_C0 = N, stride_A0 = stride_B0 = K, M, N, K, scale pointers and "
            "strides (the padded scale rows), log2_k_split 0; grid (cdiv(N, 256), cdiv(M, 256), 1), 256 threads; "
            "A and scales from dynamic_mxfp4_quant(shuffle=True), B = shuffle_weight(B, layout=(16, 16)) "
            "(op_tests/test_gemm_a4w4.py)",
        known_findings={"hazard": HAZARD.format(rules="salu-m0: s_add_u32 m0 right before buffer_load_dword ... "
                                                      "lds")},
        shapes=[("v_m100_n256_k512", "verify", (100, 256, 512)), ("v_m300_n256_k256", "verify", (300, 256, 256)),
                ("v_m64_n512_k1024", "verify", (64, 512, 1024)), ("h_m200_n512_k512", "heldout", (200, 512, 512)),
                ("bench", "bench", (4096, 8192, 2048))]),
}


def main() -> int:
    for name, d in PROBLEMS.items():
        G.write_problem(name, d, HERE, CO)
    G.write_suite("aiter_gfx950", "gfx950 (MI355X)", list(PROBLEMS), HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
