"""48_Mean_reduction_over_a_dimension: y (B, C) = mean of x (B, R, C) fp32 over dim 1.
Triton; each program owns 64 contiguous columns of one batch item and walks R in 32-row tiles."""
import triton
import triton.language as tl


@triton.jit
def mean_dim1_kernel(x_ptr, y_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    rows = tl.arange(0, BLOCK_R)
    base = x_ptr + b * R * C
    acc = tl.zeros((BLOCK_R, BLOCK_C), tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + rows
        mask = (r[:, None] < R) & (cols[None, :] < C)
        x = tl.load(base + r[:, None] * C + cols[None, :], mask=mask, other=0.0)
        acc += x
    tl.store(y_ptr + b * C + cols, tl.sum(acc, axis=0) / R, mask=cols < C)


KERNEL = mean_dim1_kernel
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "R": "i32", "C": "i32", "BLOCK_R": "constexpr", "BLOCK_C": "constexpr"}
CONSTEXPRS = {"BLOCK_R": 32, "BLOCK_C": 64}
OPTIONS = {"num_warps": 4, "num_stages": 2}
