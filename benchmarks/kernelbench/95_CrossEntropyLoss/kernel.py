"""95_CrossEntropyLoss: out[0] += mean over rows of (logsumexp(x_i) - x_i[t_i]) for logits (B, C) fp32
and int64 targets (B). Triton; one program per row, online logsumexp over 1024-column chunks, one
fp32 atomic add per row. `out` must start at zero."""
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(x_ptr, t_ptr, out_ptr, B, C, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * C
    offs = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, C, BLOCK):
        mask = c0 + offs < C
        x = tl.load(x_row + c0 + offs, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.where(mask, tl.exp(x - m_new), 0.0)
        s = tl.where(m_new == float("-inf"), 0.0, s)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    target = tl.load(t_ptr + row)
    picked = tl.load(x_row + target)
    loss = row_max + tl.log(total) - picked
    tl.atomic_add(out_ptr, loss / B)


KERNEL = cross_entropy_kernel
SIGNATURE = {"x_ptr": "*fp32", "t_ptr": "*i64", "out_ptr": "*fp32", "B": "i32", "C": "i32", "BLOCK": "constexpr"}
CONSTEXPRS = {"BLOCK": 1024}
OPTIONS = {"num_warps": 4, "num_stages": 2}
