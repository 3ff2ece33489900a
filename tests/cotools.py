"""Code objects compiled here at test time, for the recovery/rebuild/patch tests.

The `code_object(kind)` fixture (conftest.py) compiles on first use and returns its path. Kinds
cover clang-19 HIP and OpenCL at -O0..-O3, several kernels per object, LDS, scratch spills,
MFMA/AGPRs, a non-kernel function, xnack/sramecc variants, code-object v4/v5/v6 and Triton.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from asmevo.toolchain import find_toolchain

HIP_PRELUDE = """
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float16v __attribute__((ext_vector_type(16)));
static inline __device__ int gid() {
  return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x()
       + __builtin_amdgcn_workitem_id_x();
}
"""

HIP_MULTI = HIP_PRELUDE + """
extern "C" __device__ __attribute__((noinline)) float helper(float x, float y) { return x * y + 1.0f; }
extern "C" __global__ void add(float *a, const float *b, int n) {
  int i = gid();
  if (i < n) a[i] += b[i];
}
extern "C" __global__ void lds(float *a) {
  __shared__ float buf[256];
  int t = __builtin_amdgcn_workitem_id_x();
  buf[t] = a[t];
  __builtin_amdgcn_s_barrier();
  a[t] = buf[255 - t];
}
extern "C" __global__ void spill(float *a, int k) {
  float p[64];
  int t = __builtin_amdgcn_workitem_id_x();
  for (int i = 0; i < 64; i++) p[i] = a[i * t];
  a[t] = p[k & 63];
}
extern "C" __global__ void mfma(const half4 *x, float16v *y) {
  int t = __builtin_amdgcn_workitem_id_x();
  asm volatile("v_accvgpr_write_b32 a3, 0" ::: "a3");
  y[t] = __builtin_amdgcn_mfma_f32_32x32x8f16(x[t], x[t + 1], y[t], 0, 0, 0);
}
extern "C" __global__ void calls(float *a) {
  int i = gid();
  a[i] = helper(a[i], a[i + 1]);
}
extern "C" __global__ void loop(int *a, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i] * i;
  a[gid()] = s;
}
"""

OPENCL = """
__kernel void scale(__global float *a, float s, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x()
        + __builtin_amdgcn_workitem_id_x();
  if (i < n) a[i] = a[i] * s;
}
__kernel void reduce(__global float *a, __local float *tmp) {
  int t = __builtin_amdgcn_workitem_id_x();
  tmp[t] = a[t];
  __builtin_amdgcn_s_barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (t < s) tmp[t] += tmp[t + s];
    __builtin_amdgcn_s_barrier();
  }
  if (t == 0) a[0] = tmp[0];
}
"""

HIP_FLAGS = ["-x", "hip", "-nogpulib", "-nogpuinc", "--cuda-device-only", "--no-gpu-bundle-output"]
# kind -> (language, source, extra flags)
KINDS = {
    "hip-O0": ("hip", HIP_MULTI, ["--offload-arch=gfx942", "-O0"]),
    "hip-O1": ("hip", HIP_MULTI, ["--offload-arch=gfx942", "-O1"]),
    "hip-O2": ("hip", HIP_MULTI, ["--offload-arch=gfx942", "-O2"]),
    "hip-O3": ("hip", HIP_MULTI, ["--offload-arch=gfx942", "-O3"]),
    "hip-sramecc": ("hip", HIP_MULTI, ["--offload-arch=gfx942:sramecc+:xnack-", "-O3"]),
    "hip-xnack": ("hip", HIP_MULTI, ["--offload-arch=gfx942:xnack+", "-O3"]),
    "hip-v4": ("hip", HIP_MULTI, ["--offload-arch=gfx942", "-O3", "-mcode-object-version=4"]),
    "hip-v6": ("hip", HIP_MULTI, ["--offload-arch=gfx942", "-O3", "-mcode-object-version=6"]),
    "ocl-O2": ("cl", OPENCL, ["-O2"]),
    "ocl-O0": ("cl", OPENCL, ["-O0"]),
}


def _compile(kind: str, out: Path) -> Path:
    lang, source, flags = KINDS[kind]
    clang = find_toolchain().path("clang")
    src = out / f"{kind}.{'hip' if lang == 'hip' else 'cl'}"
    src.write_text(source)
    dest = out / f"{kind}.co"
    if lang == "hip":
        cmd = [clang, *HIP_FLAGS, *flags, "-o", str(dest), str(src)]
    else:
        cmd = [clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx942",
               "-nogpulib", *flags, "-o", str(dest), str(src)]
    subprocess.run(cmd, check=True, capture_output=True)
    return dest


def _triton(out: Path) -> Path:
    triton = pytest.importorskip("triton")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    src = triton.compiler.ASTSource(fn=add_kernel, signature={"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32"},
                                    constexprs={"BLOCK": 256})
    compiled = triton.compile(src, target=GPUTarget("hip", "gfx942", 64))
    dest = out / "triton-add.co"
    dest.write_bytes(compiled.asm["hsaco"])
    return dest


def text_bytes(path) -> bytes:
    """The .text bytes of a code object."""
    from asmevo.codeobj import CodeObject
    co = CodeObject.from_path(path)
    return co.read(co.text["address"], co.text["size"])



# A gfx950 kernel; its default body has a scaled MFMA as text, and one as `.long` words whose prefix sets bits 0x6000 of dword 0
# (copied from AITer's f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128.co at 0x3564), which no LLVM syntax sets.
GFX950_SCALED_MFMA = """\
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_mfma_scale_f32_16x16x128_f8f6f4 a[4:7], v[8:11], v[16:19], a[4:7], v1, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
  .long 0xd3ac6000, 0x0003118c, 0xd3ad8c00, 0x84021148
  s_waitcnt lgkmcnt(0)
  s_endpgm"""
GFX950_SOURCE = """
.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
.amdhsa_code_object_version 5
.text
.globl k
.p2align 8
.type k,@function
k:
BODY
.rodata
.p2align 6
.amdhsa_kernel k
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 160
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 152
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 8
    .vgpr_count: 152
    .agpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - .address_space: global
        .offset: 0
        .size: 8
        .value_kind: global_buffer
...
.end_amdgpu_metadata
"""


def gfx950_code_object(path: Path, body: str = GFX950_SCALED_MFMA) -> Path:
    """GFX950_SOURCE with kernel `k`'s `body` assembled and linked for gfx950 (by the toolchain found
    for it) at `path`."""
    from asmevo.isa.assemble import assemble, link
    from asmevo.target import TargetId

    target = TargetId("gfx950", None, None)
    path.write_bytes(link(assemble(GFX950_SOURCE.replace("BODY", body), target), target))
    return path
