"""Compiled gfx942 kernels used by the static-check tests: HIP through clang-19, and Triton."""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from asmevo.codeobj import CodeObject
from asmevo.isa.instruction import Instruction

HIP_SOURCE = r"""
#define __global__ __attribute__((global))
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float4v __attribute__((ext_vector_type(4)));
typedef float float16v __attribute__((ext_vector_type(16)));
#define TID __builtin_amdgcn_workitem_id_x()
#define BID __builtin_amdgcn_workgroup_id_x()
#define SYNC() do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); \
                    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); } while (0)

extern "C" __global__ void saxpy(float *y, const float *x, float a, int n) {
  int i = BID * 256 + TID;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void lds_reduce(float *out, const float *in, int n) {
  __attribute__((shared)) float buf[256];
  int t = TID;
  float acc = 0;
  for (int i = t; i < n; i += 256) acc += in[i];
  buf[t] = acc;
  SYNC();
  for (int s = 128; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    SYNC();
  }
  if (t == 0) out[BID] = buf[0];
}

extern "C" __global__ void mfma_loop(float16v *out, const half4 *a, const half4 *b, int k) {
  int t = TID;
  float16v acc = {0};
  for (int i = 0; i < k; i++)
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
  out[t] = acc;
}

extern "C" __global__ void mfma_mixed(float *out, const float *a, const half4 *h, int k) {
  int t = TID;
  float16v acc = {0};
  float4v acc4 = {0};
  for (int i = 0; i < k; i++) {
    acc = __builtin_amdgcn_mfma_f32_32x32x2f32(a[i * 64 + t], a[i * 64 + t + 1], acc, 0, 0, 0);
    acc4 = __builtin_amdgcn_mfma_f32_16x16x16f16(h[i * 64 + t], h[i * 64 + t + 3], acc4, 0, 0, 0);
    acc4 = __builtin_amdgcn_mfma_f32_4x4x4f16(h[t], h[t + 5], acc4, 0, 0, 0);
  }
  float s = 0;
  for (int j = 0; j < 16; j++) s += acc[j];
  out[t] = s + acc4[0] + acc4[1] + acc4[2] + acc4[3];
}

extern "C" __global__ void lds_tiled_matmul(float *c, const float *a, const float *b, int n) {
  __attribute__((shared)) float ta[16][17];
  __attribute__((shared)) float tb[16][17];
  int tx = TID & 15, ty = TID >> 4;
  int row = BID * 16 + ty;
  float acc = 0;
  for (int k0 = 0; k0 < n; k0 += 16) {
    ta[ty][tx] = a[row * n + k0 + tx];
    tb[ty][tx] = b[(k0 + ty) * n + tx];
    SYNC();
    for (int k = 0; k < 16; k++) acc += ta[ty][k] * tb[k][tx];
    SYNC();
  }
  c[row * n + tx] = acc;
}

extern "C" __global__ void transcendental(float *out, const float *in, int n) {
  int i = BID * 64 + TID;
  if (i < n) {
    float x = in[i];
    out[i] = __builtin_amdgcn_rsqf(x) + __builtin_amdgcn_rcpf(x + 1.0f) * __builtin_amdgcn_sqrtf(x)
           + __builtin_amdgcn_exp2f(x) / (x + 3.0f) + __builtin_amdgcn_logf(x + 2.0f);
  }
}

extern "C" __global__ void f64_math(double *out, const double *in, int n) {
  int i = BID * 64 + TID;
  if (i < n) out[i] = in[i] / (in[i + 1] + 1.0) + in[i] * in[i + 2];
}

extern "C" __global__ void lanes(int *out, const int *in) {
  int t = TID;
  int v = in[t];
  int first = __builtin_amdgcn_readfirstlane(v);
  int lane5 = __builtin_amdgcn_readlane(v, 5);
  int shuf = __builtin_amdgcn_ds_bpermute(((t + 1) & 63) << 2, v);
  int dpp = __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);
  int sel = __builtin_amdgcn_readlane(v, in[64] & 63);
  out[t] = first + lane5 + shuf + dpp + sel;
}

extern "C" __global__ void atomics(int *counter, float *acc, const float *in, int n) {
  int i = BID * 64 + TID;
  if (i < n) {
    int old = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(counter + 1 + (old & 7), 2, __ATOMIC_RELAXED);
    acc[old & 63] += in[i];
  }
}

extern "C" __global__ void smem_heavy(float *out, const float *params, int n) {
  float s = 0;
  for (int j = 0; j < n; j++) s += params[j] * params[j + 32];
  out[BID * 64 + TID] = s + params[100] * params[200];
}

extern "C" __global__ void vec_copy(float4v *out, const float4v *in, int n) {
  int i = BID * 64 + TID;
  for (; i < n; i += 4096) { float4v v = in[i]; v.x += 1.0f; out[i] = v; }
}
"""

