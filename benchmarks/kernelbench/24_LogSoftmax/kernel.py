"""24_LogSoftmax: log_softmax over dim 1 of (rows, cols) fp32. Triton; one program per row, online
max/sum-of-exp over 1024-column chunks, then a second pass writing x - max - log(sum)."""
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * cols
    y_row = y_ptr + row * cols
    offs = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, cols, BLOCK):
        mask = c0 + offs < cols
        x = tl.load(x_row + c0 + offs, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.where(mask, tl.exp(x - m_new), 0.0)
        s = tl.where(m_new == float("-inf"), 0.0, s)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    shift = row_max + tl.log(total)
    for c0 in range(0, cols, BLOCK):
        mask = c0 + offs < cols
        x = tl.load(x_row + c0 + offs, mask=mask)
        tl.store(y_row + c0 + offs, x - shift, mask=mask)


KERNEL = log_softmax_kernel
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "cols": "i32", "BLOCK": "constexpr"}
CONSTEXPRS = {"BLOCK": 1024}
OPTIONS = {"num_warps": 4, "num_stages": 2}
