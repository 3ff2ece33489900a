"""40_Matmul_Scaling_ResidualAdd (level 2): z = x @ W^T + bias; y = z * scale + z. x (M, K), W (N, K) and
bias (N) fp16, y (M, N) fp16, fp32 accumulation. Triton tl.dot (MFMA), 64x64x32 tiles, 4 warps."""
import triton
import triton.language as tl


@triton.jit
def linear_scale_residual_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K, scale, BM: tl.constexpr,
                                 BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * K + k[None, :], mask=(rm[:, None] < M) & (k[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + k[:, None], mask=(k[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    y = z * scale + z
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y.to(tl.float16), mask=c_mask)


KERNEL = linear_scale_residual_kernel
SIGNATURE = {"x_ptr": "*fp16", "w_ptr": "*fp16", "bias_ptr": "*fp16", "y_ptr": "*fp16", "M": "i32", "N": "i32",
             "K": "i32", "scale": "fp32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
CONSTEXPRS = {"BM": 64, "BN": 64, "BK": 32}
OPTIONS = {"num_warps": 4, "num_stages": 2}
