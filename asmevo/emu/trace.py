"""What a traced launch records for the timing model (`asmevo.model`).

Per wave: how many times it took each CFG edge (block -> block; the kernel's entry edge is
(-1, entry block)), so every wave's own path is known, not only per-instruction totals. Per
instruction: the global-memory bytes its active lanes moved, the distinct 128-byte lines each
wave's lanes touched (coalescing is per wave instruction), and which buffer they fell in. Waves
are numbered by flat workgroup id times waves per workgroup plus the wave's index in its
workgroup, as in `run_kernel`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .arrays import distinct, distinct_counts

LINE_BYTES = 128  # CDNA3 L2 cache line (CDNA3 white paper)
ENTRY = -1        # pseudo-block before the kernel's first block


@dataclass
class MemoryStats:
    """Global memory traffic of one instruction, summed over its executions."""

    executions: int = 0
    bytes: int = 0
    lines: int = 0
    by_buffer: dict[int, int] = field(default_factory=dict)  # buffer index -> bytes


class LaunchTrace:
    """Recorder handed to `run_kernel(trace=...)`; `block_of` maps block-start addresses to block
    indices of the kernel's CFG."""

    def __init__(self, block_of: dict[int, int]):
        self.block_of = block_of
        self.edges: dict[tuple[int, int], int] = {}      # edge -> column
        self._batches: list[tuple[np.ndarray, dict[int, np.ndarray]]] = []
        self._waves = np.zeros(0, np.int64)
        self._last = np.zeros(0, np.int64)
        self._counts: dict[int, np.ndarray] = {}
        self.memory: dict[int, MemoryStats] = {}
        self.buffer_bytes: list[int] = []  # the launch's buffers by allocation index (set by the runner)

    # ---- recording (called by the emulator) ---------------------------------------------------
    def begin_batch(self, wave_ids: np.ndarray) -> None:
        """A new batch of waves (their launch-wide numbers) starts."""
        self._flush()
        self._waves = np.asarray(wave_ids, np.int64)
        self._last = np.full(len(self._waves), ENTRY, np.int64)
        self._counts = {}

    def enter(self, waves: np.ndarray, block: int) -> None:
        """Batch-local `waves` start `block`."""
        prev = self._last[waves]
        for p in distinct(prev):
            col = self.edges.setdefault((int(p), block), len(self.edges))
            counts = self._counts.get(col)
            if counts is None:
                counts = self._counts[col] = np.zeros(len(self._waves), np.int64)
            counts[waves[prev == p]] += 1
        self._last[waves] = block

    def access(self, pc: int, buffers: np.ndarray, offsets: np.ndarray, size: int, waves: np.ndarray) -> None:
        """One execution of a global access at `pc` by a group of waves: the heap offsets of its
        in-bounds lanes, the buffer index of each and the group row (wave) of each. Lines are
        distinct per wave: each wave's instruction is coalesced and sent on its own (two waves
        reading one line make two requests), however the emulator grouped the waves."""
        st = self.memory.get(pc)
        if st is None:
            st = self.memory[pc] = MemoryStats()
        st.executions += 1
        st.bytes += size * len(offsets)
        rows = np.asarray(waves, np.int64)
        st.lines += len(distinct(offsets // LINE_BYTES * (int(rows.max(initial=0)) + 1) + rows))
        if buffers.size and (buffers == buffers[0]).all():  # the usual case: one buffer
            by_buffer = [(buffers[0], buffers.size)]
        else:
            by_buffer = zip(*distinct_counts(buffers))
        for b, n in by_buffer:
            st.by_buffer[int(b)] = st.by_buffer.get(int(b), 0) + size * int(n)

    def _flush(self) -> None:
        if len(self._waves):
            self._batches.append((self._waves, self._counts))
            self._waves = np.zeros(0, np.int64)

    # ---- results --------------------------------------------------------------------------------
    def edge_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(global wave ids, counts [waves, edges]) over every batch recorded."""
        self._flush()
        if not self._batches:
            return np.zeros(0, np.int64), np.zeros((0, len(self.edges)), np.int64)
        waves = np.concatenate([w for w, _ in self._batches])
        out = np.zeros((len(waves), len(self.edges)), np.int64)
        row = 0
        for w, counts in self._batches:
            for col, c in counts.items():
                out[row:row + len(w), col] = c
            row += len(w)
        return waves, out
