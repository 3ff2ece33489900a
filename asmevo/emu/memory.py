"""Flat 64-bit global memory of one emulated launch: guarded buffers in one numpy heap.

Every buffer is surrounded by guard bands filled with GUARD_BYTE; the emulator flags any access
that is not wholly inside one buffer, and `guard_violations` reports guard bytes that changed.
`SparseMemory` holds buffers far larger than the host's memory: only the 4 KiB pages a launch
touches exist, each filled on first touch (a probe of a few workgroups of a giant launch).

Two deterministic layouts map device addresses onto the heap. `packed`: heap byte k is device
address BASE + k (every buffer shares the high 32 address bits, none crosses a 4 GiB boundary).
`crossing`: buffer i (with its guard bands) is mapped on its own so that the 4 GiB boundary
BASE + (2i + 1) * 2^32 falls inside it, at the largest power of two (at least CROSS_MIN) below its
size: up to half its elements lie above, and a 64-bit address add that drops (or adds) a carry
points 4 GiB away, where no buffer lies. Buffers then have distinct high address bits, and are
aligned to that power of two (at least CROSS_MIN bytes) rather than to the requested alignment.
"""
from __future__ import annotations

import mmap
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import EmulationError
from .arrays import distinct
from .atomics import AtomicWriters

BASE = 0x0000_7F00_0000_0000  # device address of heap byte 0
GUARD = 4096
GUARD_BYTE = 0xCD
LAYOUTS = ("packed", "crossing")
CROSS_MIN = 16  # crossing layout: least distance of a buffer's start below its 4 GiB boundary
PAGE = 4096  # SparseMemory's unit of materialization
_KEY_SHIFT = 48  # WideMemory: device addresses relative to BASE below 2^48, the launch above
SPARSE_RESERVE = 1 << 40  # address space a SparseMemory reserves (nothing is committed until touched)
# Linux's MAP_NORESERVE (the mmap module does not export it everywhere): no swap reservation.
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform == "linux" else 0)
# A buffer's initial contents for sparse memory: fill(lo, hi) -> the uint8 bytes [lo, hi) of it.
Fill = Callable[[int, int], np.ndarray]


@dataclass(frozen=True)
class HeapBuffer:
    """One allocation: device `address`, `nbytes`, the host-side `name`, and where it starts in
    the heap (`start`)."""

    name: str
    address: int
    nbytes: int
    start: int


