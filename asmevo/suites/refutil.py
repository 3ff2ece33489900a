"""Small numpy helpers shared by suite reference.py files."""
from __future__ import annotations

import numpy as np


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 storage (uint16) to float32 values."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 to bfloat16 storage (uint16), round to nearest even (NaN stays NaN)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded).astype(np.uint16)


def erf(x: np.ndarray) -> np.ndarray:
    """Elementwise erf in float64 (numpy has none)."""
    import math
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, dtype=np.float64))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU in float64."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def shuffle_weight(w: np.ndarray, rows: int) -> np.ndarray:
    """AITer's shuffle_weight(layout=(rows, 16)) for 1-byte elements on the last two axes [N, K]: tiles of
    `rows` rows x 32 bytes in (row tile, k tile) order, each stored as two 16-byte column halves."""
    *lead, n, k = w.shape
    tiles = w.reshape(*lead, n // rows, rows, k // 32, 2, 16)
    return np.moveaxis(tiles, len(lead) + 1, len(lead) + 3).reshape(w.shape)


def unshuffle_weight(w: np.ndarray, rows: int) -> np.ndarray:
    """The inverse of `shuffle_weight`."""
    *lead, n, k = w.shape
    tiles = w.reshape(*lead, n // rows, k // 32, 2, rows, 16)
    return np.moveaxis(tiles, len(lead) + 3, len(lead) + 1).reshape(w.shape)
