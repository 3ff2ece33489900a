"""29_Softplus: y = log1p(exp(x)), or x when x > 20 (torch threshold).
Triton, fp32, 1024 elements per program (4 warps, 4 per thread, vectorised)."""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def softplus_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.where(x > 20.0, x, libdevice.log1p(tl.exp(x)))
    tl.store(y_ptr + offs, y, mask=mask)


KERNEL = softplus_kernel
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
CONSTEXPRS = {"BLOCK": 1024}
OPTIONS = {"num_warps": 4, "num_stages": 2}
