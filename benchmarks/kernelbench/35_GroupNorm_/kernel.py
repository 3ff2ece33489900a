"""35_GroupNorm_: nn.GroupNorm(G, C) on x (N, C, HW) fp32 with affine weight/bias (C).
Triton; one program per (n, group) (grid N * G): the group is contiguous (C/G * HW elements); sum and sum of
squares over 1024-element chunks, then a normalising pass applying the per-channel affine."""
import triton
import triton.language as tl


@triton.jit
def groupnorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, HW, cpg, G, eps, BLOCK: tl.constexpr):
    group = tl.program_id(0)
    g = group % G
    n = cpg * HW
    base = group.to(tl.int64) * n
    offs = tl.arange(0, BLOCK)
    s = tl.zeros((BLOCK,), tl.float32)
    q = tl.zeros((BLOCK,), tl.float32)
    for i0 in range(0, n, BLOCK):
        x = tl.load(x_ptr + base + i0 + offs, mask=i0 + offs < n, other=0.0)
        s += x
        q += x * x
    mean = tl.sum(s, axis=0) / n
    var = tl.maximum(tl.sum(q, axis=0) / n - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for i0 in range(0, n, BLOCK):
        mask = i0 + offs < n
        c = g * cpg + (i0 + offs) // HW
        x = tl.load(x_ptr + base + i0 + offs, mask=mask)
        w = tl.load(w_ptr + c, mask=mask)
        bb = tl.load(b_ptr + c, mask=mask)
        tl.store(y_ptr + base + i0 + offs, (x - mean) * rstd * w + bb, mask=mask)


KERNEL = groupnorm_kernel
SIGNATURE = {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "HW": "i32", "cpg": "i32", "G": "i32",
             "eps": "fp32", "BLOCK": "constexpr"}
CONSTEXPRS = {"BLOCK": 1024}
OPTIONS = {"num_warps": 4, "num_stages": 2}
