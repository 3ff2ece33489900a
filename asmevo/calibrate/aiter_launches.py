"""Launch builders for AITer's hand-written gfx942 and gfx950 kernels: shape parameters -> (grid, block, struct arg).

Each AITer host function fills a `struct __attribute__((packed)) KernelArgs` and passes it as the whole
kernarg area; `layout()` transcribes such a struct field by field (`p1`/`p2`/`p3` are AITer's 4/8/12-byte
pads) into a launch spec's `struct` arg (asmevo/suites/FORMAT.md). Each builder cites the host file and
function whose struct, strides and grid it follows (paths inside the pinned wheel).
"""
from __future__ import annotations

SIZES = {"ptr": 8, "p1": 4, "p2": 8, "p3": 12, "u32": 4, "i32": 4, "f32": 4}
SCALAR_DTYPES = {"u32": "uint32", "i32": "int32", "f32": "float32"}
FP8 = "float8_e4m3fnuz"
ACTIVATIONS = {"silu": 0, "gelu": 1}  # ActivationType, aiter_meta/csrc/include/aiter_enum.h


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def buf(name: str, dtype: str, shape, init: str = "random") -> dict:
    return {"buffer": name, "dtype": dtype, "shape": [int(s) for s in shape], "init": init}


def layout(fields: list[tuple], size: int | None = None) -> dict:
    """A struct arg from C-order fields: ("ptr", buffer-dict or name), ("ptr", None, field name) for a null
    pointer, ("u32"|"i32"|"f32", name, value), or a pad ("p1"|"p2"|"p3"). `size` pads the struct to the
    kernel's kernarg segment size."""
    out, off = [], 0
    for f in fields:
        kind = f[0]
        if kind == "ptr" and f[1] is None:
            out.append({"offset": off, "scalar": 0, "dtype": "uint64", "name": f[2]})
        elif kind == "ptr":
            ref = f[1] if isinstance(f[1], dict) else {"buffer": f[1]}
            out.append({"offset": off, **ref})
        elif kind in SCALAR_DTYPES:
            out.append({"offset": off, "scalar": f[2], "dtype": SCALAR_DTYPES[kind], "name": f[1]})
        off += SIZES[kind]
    return {"struct": out, "size": size or off}


def slot(kind: str, name: str, value) -> list[tuple]:
    """One 16-byte slot as AITer writes most fields: a value then its pad."""
    return [(kind, name, value), ("p2" if kind == "ptr" else "p3",)]


def ptr(b) -> list[tuple]:
    return [("ptr", b), ("p2",)]


def null(name: str) -> list[tuple]:
    return [("ptr", None, name), ("p2",)]


def bf16gemm(m: int, n: int, k: int, splitk: int, tile_m: int = 32):
    """bf16gemm_outf32_tn_{tile_m}x64: csrc/py_itfs_cu/asm_gemm_a16w16.cu, gemm_a16w16_asm: strides in bytes
    (A, B rows of K bf16, C rows of N fp32), alpha 1, beta 0, C null; grid (cdiv(N, 64), cdiv(M, tileM),
    splitk), 256 threads; splitk > 1 zeroes D first (the spec's zeros init)."""
    s = layout([*ptr(buf("D", "float32", [m, n], "zeros")), *null("ptr_C"),
                *ptr(buf("A", "bfloat16", [m, k])), *ptr(buf("B", "bfloat16", [n, k])),
                *slot("f32", "alpha", 1.0), *slot("f32", "beta", 0.0),
                *slot("u32", "stride_D0", 0), *slot("u32", "stride_D1", 0), *slot("u32", "stride_C0", n * 4),
                *slot("u32", "stride_C1", 0), *slot("u32", "stride_A0", k * 2), *slot("u32", "stride_A1", 0),
                *slot("u32", "stride_B0", k * 2), *slot("u32", "stride_B1", 0), *slot("u32", "M", m),
                *slot("u32", "N", n), *slot("u32", "K", k), ("u32", "splitk", splitk), ("p2",)], size=288)
    return [cdiv(n, 64), cdiv(m, tile_m), splitk], [256, 1, 1], s


