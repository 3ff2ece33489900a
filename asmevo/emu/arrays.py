"""Set operations on the emulator's per-lane integer arrays. A wave's lanes mostly repeat their neighbours'
page or cache line, so runs of equal neighbours are dropped first (one pass) and only what remains is
sorted: `np.unique` sorts (or, for integers since numpy 2.3, hashes) every lane of a batch of waves, which
bench-shape traces pay once per memory instruction."""
from __future__ import annotations

import numpy as np


def _runs(values: np.ndarray) -> np.ndarray:
    """`values` (1-D) without the elements equal to their predecessor."""
    if values.size < 2:
        return values
    keep = np.empty(values.size, bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D integer array, ascending (what `np.unique` returns)."""
    return _runs(np.sort(_runs(values)))


def distinct_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values ascending, how often each occurs) of a 1-D integer array."""
    s = np.sort(values)
    if not s.size:
        return s, np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    return s[starts], np.diff(np.append(starts, s.size))
