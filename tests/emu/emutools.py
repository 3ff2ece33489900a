"""Test helpers: build code objects (hand-written assembly, HIP with clang-19, Triton), launch them
on the emulator with numpy buffers, and read results back."""
from __future__ import annotations

import hashlib
import os
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asmevo.codeobj import CodeObject
from asmevo.device.kernarg import Apertures, Geometry, Scalar, pack_kernargs
from asmevo.emu import Memory, run_kernel
from asmevo.emu.state import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
from asmevo.toolchain import find_toolchain

CACHE = Path(os.environ.get("ASMEVO_EMU_TEST_CACHE", "/tmp/asmevo-emu-tests"))
HIP_PRELUDE = """
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
typedef _Float16 half;
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef short short4_t __attribute__((ext_vector_type(4)));
static __attribute__((device)) inline unsigned tid() { return __builtin_amdgcn_workitem_id_x(); }
static __attribute__((device)) inline unsigned bid() { return __builtin_amdgcn_workgroup_id_x(); }
static __attribute__((device)) inline void sync() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); }
"""


def _cached(kind: str, text: str, build) -> CodeObject:
    CACHE.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256((kind + text).encode()).hexdigest()[:24]
    out = CACHE / f"{key}.hsaco"
    if not out.exists():
        tmp = CACHE / f"{key}.{os.getpid()}.tmp"
        build(tmp)
        tmp.replace(out)
    return CodeObject.from_path(out)


def hip(source: str, flags: tuple[str, ...] = ()) -> CodeObject:
    """Compile HIP device code (with HIP_PRELUDE) for gfx942 with clang-19."""
    tc = find_toolchain()
    text = HIP_PRELUDE + source

    def build(tmp: Path):
        src = tmp.with_suffix(".hip")
        src.write_text(text)
        subprocess.run([tc.path("clang"), "-x", "hip", "--offload-arch=gfx942", "-nogpulib", "-nogpuinc",
                        "--cuda-device-only", "--no-gpu-bundle-output", "-O3", *flags, str(src), "-o", str(tmp)],
                       check=True, capture_output=True)
        src.unlink()
    return _cached("hip" + " ".join(flags), text, build)