HIP_KERNELS = ("saxpy", "lds_reduce", "mfma_loop", "mfma_mixed", "lds_tiled_matmul", "transcendental",
               "f64_math", "lanes", "atomics", "smem_heavy", "vec_copy")


def _cache_dir() -> Path:
    d = Path(os.environ.get("ASMEVO_TEST_CACHE", Path.home() / ".cache" / "asmevo-tests"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def build_hip() -> Path:
    """The HIP corpus code object (cached by source hash)."""
    key = hashlib.sha256(HIP_SOURCE.encode()).hexdigest()[:16]
    out = _cache_dir() / f"corpus-hip-{key}.hsaco"
    if not out.exists():
        src = out.with_suffix(".hip")
        src.write_text(HIP_SOURCE)
        tmp = out.with_suffix(".tmp")
        subprocess.run(["/usr/lib/llvm-19/bin/clang", "-x", "hip", "--offload-arch=gfx942", "-nogpulib",
                        "-nogpuinc", "--cuda-device-only", "--no-gpu-bundle-output", "-O3", str(src),
                        "-o", str(tmp)], check=True, capture_output=True)
        tmp.rename(out)
    return out


def build_triton() -> list[Path]:
    """Triton corpus code objects: elementwise add, softmax, a tl.dot matmul, a 2-D reduction."""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    @triton.jit
    def softmax_kernel(out, inp, stride, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(inp + row * stride + cols, mask=cols < n, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n)

    @triton.jit
    def matmul_kernel(a, b, c, M, N, K, sa, sb, sc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            ta = tl.load(a + rm[:, None] * sa + (k + rk)[None, :])
            tb = tl.load(b + (k + rk)[:, None] * sb + rn[None, :])
            acc += tl.dot(ta, tb)
        tl.store(c + rm[:, None] * sc + rn[None, :], acc.to(tl.float16))

    @triton.jit
    def rowsum_kernel(out, inp, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(inp + row * n + cols, mask=cols < n, other=0.0)
        tl.store(out + row, tl.sum(acc, axis=0))

    specs = [
        (add_kernel, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}, {"BLOCK": 1024}),
        (softmax_kernel, {"out": "*fp32", "inp": "*fp32", "stride": "i32", "n": "i32"}, {"BLOCK": 1024}),
        (matmul_kernel, {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                         "sa": "i32", "sb": "i32", "sc": "i32"}, {"BM": 64, "BN": 64, "BK": 32}),
        (rowsum_kernel, {"out": "*fp32", "inp": "*fp32", "n": "i32"}, {"BLOCK": 512}),
    ]
    paths = []
    for fn, sig, consts in specs:
        out = _cache_dir() / f"corpus-triton-{triton.__version__}-{fn.__name__}.hsaco"
        if not out.exists():
            k = triton.compile(triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts),
                               target=GPUTarget("hip", "gfx942", 64))
            out.write_bytes(k.asm["hsaco"])
        paths.append(out)
    return paths


def kernels_of(path: Path) -> dict[str, list[Instruction]]:
    """Each kernel's instructions (padding after the code symbol excluded)."""
    co = CodeObject.from_path(path)
    return {k.name: co.kernel_instructions(k.name, data=True) for k in co.kernels}
