#!/usr/bin/env python3
"""Writes every problem.yaml and launch/*.json of the production Triton suite from the tables below.

    python benchmarks/production/triton/specs.py    # after build.py --update (dynamic LDS and symbols come
                                                    # from manifest.json)

Arguments follow each kernel's non-constexpr parameters (kernels.py) plus Triton's two trailing scratch
pointers; strides are those of contiguous torch tensors of the listed shapes, as the projects' host code
passes them. Verify/heldout shapes are emulator-sized and cut tiles unevenly; bench shapes are serving sizes.
Inputs with structure (sequence lengths, page tables, expert routing, LoRA token groups) come from each
problem's `generate()`; the scalars here are consistent with what it generates.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kernels import RECIPES  # noqa: E402

cdiv = lambda a, b: -(-a // b)  # noqa: E731
RCP_LN2 = 1.4426950408889634


def buf(name: str, dtype: str, shape, init: str = "random") -> dict:
    return {"buffer": name, "dtype": dtype, "shape": [int(s) for s in shape], "init": init}


def i32(v: int) -> dict:
    return {"scalar": int(v), "dtype": "int32"}


def f32(v: float) -> dict:
    return {"scalar": float(v), "dtype": "float32"}


SCRATCH = [buf("global_scratch", "uint8", [0], "zeros"), buf("profile_scratch", "uint8", [0], "zeros")]


def threads(name: str) -> list[int]:
    return [RECIPES[name].options["num_warps"] * 64, 1, 1]


# ---- launch builders: shape parameters -> (grid, args) -----------------------------------------------

def rms_norm(rows, cols):
    return [rows, 1, 1], [buf("x", "bfloat16", [rows, cols]), buf("w", "bfloat16", [cols]),
                          buf("y", "bfloat16", [rows, cols], "zeros"), i32(cols), i32(cols), i32(cols), f32(1e-6)]


def add_rmsnorm(rows, cols):
    return [rows, 1, 1], [buf("residual", "bfloat16", [rows, cols]), buf("delta", "bfloat16", [rows, cols]),
                          buf("w", "bfloat16", [cols]), buf("y", "bfloat16", [rows, cols], "zeros"),
                          buf("res_out", "bfloat16", [rows, cols], "zeros"), f32(1e-6),
                          i32(cols), i32(cols), i32(cols), i32(cols), i32(cols)]


def rotary(batch, seqlen, heads, seqlen_ro):
    d = 128
    x_strides = [seqlen * heads * d, heads * d, d]
    return [cdiv(seqlen, 8), heads, batch], [
        buf("out", "bfloat16", [batch, seqlen, heads, d], "zeros"), buf("x", "bfloat16", [batch, seqlen, heads, d]),
        buf("cos", "bfloat16", [seqlen_ro, d // 2]), buf("sin", "bfloat16", [seqlen_ro, d // 2]),
        i32(0), i32(seqlen), i32(d), i32(seqlen_ro), *map(i32, x_strides), *map(i32, x_strides)]


def gelu_and_mul(tokens):
    h = RECIPES["sglang_gelu_and_mul"].constexprs["hidden_dim"]
    return [tokens, 1, 1], [buf("out", "bfloat16", [tokens, h], "zeros"), buf("x", "bfloat16", [tokens, 2 * h])]


def silu_and_mul_clamp(tokens, inter):
    return [tokens, cdiv(inter, 1024), 1], [buf("x", "bfloat16", [tokens, 2 * inter]),
                                           buf("out", "bfloat16", [tokens, inter], "zeros"),
                                           i32(inter), i32(2 * inter), i32(inter), f32(7.0)]


def gemma4_routing(tokens):
    return [tokens, 1, 1], [buf("gating", "float32", [tokens, 128]), buf("expert_scale", "float32", [128]),
                            buf("topk_weights", "float32", [tokens, 8], "zeros"),
                            buf("topk_ids", "int32", [tokens, 8], "zeros"), i32(128)]


def decode_stage1(batch, max_pages, num_pages):
    heads, kv_heads, d, page, splits = 8, 2, 128, 16, 4
    kv = [num_pages, page, kv_heads, d]
    return [batch, cdiv(heads, 4), splits], [
        buf("q", "bfloat16", [batch, heads, d]), buf("k_cache", "bfloat16", kv), buf("v_cache", "bfloat16", kv),
        f32(1 / math.sqrt(d)), buf("page_table", "int32", [batch, max_pages], "zeros"),
        buf("seq_lens", "int32", [batch], "zeros"), buf("att_out", "float32", [batch, heads, splits, d + 1], "zeros"),
        i32(max_pages), i32(heads * d), i32(d), i32(page * kv_heads * d), i32(kv_heads * d), i32(d),
        i32(page * kv_heads * d), i32(kv_heads * d), i32(d), i32(heads * splits * (d + 1)), i32(splits * (d + 1)),
        i32(d + 1), buf("k_scale", "float32", [1], "ones"), buf("v_scale", "float32", [1], "ones")]


def decode_stage2(batch):
    heads, d, splits = 8, 128, 4
    return [batch, heads, 1], [
        buf("mid_o", "float32", [batch, heads, splits, d + 1]), buf("o", "bfloat16", [batch, heads, d], "zeros"),
        buf("lse", "float32", [batch, heads], "zeros"), buf("seq_lens", "int32", [batch], "zeros"),
        i32(heads * splits * (d + 1)), i32(splits * (d + 1)), i32(d + 1), i32(heads * d), i32(d), i32(heads)]


def prefill(batch, total, max_len):
    h, kvh, d = 4, 2, 64
    return [batch, h, cdiv(max_len, 128)], [
        buf("q", "bfloat16", [total, h, d]), buf("k", "bfloat16", [total, kvh, d]), buf("v", "bfloat16", [total, kvh, d]),
        {"buffer": "q"}, f32(RCP_LN2 / math.sqrt(d)), buf("start_loc", "int32", [batch], "zeros"),
        buf("seq_lens", "int32", [batch], "zeros"), buf("out", "bfloat16", [total, h, d], "zeros"),
        i32(h * d), i32(d), i32(kvh * d), i32(d), i32(kvh * d), i32(d), i32(h * d), i32(d)]


def merge_states(tokens, heads, with_context):
    d = 128
    return [tokens, heads, 1], [
        buf("out", "bfloat16", [tokens, heads, d], "zeros"), buf("out_lse", "float32", [heads, tokens], "zeros"),
        buf("prefix_out", "bfloat16", [tokens, heads, d]), buf("prefix_lse", "float32", [heads, tokens]),
        buf("suffix_out", "bfloat16", [tokens, heads, d]), buf("suffix_lse", "float32", [heads, tokens]),
        i32(d), i32(d), i32(tokens), i32(tokens), i32(tokens), i32(with_context)]


def group_quant(rows, cols):
    return [rows * cols // 128, 1, 1], [
        buf("x", "bfloat16", [rows, cols]), buf("x_q", "float8_e4m3fnuz", [rows, cols], "zeros"),
        buf("x_s", "float32", [rows, cols // 128], "zeros"), i32(128), i32(cols), i32(cols), f32(1e-10)]


def scaled_mm(m, n, k):
    return [cdiv(m, 64) * cdiv(n, 64), 1, 1], [
        buf("a", "int8", [m, k]), buf("b", "int8", [k, n]), buf("scale_a", "float32", [m, 1]),
        buf("scale_b", "float32", [n, 1]), buf("c", "bfloat16", [m, n], "zeros"), i32(m), i32(n), i32(k),
        i32(k), i32(n), i32(n)]


def fused_moe(tokens, experts, n, k):
    top_k, bm = 2, 16
    em = tokens * top_k + experts * (bm - 1)
    em = cdiv(em, bm) * bm
    return [cdiv(em, bm) * cdiv(n, 64), 1, 1], [
        buf("a", "bfloat16", [tokens, k]), buf("w", "bfloat16", [experts, n, k]),
        buf("c", "bfloat16", [tokens, top_k, n], "zeros"), buf("topk_weights", "float32", [tokens, top_k]),
        buf("sorted_token_ids", "int32", [em], "zeros"), buf("expert_ids", "int32", [em // bm], "zeros"),
        buf("num_tokens_post_padded", "int32", [1], "zeros"), i32(n), i32(k), i32(em), i32(tokens * top_k),
        i32(k), i32(n * k), i32(k), i32(n), i32(0), i32(0), i32(0), i32(0), i32(0), i32(0), i32(0)]


def lora_tables(tokens, loras):
    return [buf("token_indices", "int32", [tokens], "zeros"), buf("tokens_per_lora", "int32", [loras + 1], "zeros"),
            buf("lora_start_loc", "int32", [loras + 2], "zeros"), buf("lora_ids", "int32", [loras + 1], "zeros")]


def lora_shrink(tokens, hidden, rank, loras):
    return [8 * cdiv(tokens, 32) * cdiv(rank, 16), 1, loras + 1], [
        buf("x", "bfloat16", [tokens, hidden]), buf("lora_a", "bfloat16", [loras, rank, hidden]),
        buf("out", "float32", [1, tokens, rank], "zeros"), i32(tokens), i32(rank), i32(hidden),
        *lora_tables(tokens, loras), f32(0.5), i32(hidden), i32(rank * hidden), i32(hidden),
        i32(tokens * rank), i32(rank), i32(0)]


def lora_expand(tokens, hidden, rank, loras):
    return [cdiv(tokens, 64) * cdiv(hidden, 128), 1, loras + 1], [
        buf("x", "float32", [1, tokens, rank]), buf("lora_b", "bfloat16", [loras, hidden, rank]),
        buf("out", "bfloat16", [tokens, hidden]), i32(tokens), i32(hidden), i32(rank),
        *lora_tables(tokens, loras), i32(0), i32(tokens * rank), i32(rank), i32(hidden * rank), i32(rank),
        i32(hidden), i32(hidden)]


# ---- problems: builder, principal dtype, outputs, tolerance, shapes (name, role, params) -------------

BF16_TOL = {"atol": 1e-2, "rtol": 1.6e-2}
PROBLEMS = {
    "vllm_rms_norm": (rms_norm, "bfloat16", ["y"], BF16_TOL, "fp32 sum of squares, one bf16 rounding", [
        ("v_4x1000", "verify", (4, 1000)), ("v_3x2500", "verify", (3, 2500)), ("h_5x1536", "heldout", (5, 1536)),
        ("bench", "bench", (8192, 4096))]),
    "vllm_add_rmsnorm": (add_rmsnorm, "bfloat16", ["y", "res_out"], BF16_TOL, "res_out is the bf16-rounded sum; "
                         "y one bf16 rounding of an fp32 rsqrt-scaled row", [
        ("v_3x4096", "verify", (3, 4096)), ("v_4x2500", "verify", (4, 2500)), ("h_2x3000", "heldout", (2, 3000)),
        ("bench", "bench", (8192, 4096))]),
    "vllm_rotary": (rotary, "bfloat16", ["out"], BF16_TOL, "fp32 rotation, one bf16 rounding", [
        ("v_2x13x4", "verify", (2, 13, 4, 16)), ("v_1x30x2", "verify", (1, 30, 2, 32)),
        ("h_3x9x3", "heldout", (3, 9, 3, 12)), ("bench", "bench", (4, 2048, 32, 2048))]),
    "sglang_gelu_and_mul": (gelu_and_mul, "bfloat16", ["out"], BF16_TOL, "erf GELU in fp32, rounded to bf16 "
                            "before the product", [
        ("v_3", "verify", (3,)), ("v_5", "verify", (5,)), ("h_4", "heldout", (4,)), ("bench", "bench", (8192,))]),
    "sglang_silu_and_mul_clamp": (silu_and_mul_clamp, "bfloat16", ["out"], BF16_TOL, "fp32 exp, one bf16 rounding", [
        ("v_3x1500", "verify", (3, 1500)), ("v_4x1024", "verify", (4, 1024)), ("h_2x2000", "heldout", (2, 2000)),
        ("bench", "bench", (8192, 14336))]),
    "sglang_gemma4_routing": (gemma4_routing, "float32", ["topk_weights", "topk_ids"], {"atol": 1e-6, "rtol": 1e-5},
                              "fp32 exp and sum over 8 values; ids are exact integers", [
        ("v_5", "verify", (5,)), ("v_17", "verify", (17,)), ("h_9", "heldout", (9,)), ("bench", "bench", (8192,))]),
    "vllm_decode_attention_stage1": (decode_stage1, "bfloat16", ["att_out"], {"atol": 5e-3, "rtol": 2e-2},
                                     "softmax weights are rounded to bf16 for the PV product (MFMA)", [
        ("v_b2", "verify", (2, 4, 8)), ("v_b3", "verify", (3, 2, 6)), ("h_b2", "heldout", (2, 3, 6)),
        ("bench", "bench", (64, 256, 16384))]),
    "vllm_decode_attention_stage2": (decode_stage2, "float32", ["o", "lse"], {"atol": 1e-2, "rtol": 1.6e-2},
                                     "fp32 merge, o rounded to bf16", [
        ("v_b3", "verify", (3,)), ("v_b5", "verify", (5,)), ("h_b4", "heldout", (4,)), ("bench", "bench", (256,))]),
    "vllm_prefill_attention": (prefill, "bfloat16", ["out"], {"atol": 1.5e-2, "rtol": 2e-2},
                               "exp2 softmax with probabilities rounded to bf16 for the PV product", [
        ("v_b2_137", "verify", (2, 137, 137)), ("v_b3_150", "verify", (3, 150, 150)),
        ("h_b2_90", "heldout", (2, 90, 90)), ("bench", "bench", (16, 32768, 4096))]),
    "vllm_merge_attn_states": (merge_states, "bfloat16", ["out", "out_lse"], {"atol": 1e-2, "rtol": 1.6e-2},
                               "fp32 exp/log merge, output rounded to bf16", [
        ("v_7x4", "verify", (7, 4, 5)), ("v_12x3", "verify", (12, 3, 12)), ("h_9x2", "heldout", (9, 2, 6)),
        ("bench", "bench", (8192, 32, 4096))]),
    "vllm_per_token_group_quant_fp8": (group_quant, "bfloat16", ["x_q", "x_s"], {"exact": True},
                                       "scale and quotient are single fp32 operations, fp8 rounding is RNE", [
        ("v_5x384", "verify", (5, 384)), ("v_3x1024", "verify", (3, 1024)), ("h_7x256", "heldout", (7, 256)),
        ("bench", "bench", (8192, 7168))]),
    "vllm_scaled_mm_int8": (scaled_mm, "int8", ["c"], BF16_TOL, "int32 accumulation is exact; two fp32 scalings "
                            "and one bf16 rounding", [
        ("v_17x70x300", "verify", (17, 70, 300)), ("v_32x64x256", "verify", (32, 64, 256)),
        ("h_9x100x200", "heldout", (9, 100, 200)), ("bench", "bench", (32, 4096, 4096))]),
    "vllm_fused_moe": (fused_moe, "bfloat16", ["c"], BF16_TOL, "fp32 MFMA accumulation, one bf16 rounding", [
        ("v_t5_n96", "verify", (5, 8, 96, 64)), ("v_t9_n64", "verify", (9, 8, 64, 64)),
        ("h_t7_n80", "heldout", (7, 8, 80, 64)), ("bench", "bench", (16, 8, 28672, 4096))]),
    "vllm_lora_shrink": (lora_shrink, "bfloat16", ["out"], {"atol": 1e-4, "rtol": 1e-4},
                         "fp32 split-K partials summed by atomics in any order", [
        ("v_t20_k512", "verify", (20, 512, 16, 3)), ("v_t40_k256", "verify", (40, 256, 8, 2)),
        ("h_t13_k768", "heldout", (13, 768, 16, 2)), ("bench", "bench", (256, 4096, 16, 4))]),
    "vllm_lora_expand": (lora_expand, "bfloat16", ["out"], BF16_TOL, "fp32 input cast to bf16, fp32 MFMA, two "
                         "bf16 roundings (product, then the add)", [
        ("v_t20_n200", "verify", (20, 200, 16, 3)), ("v_t70_n128", "verify", (70, 128, 16, 2)),
        ("h_t13_n300", "heldout", (13, 300, 16, 2)), ("bench", "bench", (256, 4096, 16, 4))]),
}


KNOWN_FINDINGS = {
    "vllm_lora_shrink": {"lds_race": "the 32x16 output tile is replicated across warp pairs (4 warps, one 16x16 "
                                     "MFMA tile per pair), and both warps of a pair write the same, identical "
                                     "values into the epilogue's layout-conversion buffer in one barrier "
                                     "interval (ds_write_b32 at 0x256c)"},
}


def write_problem(name: str, manifest: dict) -> None:
    builder, dtype, outputs, tol, tol_reason, shapes = PROBLEMS[name]
    r, m = RECIPES[name], manifest[name]
    pdir = HERE / name
    (pdir / "launch").mkdir(parents=True, exist_ok=True)
    entries = []
    for shape, role, params in shapes:
        grid, args = builder(*params)
        spec = {"kernel": m["symbol"], "grid": grid, "block": threads(name), "dynamic_lds": m["dynamic_lds"],
                "seed": 0, "args": args + SCRATCH}
        (pdir / "launch" / f"{shape}.json").write_text(json.dumps(spec) + "\n")
        entries.append({"name": shape, "role": role, "launch": f"launch/{shape}.json"})
    problem = {
        "name": name, "level": 0, "description": r.description, "kernel": m["symbol"],
        "code_object": m["code_object"], "source": f"cache:triton/src/{name}.py", "toolchain": "triton",
        "dtype": dtype, "tolerance": tol, "tolerance_reason": tol_reason, "outputs": outputs, "shapes": entries,
        "notes": f"{r.family}: {r.function} from {r.member} in {r.package} {m['version']}; {r.why}",
    }
    if name in KNOWN_FINDINGS:
        problem["known_findings"] = KNOWN_FINDINGS[name]
    (pdir / "problem.yaml").write_text(yaml.safe_dump(problem, sort_keys=False, width=110))


def main() -> int:
    manifest = json.loads((HERE / "manifest.json").read_text())["problems"]
    for name in PROBLEMS:
        write_problem(name, manifest)
    suite = {"name": "triton",
             "description": "Triton kernels of vLLM and SGLang (pinned wheels), extracted by AST and compiled with "
                            "Triton 3.9 for gfx942 with the configurations those projects use on MI300X. Code "
                            "objects are built into benchmarks/.cache by build.py (the prepare hook).",
             "prepare": "build.py", "problems": list(PROBLEMS)}
    (HERE / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False, width=110))
    print(f"wrote {len(PROBLEMS)} problems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
