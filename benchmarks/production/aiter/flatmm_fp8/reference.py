"""Reference for flatmm_fp8: D = sum_b (A[:, b] @ B[:, b]^T) * a_scale[b][:, None] * b_scale[b][None, n // 128] over
128-wide K blocks b, fp8 E4M3FNUZ A [M, K] and B [N, K], fp16 D. The kernel reads B as AITer's
shuffle_weight(B, layout=(16, 16)) leaves it: 16x32 tiles of (row tile, k tile), each stored as two 16-column
halves of 16 rows x 16 bytes."""
import numpy as np

from asmevo.suites.refutil import unshuffle_weight


def fp8_e4m3fnuz(codes: np.ndarray) -> np.ndarray:
    """E4M3FNUZ codes to float64: exponent bias 8, 0x80 is NaN, no infinities."""
    c = codes.astype(np.int64)
    e, m = (c >> 3) & 15, c & 7
    mag = np.where(e == 0, m / 8 * 2.0 ** -7, (1 + m / 8) * 2.0 ** (e - 8))
    return np.where(c == 0x80, np.nan, np.where(c >> 7 == 1, -mag, mag))


def reference(inputs, scalars):
    a = fp8_e4m3fnuz(inputs["A"])
    b = fp8_e4m3fnuz(unshuffle_weight(inputs["B"], 16))
    (m, k), n = a.shape, b.shape[0]
    d = np.zeros((m, n))
    for blk in range(k // 128):
        ks = slice(blk * 128, (blk + 1) * 128)
        scale = inputs["a_scale"][blk].astype(np.float64)[:, None] * np.repeat(inputs["b_scale"][blk], 128)[None, :]
        d += a[:, ks] @ b[:, ks].T * scale
    return {"D": d.astype(np.float16)}