class Memory:
    """Global memory for one launch. Addresses handed out are absolute device addresses."""

    def __init__(self, capacity: int = 64 << 10, layout: str = "packed"):
        if layout not in LAYOUTS:
            raise EmulationError(f"unknown memory layout {layout!r} (valid: {', '.join(LAYOUTS)})")
        self.layout = layout
        self.atomic_writers = AtomicWriters()  # this launch's atomic updates (`begin_launch` resets)
        self.heap = self._new_heap(capacity)
        self.top = GUARD
        self._buffers: list[HeapBuffer] = []
        # heap ranges [start, end) of the buffers, in allocation (= address) order
        self._starts = np.zeros(0, np.int64)
        self._ends = np.zeros(0, np.int64)
        # crossing layout: per buffer, the device range [lo, hi) it and its guard bands occupy and
        # the device-to-heap displacement
        self._lo = np.zeros(0, np.uint64)
        self._hi = np.zeros(0, np.uint64)
        self._shift = np.zeros(0, np.uint64)

    def begin_launch(self) -> None:
        """A launch starts: forget the previous launch's atomic updates (launches are ordered)."""
        self.atomic_writers = AtomicWriters()

    def alloc(self, nbytes: int, name: str, align: int = 256) -> int:
        """Reserve `nbytes` (zero-filled) with guard bands; return its device address."""
        if nbytes < 0 or align <= 0 or align & (align - 1):
            raise EmulationError(f"bad allocation of {nbytes} bytes aligned to {align} for {name!r}")
        step = max(align, 4 if self.layout == "packed" else CROSS_MIN)
        start = -(-self.top // step) * step
        end = start + nbytes
        self._grow(end + GUARD)
        self._clear(start, end)
        self.top = -(-end // 4) * 4 + GUARD
        address = BASE + start if self.layout == "packed" else self._map_crossing(start, nbytes)
        buf = HeapBuffer(name, address, nbytes, start)
        self._buffers.append(buf)
        self._starts = np.append(self._starts, start)
        self._ends = np.append(self._ends, end)
        return buf.address

    def _new_heap(self, capacity: int) -> np.ndarray:
        return np.full(capacity, GUARD_BYTE, np.uint8)

    def _clear(self, start: int, end: int) -> None:
        self.heap[start:end] = 0

    def touch(self, off: np.ndarray, size: int) -> None:
        """Make the heap bytes [off, off + size) readable and writable (dense memory: always are)."""

    def buffer_index(self, off: np.ndarray) -> np.ndarray:
        """Index (allocation order) of the buffer each in-bounds heap offset lies in."""
        if off.size:  # fast path: the lowest and the highest offset in one buffer, so all are
            lo, hi = np.searchsorted(self._starts, [off.min(), off.max()], side="right") - 1
            if lo == hi:
                return np.full(off.shape, max(int(lo), 0), np.int64)
        return np.maximum(np.searchsorted(self._starts, off, side="right") - 1, 0)

    def _inside(self, off: np.ndarray, size: int) -> np.ndarray:
        """Per offset: does [off, off + size) lie inside one buffer?"""
        if not len(self._starts):
            return np.zeros(off.shape, bool)
        k = np.maximum(np.searchsorted(self._starts, off, side="right") - 1, 0)
        return (off >= self._starts[k]) & (off + size <= self._ends[k])

    def _map_crossing(self, start: int, nbytes: int) -> int:
        """Device address of a new buffer at heap offset `start` in the crossing layout."""
        below = max(CROSS_MIN, 1 << max(0, (nbytes - 1).bit_length() - 1))
        address = BASE + ((2 * len(self._buffers) + 1) << 32) - below
        self._lo = np.append(self._lo, np.uint64(address - GUARD))
        self._hi = np.append(self._hi, np.uint64(address + nbytes + GUARD))
        self._shift = np.append(self._shift, np.uint64(address - start))
        return address

    def offsets(self, address: np.ndarray) -> np.ndarray:
        """Heap offsets (int64) of uint64 device addresses; an address no buffer or guard band
        covers gets an offset outside the heap (negative or past its end)."""
        if self.layout == "packed":
            return (address - np.uint64(BASE)).view(np.int64)
        if not len(self._lo):
            return np.full(address.shape, -1, np.int64)
        k = np.maximum(np.searchsorted(self._lo, address, side="right") - 1, 0)
        inside = (address >= self._lo[k]) & (address < self._hi[k])
        return np.where(inside, (address - self._shift[k]).view(np.int64), -1)

    def _grow(self, need: int) -> None:
        if need <= len(self.heap):
            return
        cap = -(-max(need, 2 * len(self.heap)) // PAGE) * PAGE
        heap = np.empty(cap, np.uint8)
        heap[:len(self.heap)] = self.heap
        heap[len(self.heap):] = GUARD_BYTE
        self.heap = heap

    def _span(self, address: int, nbytes: int) -> int:
        off = self.offsets(np.array([address], np.uint64))
        if nbytes < 0 or off[0] < 0 or (nbytes and not self._inside(off, nbytes)[0]):
            raise EmulationError(f"host access of {nbytes} bytes at 0x{address:x} is outside every buffer")
        self.touch(off, max(nbytes, 1))
        return int(off[0])

    def write(self, address: int, data: bytes) -> None:
        """Host copy into device memory (must lie inside allocated buffers)."""
        off = self._span(address, len(data))
        self.heap[off:off + len(data)] = np.frombuffer(bytes(data), np.uint8)

    def read(self, address: int, nbytes: int) -> bytes:
        """Host copy out of device memory."""
        off = self._span(address, nbytes)
        return self.heap[off:off + nbytes].tobytes()

    def buffers(self) -> list[HeapBuffer]:
        return list(self._buffers)

    def guard_violations(self) -> list[str]:
        """Names of buffers whose guard band before or after was overwritten."""
        out = []
        for buf in self._buffers:
            # Buffers lie at least GUARD bytes apart: the bands hold no other buffer's data.
            end = buf.start + buf.nbytes
            self.touch(np.array([buf.start - GUARD, end], np.int64), GUARD)
            if (self.heap[buf.start - GUARD:buf.start] != GUARD_BYTE).any():
                out.append(f"{buf.name}: guard band before 0x{buf.address:x} overwritten")
            if (self.heap[end:end + GUARD] != GUARD_BYTE).any():
                out.append(f"{buf.name}: guard band after 0x{buf.address + buf.nbytes:x} overwritten")
        return out

    # ---- vectorised device accesses (used by the emulator) -------------------------------------
    def locate(self, address: np.ndarray, size: int, launch: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(heap offsets, whether each access of `size` bytes lies wholly inside one buffer) of uint64
        device addresses; `launch` (the launch of each access) matters only to `WideMemory`."""
        off = self.offsets(address)
        return off, self.in_bounds(off, size)

    def in_bounds(self, off: np.ndarray, size: int) -> np.ndarray:
        """Per-access: does [off, off+size) lie inside one buffer? `off` is int64 heap offsets."""
        if off.size:
            lo, hi = int(off.min()), int(off.max()) + size
            for buf in self._buffers:  # fast path: every access inside one buffer
                if buf.start <= lo and hi <= buf.start + buf.nbytes:
                    return np.ones(off.shape, bool)
        return self._inside(off, size)

    def gather(self, off: np.ndarray, size: int) -> np.ndarray:
        """Load `size` bytes (1, 2, or a multiple of 4) per offset -> uint32 [..., max(1, size//4)]."""
        self.touch(off, size)
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
        self.touch(off, size)
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


class WideMemory(Memory):
    """The global memories of several launches of one kernel emulated together (`run_kernel_wide`):
    their heaps one after another in one heap, launch k's from `bases[k]`. Each launch keeps its own
    device addresses (launches may use different layouts, so equal addresses mean different bytes):
    an access is in bounds only wholly inside one of its own launch's buffers, exactly as in a launch
    of its own, and lands in that launch's part of the heap. `release()` hands each memory its part
    of the heap as a view (what the launch wrote)."""

    def __init__(self, memories: list[Memory]):
        if any(isinstance(m, SparseMemory) for m in memories):
            raise EmulationError("sparse memories are not run together")
        sizes = [-(-len(m.heap) // PAGE) * PAGE for m in memories]
        self.bases = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.memories = memories
        self.layout = "wide"
        self.atomic_writers = AtomicWriters()
        self.heap = np.full(int(sum(sizes)), GUARD_BYTE, np.uint8)
        for m, base in zip(memories, self.bases.tolist()):
            self.heap[base:base + len(m.heap)] = m.heap
        self._buffers = [HeapBuffer(b.name, b.address, b.nbytes, b.start + base)
                         for m, base in zip(memories, self.bases.tolist()) for b in m._buffers]
        self._starts = np.array([b.start for b in self._buffers], np.int64)
        self._ends = np.array([b.start + b.nbytes for b in self._buffers], np.int64)
        # Every buffer of every launch as a key range: (launch << _KEY_SHIFT) + its device address
        # relative to BASE, and what turns such a key's address into a heap offset.
        keys = [((k << _KEY_SHIFT) + b.address - BASE, b.nbytes, base + b.start - (b.address - BASE))
                for k, (m, base) in enumerate(zip(memories, self.bases.tolist())) for b in m._buffers]
        keys.sort()
        self._lo = np.array([lo for lo, _, _ in keys], np.int64)
        self._hi = self._lo + np.array([n for _, n, _ in keys], np.int64)
        self._delta = np.array([d for _, _, d in keys], np.int64)

    def locate(self, address: np.ndarray, size: int, launch: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Heap offsets of accesses of `size` bytes at each access's own launch's address, and
        whether each lies wholly inside one of that launch's buffers (`launch`: the launch of each
        access, same shape); an access that does not gets offset -1."""
        rel = (address - np.uint64(BASE)).view(np.int64)
        valid = (rel >= 0) & (rel < (1 << _KEY_SHIFT))
        key = (launch.astype(np.int64) << _KEY_SHIFT) + np.where(valid, rel, 0)
        k = np.maximum(np.searchsorted(self._lo, key, side="right") - 1, 0)
        ok = valid & (key >= self._lo[k]) & (key + size <= self._hi[k])
        return np.where(ok, rel + self._delta[k], -1), ok

    def offsets(self, address: np.ndarray) -> np.ndarray:
        raise EmulationError("a wide memory translates addresses per launch (locate)")

    def alloc(self, nbytes: int, name: str, align: int = 256) -> int:
        raise EmulationError("a wide memory holds the buffers of its launches; allocate there")

    def release(self, launch: int) -> None:
        """Give launch `launch`'s memory its part of the heap (a view: what the launch wrote)."""
        m = self.memories[launch]
        base = int(self.bases[launch])
        m.heap = self.heap[base:base + len(m.heap)]


class SparseMemory(Memory):
    """Memory whose heap is reserved address space: a 4 KiB page exists only once an access (or
    the host) touches it, and is then filled with guard bytes and, where buffers cover it, their
    initial contents (`alloc`'s `fill`, zeros without one). Buffers may be far larger than host
    memory as long as a launch touches few pages."""

    def __init__(self, layout: str = "packed", reserve: int = SPARSE_RESERVE):
        self._fills: list[Fill | None] = []
        self._pages: set[int] = set()
        self._reserve = reserve
        super().__init__(capacity=reserve, layout=layout)

    def _new_heap(self, capacity: int) -> np.ndarray:
        try:
            self._map = mmap.mmap(-1, capacity, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
        except OSError as exc:
            raise EmulationError(f"sparse memory cannot reserve {capacity >> 30} GiB of address space ({exc}); "
                                 f"it needs memory overcommit (vm.overcommit_memory 0 or 1)") from None
        return np.frombuffer(self._map, np.uint8)

    def alloc(self, nbytes: int, name: str, align: int = 256, fill: Fill | None = None) -> int:
        """Reserve `nbytes` whose bytes [lo, hi) read as `fill(lo, hi)` until written (zeros without
        a fill); nothing is materialized yet."""
        self._fills.append(fill)
        return super().alloc(nbytes, name, align)

    def _clear(self, start: int, end: int) -> None:
        """Nothing to do: pages are filled when first touched."""

    def _grow(self, need: int) -> None:
        if need > self._reserve:
            raise EmulationError(f"sparse memory of {self._reserve >> 30} GiB cannot hold {need >> 30} GiB of buffers")

    def touch(self, off: np.ndarray, size: int) -> None:
        off = np.asarray(off, np.int64).ravel()
        if size <= PAGE:  # an access spans at most two pages
            pages = distinct(np.concatenate([off // PAGE, (off + size - 1) // PAGE]))
        else:
            pages = distinct(np.concatenate([np.arange(o // PAGE, (o + size - 1) // PAGE + 1) for o in off.tolist()]))
        pages = pages[(pages >= 0) & (pages < self._reserve // PAGE)]
        for page in pages.tolist():
            if page not in self._pages:
                self._materialize(page)

    def _materialize(self, page: int) -> None:
        lo, hi = page * PAGE, (page + 1) * PAGE
        self.heap[lo:hi] = GUARD_BYTE
        k = max(int(np.searchsorted(self._starts, lo, side="right")) - 1, 0)
        for buf, fill in zip(self._buffers[k:], self._fills[k:]):
            if buf.start >= hi:
                break
            a, b = max(lo, buf.start), min(hi, buf.start + buf.nbytes)
            if a < b:
                self.heap[a:b] = 0 if fill is None else fill(a - buf.start, b - buf.start)
        self._pages.add(page)

    def touched(self, buf: HeapBuffer) -> list[tuple[int, int]]:
        """The byte ranges [lo, hi) of `buf` (relative to its start) that lie on materialized pages,
        in order; adjacent pages merge into one range."""
        end = buf.start + buf.nbytes
        out: list[tuple[int, int]] = []
        for page in sorted(p for p in self._pages if p * PAGE < end and (p + 1) * PAGE > buf.start):
            a, b = max(page * PAGE, buf.start) - buf.start, min((page + 1) * PAGE, end) - buf.start
            if out and out[-1][1] == a:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
        return out

    @property
    def resident_bytes(self) -> int:
        """Bytes of the pages materialized so far."""
        return len(self._pages) * PAGE
