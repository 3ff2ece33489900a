"""Emulator throughput: lane-instructions per second for a wide elementwise launch (2**20
work-items), a DPP/LDS block reduction and an MFMA f16 matmul. Kernels are built with clang-19 at
bench time into a cache directory ($ASMEVO_BENCH_CACHE, default /tmp/asmevo-emu-bench).

Then the fixed cost of a launch as verification makes it (`run_launch` on the checked emulator
device: buffers allocated and filled, kernargs packed, outputs read back): a second launch of an
already built code object on a one-workgroup shape of a KernelBench kernel (19_ReLU v_3x99: 119
wave-instructions, so nearly all of it is fixed cost), and the first launch of a new code object
that differs from it (a candidate: K0 with one instruction edited), whose decoded and prepared
instructions mostly carry over.

Usage: python benchmarks/emulator/bench_emulator.py [--repeat N]   (record: bench_emulator.txt beside it)
"""
from __future__ import annotations

import argparse
import hashlib
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.codeobj import CodeObject  # noqa: E402
from asmevo.emu import Memory, run_kernel  # noqa: E402
from asmevo.toolchain import find_toolchain  # noqa: E402
from benchmarks import record  # noqa: E402

CACHE = Path(os.environ.get("ASMEVO_BENCH_CACHE", "/tmp/asmevo-emu-bench"))
PRELUDE = """
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
static __attribute__((device)) inline unsigned tid() { return __builtin_amdgcn_workitem_id_x(); }
static __attribute__((device)) inline unsigned bid() { return __builtin_amdgcn_workgroup_id_x(); }
"""
ELEMENTWISE = """
extern "C" __global__ void axpby(const float* x, const float* y, float* out, float a, float b, int n) {
  int i = bid() * 256 + tid();
  if (i < n) { float v = a * x[i] + b * y[i]; out[i] = v > 0.f ? v : 0.01f * v; }
}"""
REDUCTION = """
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1, 256)))
void block_sum(const float* x, float* out) {
  __shared__ float part[4];
  float v = x[bid() * 256 + tid()];
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0xB1, 0xF, 0xF, false));
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0x4E, 0xF, 0xF, false));
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0x141, 0xF, 0xF, false));
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0x140, 0xF, 0xF, false));
  unsigned lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  v += __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ 16) << 2, __builtin_bit_cast(int, v)));
  v += __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ 32) << 2, __builtin_bit_cast(int, v)));
  if (lane == 0) part[tid() / 64] = v;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (tid() == 0) out[bid()] = part[0] + part[1] + part[2] + part[3];
}"""
MATMUL = """
// One wave per 32x32 output tile of C = A (MxK, row-major f16) x B (KxN, col-major f16).
extern "C" __global__ void mfma_matmul(const _Float16* a, const _Float16* b, float* c, int n, int k) {
  int lane = tid() & 63, wave = bid() * 4 + tid() / 64;
  int tiles_n = n / 32, tm = wave / tiles_n, tn = wave % tiles_n;
  int row = tm * 32 + lane % 32, col = tn * 32 + lane % 32, kq = (lane / 32) * 4;
  float16_t acc = {};
  for (int k0 = 0; k0 < k; k0 += 8) {
    half4_t av = *(const half4_t*)(a + (long)row * k + k0 + kq);
    half4_t bv = *(const half4_t*)(b + (long)col * k + k0 + kq);
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; ++r) {
    int i = tm * 32 + 8 * (r / 4) + 4 * (lane / 32) + r % 4;
    c[(long)i * n + col] = acc[r];
  }
}"""


def build(source: str) -> CodeObject:
    """Compile HIP device code for gfx942 with clang, cached by content."""
    CACHE.mkdir(parents=True, exist_ok=True)
    text = PRELUDE + source
    out = CACHE / (hashlib.sha256(text.encode()).hexdigest()[:20] + ".hsaco")
    if not out.exists():
        src = out.with_suffix(".hip")
        src.write_text(text)
        subprocess.run([find_toolchain().path("clang"), "-x", "hip", "--offload-arch=gfx942", "-nogpulib",
                        "-nogpuinc", "--cuda-device-only", "--no-gpu-bundle-output", "-O3", str(src), "-o",
                        str(out)], check=True)
    return CodeObject.from_path(out)