def asm(body: str, *, name: str = "k", vgprs: int = 32, sgprs: int = 32, lds: int = 0, args: int = 4,
        extra: str = "", agprs: int = 0, scratch: int = 0, denorm32: int = 3) -> CodeObject:
    """Assemble a kernel from an assembly body. s[0:1] = kernarg pointer, s2 = workgroup id x,
    v0 = work-item id; `args` pointer arguments (8 bytes each) then 8 bytes of scalars. `denorm32` is the
    f32 FP_DENORM field (llvm-mc's default is 0, flushing; HIP and Triton kernels keep denormals, 3)."""
    tc = find_toolchain()
    arg_meta = "".join(
        f"      - .address_space: global\n        .offset: {8 * i}\n        .size: 8\n"
        f"        .value_kind: global_buffer\n" for i in range(args))
    arg_meta += (f"      - .offset: {8 * args}\n        .size: 8\n        .value_kind: by_value\n")
    acc = max(4, -(-vgprs // 4) * 4)
    text = f"""
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
.globl {name}
.p2align 8
.type {name},@function
{name}:
{body}
.rodata
.p2align 6
.amdhsa_kernel {name}
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_next_free_vgpr {acc + agprs}
  .amdhsa_next_free_sgpr {sgprs}
  .amdhsa_accum_offset {acc}
  .amdhsa_group_segment_fixed_size {lds}
  .amdhsa_private_segment_fixed_size {scratch}
  .amdhsa_enable_private_segment {1 if scratch else 0}
  .amdhsa_float_denorm_mode_32 {denorm32}
  {extra}
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: {name}
    .symbol: {name}.kd
    .kernarg_segment_size: {8 * args + 8}
    .kernarg_segment_align: 8
    .group_segment_fixed_size: {lds}
    .private_segment_fixed_size: {scratch}
    .wavefront_size: 64
    .sgpr_count: {sgprs}
    .vgpr_count: {vgprs}
    .max_flat_workgroup_size: 1024
    .args:
{arg_meta}...
.end_amdgpu_metadata
"""

    def build(tmp: Path):
        src, obj = tmp.with_suffix(".s"), tmp.with_suffix(".o")
        src.write_text(text)
        proc = subprocess.run([tc.path("llvm-mc"), "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj",
                               str(src), "-o", str(obj)], capture_output=True, text=True)
        if proc.returncode:
            raise AssertionError(f"llvm-mc failed: {proc.stderr}")
        subprocess.run([tc.path("ld.lld"), "-shared", str(obj), "-o", str(tmp)], check=True, capture_output=True)
        src.unlink()
        obj.unlink()
    return _cached("asm", text, build)


def triton_kernel(fn, signature: dict, constexprs: dict, num_warps: int = 4,
                  processor: str = "gfx942") -> tuple[CodeObject, int]:
    """Compile a Triton kernel for `processor`: (code object, dynamic LDS bytes the launch must pass)."""
    import triton
    from triton.backends.compiler import GPUTarget
    key = f"{fn.fn.__name__}:{fn.src}:{signature}:{constexprs}:{num_warps}" + \
        (f":{processor}" if processor != "gfx942" else "")
    shared = {}

    def build(tmp: Path):
        src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
        k = triton.compile(src, target=GPUTarget("hip", processor, 64), options={"num_warps": num_warps})
        tmp.write_bytes(k.asm["hsaco"])
        shared["n"] = k.metadata.shared
    co = _cached("triton", key, build)
    side = Path(co.path).with_suffix(".shared")
    if shared:
        side.write_text(str(shared["n"]))
    return co, int(side.read_text())


@dataclass
class Launch:
    report: object
    outputs: dict
    memory: Memory


def launch(co: CodeObject, kernel: str, grid, block, args: list, *, outputs: list[int] = (), lds: int = 0,
           budget: int = 50_000_000, checked: bool = False) -> Launch:
    """Run `kernel`: each numpy array in `args` becomes a buffer (pointer argument), each Python/numpy
    scalar a by-value argument; `None` a null pointer. Returns the arrays at positions `outputs`
    read back after the launch."""
    mem = Memory()
    packed, bufs = [], {}
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            addr = mem.alloc(a.nbytes, f"arg{i}")
            mem.write(addr, a.tobytes())
            bufs[i] = addr
            packed.append(_Ptr(addr))
        elif a is None:
            packed.append(_Ptr(0))
        else:
            v = np.asarray(a)
            packed.append(Scalar(v.tobytes()))
    meta = co.kernel(kernel).metadata
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    kernarg = pack_kernargs(meta, packed, Geometry(grid, block, lds), Apertures(PRIVATE_APERTURE_HI, SHARED_APERTURE_HI))
    rep = run_kernel(co, kernel, grid=grid, block=block, dynamic_lds=lds, kernarg=kernarg, memory=mem,
                     budget=budget, checked=checked)
    outs = {i: np.frombuffer(mem.read(bufs[i], args[i].nbytes), args[i].dtype).reshape(args[i].shape)
            for i in outputs}
    return Launch(rep, outs, mem)


def launch_raw(co: CodeObject, kernel: str, grid, block, arrays: list[np.ndarray], scalars: bytes = b"",
               layout: str = "packed", **kw) -> Launch:
    """Launch an `asm` kernel: pointer args for `arrays`, then up to 8 bytes of scalars; global
    memory in the given layout."""
    mem = Memory(layout=layout)
    addrs = []
    for i, a in enumerate(arrays):
        addr = mem.alloc(a.nbytes, f"arg{i}")
        mem.write(addr, a.tobytes())
        addrs.append(addr)
    kernarg = b"".join(struct.pack("<Q", a) for a in addrs) + (scalars + b"\0" * 8)[:8]
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    rep = run_kernel(co, kernel, grid=grid, block=block, dynamic_lds=kw.pop("lds", 0), kernarg=kernarg,
                     memory=mem, **kw)
    outs = {i: np.frombuffer(mem.read(addrs[i], a.nbytes), a.dtype).reshape(a.shape) for i, a in enumerate(arrays)}
    return Launch(rep, outs, mem)


@dataclass(frozen=True)
class _Ptr:
    address: int
