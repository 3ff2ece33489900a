"""Kernels compiled here for gfx942 (code-object v4 and v5) whose metadata the tests pack against."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from asmevo.errors import ToolchainError
from asmevo.toolchain import find_toolchain

HIP_SOURCE = r"""
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
struct S { int a; float b; double c; };
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void mixed(char x, float* p, short y, double d, S s, long long q, float f) {
  p[__builtin_amdgcn_workitem_id_x()] = x + y + d + s.a + s.b + s.c + q + f;
}
extern "C" __global__ void bsize(float* out, int n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = __builtin_amdgcn_grid_size_x();
}
extern "C" __global__ void implicit(unsigned long long* out) {
  const unsigned long long* p = (const unsigned long long*)__builtin_amdgcn_implicitarg_ptr();
  for (int k = 0; k < 32; ++k) out[k] = p[k];
}
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1, 256))) void small(float* out) { out[0] = 1; }
__device__ unsigned asmevo_sink;
extern "C" __global__ void noargs() { asmevo_sink = __builtin_amdgcn_workgroup_size_x(); }
"""

CL_SOURCE = "__kernel __attribute__((reqd_work_group_size(64, 2, 1))) void reqd(__global float* out, int n) { out[0] = n; }\n"


@pytest.fixture(scope="session")
def clang() -> str:
    try:
        return find_toolchain().path("clang")
    except ToolchainError as exc:
        pytest.skip(f"no LLVM toolchain: {exc}")


@pytest.fixture(scope="session")
def kernels(clang, tmp_path_factory) -> dict[str, Path]:
    """Code objects: hip4/hip5 (HIP kernels, code-object v4/v5) and cl5 (an OpenCL kernel)."""
    out = tmp_path_factory.mktemp("kernels")
    (out / "k.hip").write_text(HIP_SOURCE)
    (out / "r.cl").write_text(CL_SOURCE)
    built = {}
    for version in (4, 5):
        co = out / f"hip{version}.co"
        subprocess.run([clang, "-x", "hip", "--offload-arch=gfx942", "-nogpulib", "-nogpuinc", "--cuda-device-only",
                        "--no-gpu-bundle-output", "-O3", f"-mcode-object-version={version}", "-o", str(co),
                        str(out / "k.hip")], check=True, capture_output=True)
        built[f"hip{version}"] = co
    cl = out / "cl5.co"
    subprocess.run([clang, "-x", "cl", "--target=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-nogpulib", "-O3",
                    "-mcode-object-version=5", "-o", str(cl), str(out / "r.cl")], check=True, capture_output=True)
    built["cl5"] = cl
    return built
