"""86_Matmul_Divide_GELU (level 2): y = gelu((x @ W^T + bias) / divisor), exact (erf) GELU, all fp32.
Triton tl.dot in IEEE fp32 (fp32 MFMA on gfx942); 64x64x16 tiles, 4 warps."""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def linear_div_gelu_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K, divisor, BM: tl.constexpr, BN: tl.constexpr,
                           BK: tl.constexpr):
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
        acc = tl.dot(a, w, acc, input_precision="ieee")
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    z = (acc + bias[None, :]) / divisor
    y = 0.5 * z * (1.0 + libdevice.erf(z * 0.7071067811865476))
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y, mask=c_mask)


KERNEL = linear_div_gelu_kernel
SIGNATURE = {"x_ptr": "*fp32", "w_ptr": "*fp32", "bias_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32",
             "K": "i32", "divisor": "fp32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
CONSTEXPRS = {"BM": 64, "BN": 64, "BK": 16}
OPTIONS = {"num_warps": 4, "num_stages": 2}