def _launch(co, name, grid, block, buffers, scalars: bytes, lds: int = 0):
    mem = Memory()
    ptrs = b""
    for i, arr in enumerate(buffers):
        addr = mem.alloc(arr.nbytes, f"buf{i}")
        mem.write(addr, arr.tobytes())
        ptrs += struct.pack("<Q", addr)
    meta = co.kernel(name).metadata
    kernarg = bytearray(meta[".kernarg_segment_size"])
    explicit = ptrs + scalars
    kernarg[:len(explicit)] = explicit
    for arg in meta[".args"]:  # hidden_group_size_x etc. are not needed by these kernels
        if arg[".value_kind"] == "hidden_block_count_x":
            kernarg[arg[".offset"]:arg[".offset"] + 4] = struct.pack("<I", grid[0])
    start = time.perf_counter()
    rep = run_kernel(co, name, grid=grid, block=block, dynamic_lds=lds, kernarg=bytes(kernarg), memory=mem)
    return rep, time.perf_counter() - start


def bench(label, co, name, grid, block, buffers, scalars, repeat) -> None:
    _launch(co, name, (1, 1, 1), block, buffers, scalars)  # warm the decoded-program cache
    best = None
    for _ in range(repeat):
        rep, dt = _launch(co, name, grid, block, buffers, scalars)
        assert rep.ok, rep.findings
        best = dt if best is None else min(best, dt)
    rate = rep.lane_instructions / best
    line = (f"{label:<34} waves {rep.waves:>6}  lane-instr {rep.lane_instructions:>11,}  {best:7.3f} s  "
            f"{rate:10.3e} lane-instr/s")
    print(line, flush=True)


def fixed_cost(repeat: int) -> None:
    """Seconds of launches on a tiny shape: K0 again and again, and a new candidate's first launch."""
    from asmevo.device import get_device
    from asmevo.device.launch import make_inputs, run_launch
    from asmevo.launches import suite_launches
    from asmevo.rebuild import rebuild_source
    from asmevo.recover import recover
    from asmevo.suites import load_suite

    problem = load_suite("kernelbench").problem("19_ReLU")
    spec = next(vl.spec for vl in suite_launches(problem) if vl.label.endswith("v_3x99"))
    k0 = problem.code_object.read_bytes()
    inputs = make_inputs(spec)
    device = get_device("emu").verifying()
    run_launch(device, k0, spec, inputs)
    again = []
    for _ in range(max(repeat, 5)):
        start = time.perf_counter()
        _, result = run_launch(device, k0, spec, inputs)
        again.append(time.perf_counter() - start)
    rec = recover(problem.code_object)
    first = []
    for k, nops in enumerate(range(1, max(repeat, 5) + 1)):  # distinct candidates: s_nop padding of one line
        line = "\tv_max_f32_e32 v7, 0, v1"
        assert line in rec.source
        edited = rec.source.replace(line, "\ts_nop 0\n" * nops + line, 1)
        k1 = rebuild_source(edited, rec.info).data
        start = time.perf_counter()
        run_launch(device, k1, spec, inputs)
        first.append(time.perf_counter() - start)
    instr = result.report.instructions
    line = (f"fixed cost, 19_ReLU v_3x99 ({instr} wave-instructions, checked): second launch of K0 median "
            f"{1e3 * float(np.median(again)):.1f} ms (min {1e3 * min(again):.1f}); first launch of a new candidate "
            f"median {1e3 * float(np.median(first)):.1f} ms (min {1e3 * min(first):.1f})")
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    n = 1 << 20
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    bench("elementwise axpby+leaky (1M items)", build(ELEMENTWISE), "axpby", (n // 256, 1, 1), (256, 1, 1),
          [x, y, np.zeros(n, np.float32)], struct.pack("<ffi", 2.0, -3.0, n), args.repeat)
    m = 1 << 18
    bench("block reduction DPP+LDS (256K)", build(REDUCTION), "block_sum", (m // 256, 1, 1), (256, 1, 1),
          [x[:m], np.zeros(m // 256, np.float32)], b"", args.repeat)
    dim, k = 256, 256
    a = rng.standard_normal((dim, k)).astype(np.float16)
    b = rng.standard_normal((dim, k)).astype(np.float16)
    bench(f"MFMA f16 matmul {dim}x{dim}x{k}", build(MATMUL), "mfma_matmul", ((dim // 32) ** 2 // 4, 1, 1),
          (256, 1, 1), [a, b, np.zeros((dim, dim), np.float32)], struct.pack("<ii", dim, k), args.repeat)
    fixed_cost(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__)))