def a8w8_m128(m: int, n: int, k: int, ks: int, scale_init: str = "random"):
    """gemm_a8w8_m128_{noSplitK,splitK} (`gemm_kernel_func`): the host that read asm_a8w8_gemm.csv,
    csrc/py_itfs_cu/asm_gemm_a8w8.cu gemm_a8w8_asm at ROCm/aiter 3c5bf0092eff (before the I8gemm
    heuristic replaced it): the KernelArgs of today's asm_gemm_a8w8.cu, lda = ldb = K, ldc = 2 N bytes,
    ks = log2 of the K splits; grid ((N / 128) << ks, cdiv(M, 128)), 256 threads; the splitK object
    when ks > 0. B is pre-shuffled (shuffle_weight layout (32, 16)); C bf16, per-token/per-channel scales,
    bias."""
    s = layout([*ptr(buf("C", "bfloat16", [m, n], "zeros")), *ptr(buf("A", "int8", [m, k])),
                *ptr(buf("B", "int8", [n, k])), *ptr(buf("a_scale", "float32", [m], scale_init)),
                *ptr(buf("b_scale", "float32", [n], scale_init)), *ptr(buf("bias", "float32", [n])),
                *slot("u32", "m", m), *slot("u32", "n", n), *slot("u32", "k", k), *slot("u32", "lda", k),
                *slot("u32", "ldb", k), *slot("u32", "ldc", n * 2), *slot("u32", "ks", ks)])
    return [(n // 128) << ks, cdiv(m, 128), 1], [256, 1, 1], s


def f4gemm(m: int, n: int, k: int, tile_m: int, tile_n: int):
    """f4gemm_bf16_per1x32Fp4_*_{tile_m}x{tile_n} (gfx950): csrc/py_itfs_cu/asm_gemm_a4w4.cu, gemm_a4w4_asm:
    A [M, K/2] and B [N, K/2] bytes of two fp4 (e2m1) each, their strides in fp4 elements (stride(0) * 2 = K),
    D [M, N] bf16 with stride_C0 = N (stride_D0 and the `*1` strides left 0, as the host leaves them), no bias
    (ptr_C null), alpha 1, beta 0; e8m0 block scales (one per 32 K) as aiter/utility/fp4_utils.py e8m0_shuffle
    pads them, to (cdiv(M, 256) * 256, cdiv(K / 32, 8) * 8) bytes, stride_Scale*0 that padded row; log2_k_split
    0 (every row of the table has splitK 0), so grid (cdiv(N, tile_n), cdiv(M, tile_m), 1), 256 threads.
    The fp4 and e8m0 buffers are raw bytes (uint8): launch specs have no fp4 type, and timing needs none."""
    k_scales = cdiv(k // 32, 8) * 8
    s = layout([*ptr(buf("D", "bfloat16", [m, n], "zeros")), *null("ptr_C"),
                *ptr(buf("A", "uint8", [m, k // 2])), *ptr(buf("B", "uint8", [n, k // 2])),
                *slot("f32", "alpha", 1.0), *slot("f32", "beta", 0.0),
                *slot("u32", "stride_D0", 0), *slot("u32", "stride_D1", 0), *slot("u32", "stride_C0", n),
                *slot("u32", "stride_C1", 0), *slot("u32", "stride_A0", k), *slot("u32", "stride_A1", 0),
                *slot("u32", "stride_B0", k), *slot("u32", "stride_B1", 0), *slot("u32", "M", m),
                *slot("u32", "N", n), *slot("u32", "K", k),
                *ptr(buf("scale_A", "uint8", [cdiv(m, 256) * 256, k_scales], "ones")),
                *ptr(buf("scale_B", "uint8", [cdiv(n, 256) * 256, k_scales], "ones")),
                *slot("u32", "stride_ScaleA0", k_scales), *slot("u32", "stride_ScaleA1", 0),
                *slot("u32", "stride_ScaleB0", k_scales), *slot("u32", "stride_ScaleB1", 0),
                ("i32", "log2_k_split", 0)], size=384)
    return [cdiv(n, tile_n), cdiv(m, tile_m), 1], [256, 1, 1], s


def routing_buffers(tokens: int, experts: int, topk: int, block: int, init: dict[str, str]) -> dict[str, dict]:
    """The four moe_sorting buffers (asmevo.calibrate.moe_routing), each with its init from `init`."""
    length = tokens * topk + experts * block - topk
    return {"sorted_token_ids": buf("sorted_token_ids", "int32", [length], init["sorted_token_ids"]),
            "sorted_weights": buf("sorted_weights", "float32", [length], init["sorted_weights"]),
            "sorted_expert_ids": buf("sorted_expert_ids", "int32", [cdiv(length, block)], init["sorted_expert_ids"]),
            "num_valid_ids": buf("num_valid_ids", "int32", [2], init["num_valid_ids"])}


def fmoe_stage1(tokens: int, dim: int, inter: int, experts: int, topk: int, tile_m: int, tile_n: int,
                routing: dict[str, str], *, qdtype: str = FP8, doweight: bool = False, activation: str = "silu",
                ksplit: int = 0, scale_init: str = "random"):
    """fmoe_stage1_bf16_pertoken{Fp8,Int8}[_doweight]_g1u1_{tile_m}x{tile_n}: csrc/py_itfs_cu/asm_moe_2stage.cu
    moe_stage1_g1u1, called by aiter/fused_moe.py asm_stage1 (per-tensor scales repeated to per-token).
    X [tokens, dim] and w1 [E, 2 inter, dim] quantised per token / per channel (scales [tokens, 1],
    [E, 2 inter, 1]), w1 pre-shuffled (layout (16, 16)); out [tokens, topk, inter] bf16 = act(gate) * up
    (gate and up first times the routing weight when doweight). Strides in bytes: Xs = GUs = dim, eGUs = 2 inter dim,
    Os = topk inter 2, eGUQs = 2 inter 4, eSMQs = inter 4; SMQ null, SW the sorted weights when doweight.
    Grid (cdiv(inter, tile_n), len(sorted_expert_ids), 2^ksplit), 256 threads."""
    r = routing_buffers(tokens, experts, topk, tile_m, routing)
    s = layout([*ptr(buf("out", "bfloat16", [tokens, topk, inter], "zeros")), *ptr(buf("x", qdtype, [tokens, dim])),
                *ptr(buf("w1", qdtype, [experts, 2 * inter, dim])), *ptr(r["num_valid_ids"]),
                *ptr(buf("x_scale", "float32", [tokens, 1], scale_init)),
                *ptr(buf("w1_scale", "float32", [experts, 2 * inter, 1], scale_init)), *null("ptr_SMQ"),
                *ptr(r["sorted_token_ids"]), *ptr(r["sorted_expert_ids"]),
                *slot("u32", "dim", dim), *slot("u32", "hidden_dim", inter), *slot("u32", "token_cnt", tokens),
                *slot("u32", "eprt_cnt", experts), *slot("u32", "Xs", dim), *slot("u32", "GUs", dim),
                *slot("u32", "Os", topk * inter * 2), *slot("u32", "eGUs", 2 * inter * dim),
                *slot("u32", "eGUQs", 2 * inter * 4), *slot("u32", "eSMQs", inter * 4), *slot("u32", "topk", topk),
                *slot("u32", "splitk", ksplit), *slot("u32", "activation", ACTIVATIONS[activation]),
                *(ptr(r["sorted_weights"]) if doweight else null("ptr_SW"))])
    return [cdiv(inter, tile_n), r["sorted_expert_ids"]["shape"][0], 1 << ksplit], [256, 1, 1], s


def fmoe_g1u1(tokens: int, dim: int, inter: int, experts: int, topk: int, block_m: int, sub_gu: int,
              routing: dict[str, str], *, persistent_tgs: int = 0, blockscale: bool = False,
              scale_init: str = "random"):
    """fmoe_bf16_{pertoken,blockscale}Fp8_g1u1_vs_silu_1tg[_ps]_32x{sub_gu} (one-stage fused MoE):
    csrc/py_itfs_cu/asm_fmoe.cu FMoeKernel::launch_kernel<uint8_t, uint16_t> via fmoe_g1u1 /
    fmoe_fp8_blockscale_g1u1. X [tokens, dim], w1 [E, 2 inter, dim], w2 [E, dim, inter] fp8 (pre-shuffled),
    out [tokens, dim] bf16 (zeroed). Per-token scales: x [tokens, 1], w1 [E, 2 inter, 1], w2 [E, dim, 1];
    block scales (128x128): x transposed [dim / 128, tokens], w1 [E, 2 inter / 128, dim / 128],
    w2 [E, dim / 128, inter / 128]. Strides in bytes: Xs = GUs = dim, Ds = inter, Os = 2 dim,
    eGUs = 2 inter dim, eDs = dim inter, eGUQs/eDQs = the scales' expert strides, eSMQs = 4 inter;
    ps_deno = cdiv(inter, sub_gu), total_tgs = persistent_tgs rounded down to a multiple of ps_deno.
    Grid: (persistent_tgs, 1, 1) for a persistent (`_ps`) kernel (tg_num_perCU x CUs), else
    (cdiv(inter, sub_gu), len(sorted_expert_ids), 1); 256 threads."""
    r = routing_buffers(tokens, experts, topk, block_m, routing)
    if blockscale:
        xs, w1s = [dim // 128, tokens], [experts, 2 * inter // 128, dim // 128]
        w2s = [experts, dim // 128, inter // 128]
    else:
        xs, w1s, w2s = [tokens, 1], [experts, 2 * inter, 1], [experts, dim, 1]
    ps_deno = cdiv(inter, sub_gu)
    total_tgs = persistent_tgs // ps_deno * ps_deno
    s = layout([*ptr(buf("out", "bfloat16", [tokens, dim], "zeros")), *ptr(buf("x", FP8, [tokens, dim])),
                *ptr(buf("w1", FP8, [experts, 2 * inter, dim])), *ptr(r["num_valid_ids"]),
                *ptr(buf("w2", FP8, [experts, dim, inter])), *ptr(buf("x_scale", "float32", xs, scale_init)),
                *ptr(buf("w1_scale", "float32", w1s, scale_init)), *ptr(buf("w2_scale", "float32", w2s, scale_init)),
                *null("ptr_SMQ"), *ptr(r["sorted_token_ids"]), *ptr(r["sorted_weights"]),
                *ptr(r["sorted_expert_ids"]),
                *slot("u32", "dim", dim), *slot("u32", "inter_dim", inter), *slot("u32", "token_cnt", tokens),
                *slot("u32", "eprt_cnt", experts), *slot("u32", "Xs", dim), *slot("u32", "GUs", dim),
                *slot("u32", "Ds", inter), *slot("u32", "Os", dim * 2), *slot("u32", "eGUs", 2 * inter * dim),
                *slot("u32", "eDs", dim * inter), *slot("u32", "eGUQs", w1s[1] * w1s[2] * 4),
                *slot("u32", "eDQs", w2s[1] * w2s[2] * 4), *slot("u32", "eSMQs", inter * 4),
                *slot("u32", "topk", topk), *slot("u32", "total_tgs", total_tgs), *slot("u32", "ps_deno", ps_deno)])
    if persistent_tgs and total_tgs > 0:
        return [persistent_tgs, 1, 1], [256, 1, 1], s
    return [ps_deno, r["sorted_expert_ids"]["shape"][0], 1], [256, 1, 1], s
