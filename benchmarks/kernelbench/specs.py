#!/usr/bin/env python3
"""Writes every problem.yaml and launch/*.json of the KernelBench suite from the table below.

    python benchmarks/kernelbench/specs.py      # after build.py (Triton dynamic LDS comes from manifest.json)

The generated files are the contract (committed); this table is only the convenient way to keep 150 launch
specs consistent with the kernels' argument lists. Bench shapes are KernelBench's sizes; verify/heldout shapes
are emulator-sized and include sizes that are not multiples of the block or tile.
"""
from __future__ import annotations

import json
from math import prod
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent
cdiv = lambda a, b: -(-a // b)  # noqa: E731


def buf(name: str, dtype: str, shape, init: str = "random") -> dict:
    return {"buffer": name, "dtype": dtype, "shape": list(shape), "init": init}


def i32(v: int) -> dict:
    return {"scalar": int(v), "dtype": "int32"}


def f32(v: float) -> dict:
    return {"scalar": float(v), "dtype": "float32"}


PROBE_WORKGROUPS = 32  # workgroups a probe shape runs on the emulator (asmevo.device.probe)
TRITON_HIDDEN = [buf("global_scratch", "uint8", [0], "zeros"), buf("profile_scratch", "uint8", [0], "zeros")]

# ---- launch builders: dims -> (grid, block, args) -------------------------------------------------

def elementwise_hip(extra=()):
    def f(rows, cols):
        n = rows * cols
        return [cdiv(n, 1024), 1, 1], [256, 1, 1], [buf("x", "float32", [rows, cols]),
                                                    buf("y", "float32", [rows, cols], "zeros"), i32(n), *extra]
    return f


def elementwise_triton(extra=()):
    def f(rows, cols):
        n = rows * cols
        return [cdiv(n, 1024), 1, 1], [256, 1, 1], [buf("x", "float32", [rows, cols]),
                                                    buf("y", "float32", [rows, cols], "zeros"), i32(n), *extra]
    return f


def rowwise(block):
    def f(rows, cols):
        return [rows, 1, 1], [block, 1, 1], [buf("x", "float32", [rows, cols]),
                                             buf("y", "float32", [rows, cols], "zeros"), i32(cols)]
    return f


def sgemm(N):
    return [cdiv(N, 64), cdiv(N, 64), 1], [256, 1, 1], [buf("A", "float32", [N, N]), buf("B", "float32", [N, N]),
                                                        buf("C", "float32", [N, N], "zeros"), i32(N)]


def matmul_f16(M, K, N):
    return [cdiv(M, 128) * cdiv(N, 128), 1, 1], [512, 1, 1], [
        buf("A", "float16", [M, K]), buf("B", "float16", [K, N]), buf("C", "float16", [M, N], "zeros"),
        i32(M), i32(N), i32(K)]


def bmm_bf16(Bt, M, K, N):
    return [cdiv(M, 64) * cdiv(N, 64), Bt, 1], [256, 1, 1], [
        buf("A", "bfloat16", [Bt, M, K]), buf("B", "bfloat16", [Bt, K, N]),
        buf("C", "bfloat16", [Bt, M, N], "zeros"), i32(M), i32(N), i32(K)]


def tall_skinny(M, K, N):
    return [cdiv(N, 64), cdiv(M, 64), 1], [256, 1, 1], [
        buf("A", "float16", [M, K]), buf("B", "float16", [K, N]), buf("C", "float16", [M, N], "zeros"),
        i32(M), i32(N), i32(K)]


def gemm_nt_bf16(M, K, N):
    return [cdiv(N, 64), cdiv(M, 64), 1], [256, 1, 1], [
        buf("A", "bfloat16", [M, K]), buf("B", "bfloat16", [N, K]), buf("C", "float32", [M, N], "zeros"),
        i32(M), i32(N), i32(K)]


def gemm_bias_relu(M, K, N):
    return [cdiv(N, 64), cdiv(M, 64), 1], [256, 1, 1], [
        buf("x", "float16", [M, K]), buf("W", "float16", [N, K]), buf("bias", "float16", [N]),
        buf("y", "float16", [M, N], "zeros"), i32(M), i32(N), i32(K)]


def linear_scale_residual(M, K, N):
    return [cdiv(M, 64), cdiv(N, 64), 1], [256, 1, 1], [
        buf("x", "float16", [M, K]), buf("W", "float16", [N, K]), buf("bias", "float16", [N]),
        buf("y", "float16", [M, N], "zeros"), i32(M), i32(N), i32(K), f32(0.5)]


def linear_div_gelu(M, K, N):
    return [cdiv(M, 64), cdiv(N, 64), 1], [256, 1, 1], [
        buf("x", "float32", [M, K]), buf("W", "float32", [N, K]), buf("bias", "float32", [N]),
        buf("y", "float32", [M, N], "zeros"), i32(M), i32(N), i32(K), f32(10.0)]


def batchnorm(N, C, H, W):
    HW = H * W
    return [cdiv(HW, 1024), C, N], [256, 1, 1], [
        buf("x", "float32", [N, C, H, W]), buf("running_mean", "float32", [C]), buf("running_var", "float32", [C]),
        buf("weight", "float32", [C]), buf("bias", "float32", [C]), buf("y", "float32", [N, C, H, W], "zeros"),
        i32(C), i32(HW), f32(1e-5)]


def groupnorm(N, C, H, W, G):
    return [N * G, 1, 1], [256, 1, 1], [
        buf("x", "float32", [N, C, H, W]), buf("weight", "float32", [C]), buf("bias", "float32", [C]),
        buf("y", "float32", [N, C, H, W], "zeros"), i32(H * W), i32(C // G), i32(G), f32(1e-5)]


def rmsnorm(B, F, H, W):
    S = H * W
    return [cdiv(S, 256), B, 1], [128, 1, 1], [buf("x", "float32", [B, F, H, W]),
                                               buf("y", "float32", [B, F, H, W], "zeros"), i32(F), i32(S), f32(1e-5)]


def layernorm(B, F, H, W):
    return [B, 1, 1], [256, 1, 1], [
        buf("x", "float32", [B, F, H, W]), buf("weight", "float32", [F, H, W]), buf("bias", "float32", [F, H, W]),
        buf("y", "float32", [B, F, H, W], "zeros"), i32(F * H * W), f32(1e-5)]


def maxpool2d(N, C, H, W, k, s, p, d):
    Ho = (H + 2 * p - d * (k - 1) - 1) // s + 1
    Wo = (W + 2 * p - d * (k - 1) - 1) // s + 1
    total = N * C * Ho * Wo
    return [cdiv(total, 256), 1, 1], [256, 1, 1], [
        buf("x", "float32", [N, C, H, W]), buf("y", "float32", [N, C, Ho, Wo], "zeros"),
        i32(H), i32(W), i32(Ho), i32(Wo), i32(k), i32(s), i32(p), i32(d), i32(total)]


def reduce_hip(out_dtype, keepdim):
    def f(B, R, C):
        oshape = [B, 1, C] if keepdim else [B, C]
        return [cdiv(C, 64), B, 1], [256, 1, 1], [buf("x", "float32", [B, R, C]),
                                                  buf("y", out_dtype, oshape, "zeros"), i32(R), i32(C)]
    return f


def reduce_triton(B, R, C):
    return [cdiv(C, 64), B, 1], [256, 1, 1], [buf("x", "float32", [B, R, C]), buf("y", "float32", [B, C], "zeros"),
                                              i32(R), i32(C)]


def conv1d(B, Cin, Cout, L):
    return [cdiv(L - 2, 64), cdiv(Cout, 16), B], [256, 1, 1], [
        buf("x", "float32", [B, Cin, L]), buf("weight", "float32", [Cout, Cin, 3]),
        buf("y", "float32", [B, Cout, L - 2], "zeros"), i32(Cin), i32(Cout), i32(L)]


def mse(rows, cols):
    n = rows * cols
    return [cdiv(n, 4096), 1, 1], [256, 1, 1], [buf("predictions", "float32", [rows, cols]),
                                                buf("targets", "float32", [rows, cols]),
                                                buf("out", "float32", [1], "zeros"), i32(n)]


def cross_entropy(B, C):
    return [B, 1, 1], [256, 1, 1], [buf("predictions", "float32", [B, C]), buf("targets", "int64", [B], "zeros"),
                                    buf("out", "float32", [1], "zeros"), i32(B), i32(C)]


# ---- shape sets ---------------------------------------------------------------------------------

ELEM = [("v_4x1024", "verify", (4, 1024)), ("v_7x333", "verify", (7, 333)), ("v_5x250", "verify", (5, 250)),
        ("v_16x4096", "verify", (16, 4096)), ("v_3x99", "verify", (3, 99)), ("h_5x777", "heldout", (5, 777)),
        # 2^31 - 1024 elements (8 GiB of float32): int32 indices near their limit, byte offsets past 2^32
        ("p_2097151x1024", "probe", ((1 << 21) - 1, 1024)), ("bench", "bench", (4096, 393216))]
ROWS = [("v_4x1000", "verify", (4, 1000)), ("v_3x257", "verify", (3, 257)), ("v_8x4096", "verify", (8, 4096)),
        ("h_6x1500", "heldout", (6, 1500)), ("p_1048575x2048", "probe", ((1 << 20) - 1, 2048)),
        ("bench", "bench", (4096, 393216))]
RED = [("v_2x64x64", "verify", (2, 64, 64)), ("v_3x37x50", "verify", (3, 37, 50)),
       ("v_4x128x100", "verify", (4, 128, 100)), ("h_2x50x70", "heldout", (2, 50, 70)),
       ("p_16383x8x16384", "probe", ((1 << 14) - 1, 8, 1 << 14)), ("bench", "bench", (128, 4096, 4095))]
MNK = [("v_64x64x64", "verify", (64, 64, 64)), ("v_70x50x90", "verify", (70, 50, 90)),
       ("v_128x128x128", "verify", (128, 128, 128)), ("h_48x100x80", "heldout", (48, 100, 80))]
NORM4 = [("v_2x4x16x16", "verify", (2, 4, 16, 16)), ("v_2x3x7x9", "verify", (2, 3, 7, 9)),
         ("v_4x8x32x32", "verify", (4, 8, 32, 32)), ("h_3x5x10x10", "heldout", (3, 5, 10, 10))]

EW_F32 = "fp32 elementwise with exp/log: a few ulp from the hardware transcendental vs. float64 numpy"

P = {}


def add(name, level, toolchain, kernel, dtype, tol, why, outputs, desc, launch, shapes):
    P[name] = dict(level=level, toolchain=toolchain, kernel=kernel, dtype=dtype, tolerance=tol,
                   tolerance_reason=why, outputs=outputs, description=desc, launch=launch, shapes=shapes)


H, T = "hip-clang19", "triton"
EXACT = {"exact": True}
add("1_Square_matrix_multiplication_", 1, H, "sgemm_nn_f32", "float32", {"atol": 1e-4, "rtol": 1e-4},
    "fp32 GEMM: accumulation order differs from float64 numpy", ["C"],
    "C = A @ B, square fp32; LDS-tiled 64x64x16, 4x4 per thread", sgemm,
    [("v_64", "verify", (64,)), ("v_100", "verify", (100,)), ("v_128", "verify", (128,)),
     ("h_80", "heldout", (80,)), ("bench", "bench", (4096,))])
add("2_Standard_matrix_multiplication_", 1, T, None, "float16", {"atol": 1e-3, "rtol": 2e-3},
    "fp16 output: fp32-accumulated result rounded to fp16 may differ by 1 fp16 ulp (~1e-3 relative)", ["C"],
    "C = A @ B with fp16 inputs/output (dtype variant of KernelBench fp32), Triton tl.dot -> MFMA", matmul_f16,
    [("v_128x64x128", "verify", (128, 64, 128)), ("v_96x112x80", "verify", (96, 112, 80)),
     ("v_33x17x65", "verify", (33, 17, 65)), ("v_120x16x130", "verify", (120, 16, 130)),
     ("h_72x100x48", "heldout", (72, 100, 48)), ("bench", "bench", (2048, 8192, 4096)),
     # N = 2^20: pid // (GROUP_M * grid_n) divides by 2^16, where the reciprocal-based quotient needs
     # its correction step (pid 2^16 + 1); M * N stays below 2^31, where Triton's int32 offsets wrap
     ("p_1152x32x1048576", "probe", (1152, 32, 1 << 20))])
add("3_Batched_matrix_multiplication", 1, T, None, "bfloat16", {"atol": 1e-2, "rtol": 1.6e-2},
    "bf16 output: 1 bf16 ulp is ~7.8e-3 relative", ["C"],
    "torch.bmm with bf16 inputs/output, fp32 accumulation, Triton tl.dot -> MFMA bf16", bmm_bf16,
    [("v_2x64x64x64", "verify", (2, 64, 64, 64)), ("v_3x50x40x70", "verify", (3, 50, 40, 70)),
     ("v_1x128x128x128", "verify", (1, 128, 128, 128)), ("h_2x80x33x48", "heldout", (2, 80, 33, 48)),
     # batch offsets b * M * K up to 2^31 - 8192 elements (4 GiB per matrix)
     ("p_524287x64x64x64", "probe", ((1 << 19) - 1, 64, 64, 64)), ("bench", "bench", (128, 512, 1024, 2048))])
add("9_Tall_skinny_matrix_multiplication_", 1, H, "hgemm_nn_mfma32", "float16", {"atol": 1e-3, "rtol": 2e-3},
    "fp16 output: 1 fp16 ulp (~1e-3 relative) from rounding the fp32 accumulator", ["C"],
    "C (M, N) = A (M, K) @ B (K, N) with small K, fp16, v_mfma_f32_32x32x8f16 via LDS", tall_skinny,
    [("v_128x32x128", "verify", (128, 32, 128)), ("v_100x10x90", "verify", (100, 10, 90)),
     ("v_64x16x200", "verify", (64, 16, 200)), ("h_96x24x80", "heldout", (96, 24, 80)),
     ("p_32768x32x65535", "probe", (32768, 32, (1 << 16) - 1)),  # M * N just below 2^31
     ("bench", "bench", (32768, 32, 32768))])
add("17_Matmul_with_transposed_B", 1, H, "gemm_nt_bf16", "bfloat16", {"atol": 1e-4, "rtol": 1e-4},
    "bf16 inputs are exact in fp32; fp32 output differs only by accumulation order", ["C"],
    "C = A @ B.T, bf16 inputs, fp32 output, MFMA 16x16x16 bf16_1k, 64x64x32 LDS tiles", gemm_nt_bf16,
    MNK + [("p_32768x32x65535", "probe", (32768, 32, (1 << 16) - 1)), ("bench", "bench", (2048, 8192, 4096))])
add("19_ReLU", 1, H, "relu_f32", "float32", EXACT, "max(x, 0) is exact", ["y"],
    "torch.relu, float4-vectorised", elementwise_hip(), ELEM)
add("20_LeakyReLU", 1, T, None, "float32", EXACT, "x * 0.01 is one correctly rounded fp32 multiply", ["y"],
    "leaky_relu(x, 0.01)", elementwise_triton([f32(0.01)]), ELEM)
add("21_Sigmoid", 1, T, None, "float32", {"max_ulp": 8}, "outputs in (0.26, 0.74): ulp error of exp + divide",
    ["y"], "torch.sigmoid", elementwise_triton(), ELEM)
add("22_Tanh", 1, T, None, "float32", {"atol": 1e-6, "rtol": 1e-5}, EW_F32, ["y"],
    "torch.tanh (ocml tanh)", elementwise_triton(), ELEM)
add("23_Softmax", 1, H, "softmax_f32", "float32", {"atol": 1e-7, "rtol": 1e-5},
    "fp32 exp and sum order; outputs are ~1/cols so atol is tiny", ["y"],
    "softmax over dim 1; block per row, DPP + LDS reductions", rowwise(256),
    ROWS[:3] + [("v_5x100", "verify", (5, 100))] + ROWS[3:])
add("24_LogSoftmax", 1, T, None, "float32", {"atol": 1e-5, "rtol": 1e-5},
    "fp32 log-sum-exp: absolute error of log(sum) ~1e-6", ["y"],
    "log_softmax over dim 1; online max/sum per row", rowwise(256), ROWS)
add("26_GELU_", 1, T, None, "float32", {"atol": 1e-6, "rtol": 1e-5}, EW_F32, ["y"],
    "exact (erf) GELU, ocml erf", elementwise_triton(), ELEM)
add("29_Softplus", 1, T, None, "float32", {"atol": 1e-6, "rtol": 1e-5}, EW_F32, ["y"],
    "softplus (beta 1, threshold 20)", elementwise_triton(), ELEM)
add("31_ELU", 1, H, "elu_f32", "float32", {"atol": 1e-6, "rtol": 1e-5},
    "exp(x) - 1 vs. float64 expm1: absolute error ~1e-7 near 0", ["y"],
    "F.elu(x, alpha=1.0), float4-vectorised", elementwise_hip([f32(1.0)]), ELEM)
add("33_BatchNorm", 1, H, "batchnorm_infer_f32", "float32", {"atol": 1e-5, "rtol": 1e-5},
    "fp32 rsqrt (v_rsq_f32, ~1 ulp) and fma", ["y"],
    "BatchNorm2d in inference mode (running statistics are inputs), eps 1e-5", batchnorm,
    NORM4 + [("bench", "bench", (64, 64, 512, 512))])
add("35_GroupNorm_", 1, T, None, "float32", {"atol": 1e-5, "rtol": 1e-4},
    "fp32 mean/variance accumulation over the group", ["y"],
    "GroupNorm(G, C) with affine weight/bias, eps 1e-5; program per (n, group)", groupnorm,
    [("v_2x8x16x16_g4", "verify", (2, 8, 16, 16, 4)), ("v_2x6x7x9_g3", "verify", (2, 6, 7, 9, 3)),
     ("v_4x16x32x32_g8", "verify", (4, 16, 32, 32, 8)), ("h_3x12x10x10_g4", "heldout", (3, 12, 10, 10, 4)),
     ("bench", "bench", (112, 64, 512, 512, 8))])
add("36_RMSNorm_", 1, T, None, "float32", {"atol": 1e-5, "rtol": 1e-5}, "fp32 sum of squares and sqrt/divide",
    ["y"], "x / sqrt(mean(x^2, dim=1) + 1e-5)", rmsnorm, NORM4 + [("bench", "bench", (112, 64, 512, 512))])
add("40_LayerNorm", 1, H, "layernorm_f32", "float32", {"atol": 1e-5, "rtol": 1e-4},
    "fp32 two-pass mean/variance over the normalised shape", ["y"],
    "LayerNorm over (features, dim1, dim2) with elementwise weight/bias, eps 1e-5", layernorm,
    NORM4 + [("bench", "bench", (16, 64, 256, 256))])
add("42_Max_Pooling_2D", 1, H, "maxpool2d_f32", "float32", EXACT, "max is exact", ["y"],
    "MaxPool2d(kernel_size, stride, padding, dilation), one output per thread", maxpool2d,
    [("v_2x4x16x16_k4s1p1d1", "verify", (2, 4, 16, 16, 4, 1, 1, 1)),
     ("v_1x3x13x11_k3s2p1d2", "verify", (1, 3, 13, 11, 3, 2, 1, 2)),
     ("v_2x2x32x32_k2s2p0d1", "verify", (2, 2, 32, 32, 2, 2, 0, 1)),
     ("h_1x4x20x20_k4s1p1d1", "heldout", (1, 4, 20, 20, 4, 1, 1, 1)),
     ("bench", "bench", (32, 64, 512, 512, 4, 1, 1, 1))])
add("47_Sum_reduction_over_a_dimension", 1, H, "sum_dim1_f32", "float32", {"atol": 1e-5, "rtol": 1e-5},
    "fp32 summation order", ["y"], "torch.sum(x, dim=1, keepdim=True)", reduce_hip("float32", True), RED)
add("48_Mean_reduction_over_a_dimension", 1, T, None, "float32", {"atol": 1e-6, "rtol": 1e-5},
    "fp32 summation order", ["y"], "torch.mean(x, dim=1)", reduce_triton, RED)
add("49_Max_reduction_over_a_dimension", 1, T, None, "float32", EXACT, "max is exact", ["y"],
    "torch.max(x, dim=1)[0]", reduce_triton, RED)
add("51_Argmax_over_a_dimension", 1, H, "argmax_dim1_f32", "int64", EXACT, "indices (inputs have no ties)",
    ["y"], "torch.argmax(x, dim=1) -> int64", reduce_hip("int64", False), RED)
add("67_conv_standard_1D", 1, H, "conv1d_k3_f32", "float32", {"atol": 1e-5, "rtol": 1e-4},
    "fp32 accumulation order over Cin * 3 products", ["y"],
    "Conv1d(Cin, Cout, kernel_size=3), stride 1, no padding, no bias; LDS input tile", conv1d,
    [("v_2x4x16x64", "verify", (2, 4, 16, 64)), ("v_1x3x20x100", "verify", (1, 3, 20, 100)),
     ("v_2x17x8x130", "verify", (2, 17, 8, 130)), ("h_1x8x12x90", "heldout", (1, 8, 12, 90)),
     ("bench", "bench", (32, 64, 128, 131072))])
add("89_cumsum", 1, H, "cumsum_f32", "float32", {"atol": 1e-4, "rtol": 1e-5},
    "fp32 running sums of up to ~2500 terms: absolute error grows with the prefix", ["y"],
    "torch.cumsum(x, dim=1); block per row, DPP wave scan", rowwise(256),
    [("v_4x1000", "verify", (4, 1000)), ("v_2x2500", "verify", (2, 2500)), ("v_8x1024", "verify", (8, 1024)),
     ("h_3x1800", "heldout", (3, 1800)), ("bench", "bench", (32768, 32768))])
add("94_MSELoss", 1, H, "mse_loss_f32", "float32", {"atol": 1e-6, "rtol": 1e-4},
    "fp32 partial sums combined by atomics: order-dependent rounding", ["out"],
    "mean((predictions - targets)^2) -> out[0]; block reduce + one atomic per block", mse, ELEM[:-1] +
    [("bench", "bench", (32768, 32768))])
add("95_CrossEntropyLoss", 1, T, None, "float32", {"atol": 1e-5, "rtol": 1e-4},
    "fp32 log-sum-exp per row, rows combined by atomics", ["out"],
    "F.cross_entropy(predictions, targets) (mean reduction) -> out[0]", cross_entropy,
    [("v_8x100", "verify", (8, 100)), ("v_4x1500", "verify", (4, 1500)), ("v_16x1024", "verify", (16, 1024)),
     ("h_6x700", "heldout", (6, 700)), ("bench", "bench", (32768, 4096))])
add("40_Matmul_Scaling_ResidualAdd", 2, T, None, "float16", {"atol": 2e-3, "rtol": 2e-3},
    "fp16 output (1 ulp ~1e-3 relative) after fp32 epilogue", ["y"],
    "z = x @ W.T + bias; y = z * 0.5 + z; fp16 variant, Triton tl.dot -> MFMA", linear_scale_residual,
    MNK + [("bench", "bench", (16384, 4096, 4096))])
add("76_Gemm_Add_ReLU", 2, H, "gemm_bias_relu_f16", "float16", {"atol": 1e-3, "rtol": 2e-3},
    "fp16 output: 1 fp16 ulp from rounding the fp32 accumulator", ["y"],
    "y = relu(x @ W.T + bias); fp16 variant, MFMA 16x16x16 f16, fused epilogue", gemm_bias_relu,
    MNK + [("bench", "bench", (1024, 8192, 8192))])
add("86_Matmul_Divide_GELU", 2, T, None, "float32", {"atol": 1e-5, "rtol": 1e-4},
    "fp32 MFMA accumulation order and ocml erf", ["y"],
    "y = gelu((x @ W.T + bias) / 10), fp32 (IEEE fp32 MFMA)", linear_div_gelu,
    MNK + [("bench", "bench", (1024, 8192, 8192))])


def launch_spec(name: str, dims: tuple, manifest: dict) -> dict:
    """Problem `name`'s launch spec (a dict) for the given dims."""
    p, m = P[name], manifest["problems"][name]
    grid, block, args = p["launch"](*dims)
    if p["toolchain"] == T:
        args = args + TRITON_HIDDEN
    return {"kernel": p["kernel"] or m["symbol"], "grid": grid, "block": block,
            "dynamic_lds": m.get("dynamic_lds", 0), "seed": 0, "args": args}


def write_problem(name: str, p: dict, manifest: dict) -> None:
    d = ROOT / name
    m = manifest["problems"][name]
    kernel = p["kernel"] or m["symbol"]
    (d / "launch").mkdir(exist_ok=True)
    shapes = []
    for sname, role, dims in p["shapes"]:
        spec = launch_spec(name, dims, manifest)
        args = spec["args"]
        if role == "probe":
            spec["probe"] = {"workgroups": PROBE_WORKGROUPS}
        elif role != "bench":
            n = max(prod(a["shape"]) for a in args if "buffer" in a)
            assert n <= 65536, (name, sname, n)
        (d / "launch" / f"{sname}.json").write_text(json.dumps(spec) + "\n")
        shapes.append({"name": sname, "role": role, "launch": f"launch/{sname}.json"})
    doc = {"name": name, "level": p["level"], "description": p["description"], "kernel": kernel,
           "code_object": "kernel.co", "source": m["source"], "toolchain": p["toolchain"], "dtype": p["dtype"],
           "tolerance": p["tolerance"], "tolerance_reason": p["tolerance_reason"], "outputs": p["outputs"],
           "shapes": shapes}
    (d / "problem.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, width=110))


def main() -> None:
    manifest = json.loads((ROOT / "manifest.json").read_text())
    listed = yaml.safe_load((ROOT / "suite.yaml").read_text())["problems"]
    assert sorted(listed) == sorted(P), set(listed) ^ set(P)
    for name in listed:
        write_problem(name, P[name], manifest)
    print(f"wrote {len(listed)} problem.yaml files")


if __name__ == "__main__":
    main()
