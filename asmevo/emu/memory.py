"""Flat 64-bit global memory of one emulated launch: guarded buffers in one numpy heap.

Every buffer is surrounded by guard bands filled with GUARD_BYTE; the emulator flags any access
that is not wholly inside one buffer, and `guard_violations` reports guard bytes that changed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import EmulationError

BASE = 0x0000_7F00_0000_0000  # device address of heap byte 0
GUARD = 4096
GUARD_BYTE = 0xCD


@dataclass(frozen=True)
class Buffer:
    """One allocation: device `address`, `nbytes`, and the host-side `name`."""

    name: str
    address: int
    nbytes: int


class Memory:
    """Global memory for one launch. Addresses handed out are absolute device addresses."""

    def __init__(self, capacity: int = 1 << 20):
        self.heap = np.full(capacity, GUARD_BYTE, np.uint8)
        self.valid = np.zeros(capacity, bool)
        self.top = GUARD
        self._buffers: list[Buffer] = []

    def alloc(self, nbytes: int, name: str, align: int = 256) -> int:
        """Reserve `nbytes` (zero-filled) with guard bands; return its device address."""
        if nbytes < 0 or align <= 0 or align & (align - 1):
            raise EmulationError(f"bad allocation of {nbytes} bytes aligned to {align} for {name!r}")
        start = -(-self.top // max(align, 4)) * max(align, 4)
        end = start + nbytes
        self._grow(end + GUARD)
        self.heap[start:end] = 0
        self.valid[start:end] = True
        self.top = -(-end // 4) * 4 + GUARD
        buf = Buffer(name, BASE + start, nbytes)
        self._buffers.append(buf)
        return buf.address

    def _grow(self, need: int) -> None:
        if need <= len(self.heap):
            return
        cap = max(need + (16 << 20), 2 * len(self.heap))
        cap = -(-cap // 4096) * 4096
        heap = np.empty(cap, np.uint8)
        heap[:len(self.heap)] = self.heap
        heap[len(self.heap):] = GUARD_BYTE
        valid = np.zeros(cap, bool)
        valid[:len(self.valid)] = self.valid
        self.heap, self.valid = heap, valid

    def _span(self, address: int, nbytes: int) -> int:
        off = address - BASE
        if nbytes < 0 or off < 0 or off + nbytes > len(self.heap) or not self.valid[off:off + nbytes].all():
            raise EmulationError(f"host access of {nbytes} bytes at 0x{address:x} is outside every buffer")
        return off

    def write(self, address: int, data: bytes) -> None:
        """Host copy into device memory (must lie inside allocated buffers)."""
        off = self._span(address, len(data))
        self.heap[off:off + len(data)] = np.frombuffer(bytes(data), np.uint8)

    def read(self, address: int, nbytes: int) -> bytes:
        """Host copy out of device memory."""
        off = self._span(address, nbytes)
        return self.heap[off:off + nbytes].tobytes()

    def buffers(self) -> list[Buffer]:
        return list(self._buffers)

    def guard_violations(self) -> list[str]:
        """Names of buffers whose guard band before or after was overwritten."""
        out = []
        for buf in self._buffers:
            off = buf.address - BASE
            before = self.heap[max(0, off - GUARD):off]
            after = self.heap[off + buf.nbytes:off + buf.nbytes + GUARD]
            # Padding up to the next dword and other buffers' data may lie in the windows.
            bad_before = (before != GUARD_BYTE) & ~self.valid[max(0, off - GUARD):off]
            bad_after = (after != GUARD_BYTE) & ~self.valid[off + buf.nbytes:off + buf.nbytes + GUARD]
            if bad_before.any():
                out.append(f"{buf.name}: guard band before 0x{buf.address:x} overwritten")
            if bad_after.any():
                out.append(f"{buf.name}: guard band after 0x{buf.address + buf.nbytes:x} overwritten")
        return out

    # ---- vectorised device accesses (used by the emulator) -------------------------------------
    def in_bounds(self, off: np.ndarray, size: int) -> np.ndarray:
        """Per-access: does [off, off+size) lie inside one buffer? `off` is int64 heap offsets."""
        if off.size:
            lo, hi = int(off.min()), int(off.max()) + size
            for buf in self._buffers:  # fast path: every access inside one buffer
                start = buf.address - BASE
                if start <= lo and hi <= start + buf.nbytes:
                    return np.ones(off.shape, bool)
        ok = (off >= 0) & (off + size <= len(self.heap))
        safe = np.where(ok, off, 0)
        ok &= self.valid[safe] & self.valid[safe + (size - 1) * ok]
        return ok

    def gather(self, off: np.ndarray, size: int) -> np.ndarray:
        """Load `size` bytes (1, 2, or a multiple of 4) per offset -> uint32 [..., max(1, size//4)]."""
        if size >= 4:
            n = size // 4
            if not (off & 3).any():
                words = self.heap.view(np.uint32)
                if n == 1:
                    return words[off >> 2][..., None]
                idx = (off >> 2)[..., None] + np.arange(n)
                return words[idx]
            idx = off[..., None] + np.arange(size)
            return self.heap[idx].view(np.uint32).reshape(off.shape + (n,))
        idx = off[..., None] + np.arange(size)
        raw = self.heap[idx]
        val = raw[..., 0].astype(np.uint32)
        if size == 2:
            val |= raw[..., 1].astype(np.uint32) << 8
        return val[..., None]

    def scatter(self, off: np.ndarray, size: int, data: np.ndarray) -> None:
        """Store `size` bytes per offset from uint32 data [..., max(1, size//4)] (later lanes win)."""
        if size >= 4 and not (off & 3).any():
            n = size // 4
            if n == 1:
                self.heap.view(np.uint32)[off >> 2] = data[..., 0]
                return
            idx = (off >> 2)[..., None] + np.arange(n)
            self.heap.view(np.uint32)[idx] = data
            return
        if size >= 4:
            raw = np.ascontiguousarray(data, np.uint32).view(np.uint8).reshape(off.shape + (size,))
        else:
            raw = (data[..., :1] >> (np.arange(size, dtype=np.uint32) * 8)).astype(np.uint8)
        self.heap[off[..., None] + np.arange(size)] = raw
