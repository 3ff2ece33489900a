"""LLVM's disassembler in this process, through the LLVM-C API of a shared libLLVM (ctypes).

One call per instruction, no process start: `Disassembler("gfx942").decode(data, address)` gives
`(size, text)` with LLVM's instruction text (as llvm-objdump prints it, but branch targets as raw
offsets). The library is the one of the toolchain `asmevo.toolchain` finds for the processor: its
own (`rocm-llvm-python`'s for the PyPI toolchain), else the one next to its tools
(`<bin>/../lib/libLLVM*.so*`), else the system's versioned libLLVM of the same major version.
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path

from .errors import ToolchainError
from .toolchain import find_toolchain

TRIPLE = b"amdgcn-amd-amdhsa"
_TEXT_BYTES = 512


def _library_candidates(bin_dir: Path, major: int) -> list[Path]:
    lib_dir = bin_dir.parent / "lib"
    local = sorted(lib_dir.glob("libLLVM*.so*"), key=lambda p: (len(p.name), p.name))
    system = [Path(f"/usr/lib/x86_64-linux-gnu/libLLVM.so.{major}.1"), Path(f"/usr/lib/llvm-{major}/lib/libLLVM.so"),
              Path(f"/usr/lib/aarch64-linux-gnu/libLLVM.so.{major}.1")]
    return [p for p in [*local, *system] if p.is_file()]


def _library(processor: str) -> ctypes.CDLL:
    tc = find_toolchain(processor)
    if tc.library:
        return _load(tc.library, (Path(tc.library),), tc.major)
    bin_dir = Path(tc.path("llvm-mc")).resolve().parent
    return _load(str(bin_dir), tuple(_library_candidates(bin_dir, tc.major)), tc.major)


@functools.lru_cache(maxsize=None)
def _load(where: str, candidates: tuple[Path, ...], major: int) -> ctypes.CDLL:
    """The first of `candidates` that loads and has the AMDGPU disassembler (one per toolchain)."""
    tried = []
    for path in candidates:
        try:
            lib = ctypes.CDLL(str(path))
            for init in ("LLVMInitializeAMDGPUTargetInfo", "LLVMInitializeAMDGPUTargetMC",
                         "LLVMInitializeAMDGPUDisassembler"):
                getattr(lib, init)()
        except (OSError, AttributeError) as exc:
            tried.append(f"{path} ({exc})")
            continue
        lib.LLVMCreateDisasmCPU.restype = ctypes.c_void_p
        lib.LLVMCreateDisasmCPU.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int,
                                            ctypes.c_void_p, ctypes.c_void_p]
        lib.LLVMDisasmInstruction.restype = ctypes.c_size_t
        lib.LLVMDisasmInstruction.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64,
                                              ctypes.c_char_p, ctypes.c_size_t]
        return lib
    raise ToolchainError(f"no usable libLLVM with the AMDGPU target at {where}"
                         f"{' (tried ' + '; '.join(tried) + ')' if tried else ''}; install libllvm{major}")


class Disassembler:
    """An LLVM MC disassembler for one AMDGPU processor (e.g. "gfx942")."""

    def __init__(self, processor: str):
        self._lib = _library(processor)
        self._ctx = self._lib.LLVMCreateDisasmCPU(TRIPLE, processor.encode(), None, 0, None, None)
        if not self._ctx:
            raise ToolchainError(f"libLLVM has no disassembler for {processor}")
        self._out = ctypes.create_string_buffer(_TEXT_BYTES)

    def decode(self, data: bytes, address: int = 0) -> tuple[int, str]:
        """(size in bytes, instruction text) of the instruction at the start of `data`; size 0 when
        the bytes are no valid instruction."""
        size = self._lib.LLVMDisasmInstruction(self._ctx, data, len(data), address, self._out, _TEXT_BYTES)
        return int(size), self._out.value.decode(errors="replace").strip()

    def __del__(self):
        ctx, self._ctx = getattr(self, "_ctx", None), None
        if ctx:
            self._lib.LLVMDisasmDispose(ctypes.c_void_p(ctx))
