"""36_RMSNorm_: y = x / sqrt(mean(x^2 over dim 1) + eps) for x (B, F, S) fp32 (S = flattened spatial dims).
Triton; each program owns 256 contiguous spatial positions of one batch item and loops over F twice."""
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, y_ptr, F, S, eps, BLOCK: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < S
    base = b * F * S
    acc = tl.zeros((BLOCK,), tl.float32)
    for f in range(0, F):
        x = tl.load(x_ptr + base + f * S + offs, mask=mask, other=0.0)
        acc += x * x
    inv = 1.0 / tl.sqrt(acc / F + eps)
    for f in range(0, F):
        x = tl.load(x_ptr + base + f * S + offs, mask=mask)
        tl.store(y_ptr + base + f * S + offs, x * inv, mask=mask)


KERNEL = rmsnorm_kernel
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "F": "i32", "S": "i32", "eps": "fp32", "BLOCK": "constexpr"}
CONSTEXPRS = {"BLOCK": 256}
OPTIONS = {"num_warps": 2, "num_stages": 2}
