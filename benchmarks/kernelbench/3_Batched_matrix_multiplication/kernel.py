"""3_Batched_matrix_multiplication: C[b] (M, N) bf16 = A[b] (M, K) @ B[b] (K, N), bf16 inputs, fp32
accumulation. Triton tl.dot (MFMA bf16 on gfx942); 64x64x32 tiles, 4 warps; grid = (tiles, batch)."""
import triton
import triton.language as tl


@triton.jit
def bmm_bf16_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    grid_n = tl.cdiv(N, BN)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    a_ptr += batch * M * K
    b_ptr += batch * K * N
    c_ptr += batch * M * N
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + k[None, :], mask=(rm[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + rn[None, :], mask=(k[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=c_mask)


KERNEL = bmm_bf16_kernel
SIGNATURE = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
             "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
CONSTEXPRS = {"BM": 64, "BN": 64, "BK": 32}
OPTIONS = {"num_warps": 4, "num_stages": 2}
