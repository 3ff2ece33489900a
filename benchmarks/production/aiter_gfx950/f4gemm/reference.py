"""Reference for f4gemm (AITer's MXFP4 GEMM, gfx950): D = (A * 2^(sA - 127)) @ (B * 2^(sB - 127))^T in float64,
rounded once to bf16. A [M, K / 2] and B [N, K / 2] hold two fp4 E2M1 values per byte, element 2j in the low nibble
(aiter/utility/fp4_utils.py pack_uint4); E2M1 codes are the OCP MX values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
negatives (sign bit 3). sA [M, K / 32] and sB [N, K / 32] are E8M0 codes, one per row and 32-wide K block, stored
as fp4_utils.e8m0_shuffle lays them out: padded to (cdiv(rows, 256) * 256, cdiv(K / 32, 8) * 8), then viewed as
(rows / 32, 2, 16, cols / 8, 2, 4) and permuted (0, 3, 5, 2, 4, 1), so one lane's dword holds the scales of rows
r and r + 16 for K blocks c and c + 4. B is stored as aiter/ops/shuffle.py shuffle_weight(B, layout=(16, 16))
leaves it (the BpreShuffle kernels).

generate() draws every byte of A and B at random and the scale bytes from 2^-5 .. 2^5 (codes 122..132), the four
bytes of each scale dword distinct, so a kernel (or emulator) that picks the wrong scale byte, row or block, or
misreads a layout, misses the reference."""
import numpy as np

from asmevo.suites.refutil import f32_to_bf16, shuffle_weight, unshuffle_weight

E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])
SCALE_CODES = np.arange(122, 133)


def unpack_fp4(packed: np.ndarray) -> np.ndarray:
    """[R, K / 2] bytes -> [R, K] float64 values, low nibble first."""
    out = np.empty((packed.shape[0], 2 * packed.shape[1]))
    out[:, 0::2], out[:, 1::2] = E2M1[packed & 0xF], E2M1[packed >> 4]
    return out


def e8m0_unshuffle(stored: np.ndarray) -> np.ndarray:
    """The [rows, cols] scale matrix (padded) from e8m0_shuffle's layout."""
    rows, cols = stored.shape
    return stored.reshape(rows // 32, cols // 8, 4, 16, 2, 2).transpose(0, 5, 3, 1, 4, 2).reshape(rows, cols)


def generate(launch, rng):
    bufs = {f["buffer"]: f["shape"] for f in launch["args"][0]["struct"] if "shape" in f}
    out = {name: rng.integers(0, 256, bufs[name], dtype=np.uint8) for name in ("A", "B")}
    out["B"] = shuffle_weight(out["B"], 16)
    for name in ("scale_A", "scale_B"):
        rows, cols = bufs[name]
        dwords = rows * cols // 4
        picks = np.argsort(rng.random((dwords, len(SCALE_CODES))), axis=1)[:, :4]  # 4 distinct codes per dword
        out[name] = SCALE_CODES[picks].astype(np.uint8).reshape(rows, cols)
    return out


def reference(inputs, scalars):
    m, n = inputs["D"].shape
    blocks = 2 * inputs["A"].shape[1] // 32
    sa = e8m0_unshuffle(inputs["scale_A"])[:m, :blocks].astype(np.float64)
    sb = e8m0_unshuffle(inputs["scale_B"])[:n, :blocks].astype(np.float64)
    a = unpack_fp4(inputs["A"]) * np.repeat(np.exp2(sa - 127), 32, axis=1)
    b = unpack_fp4(unshuffle_weight(inputs["B"], 16)) * np.repeat(np.exp2(sb - 127), 32, axis=1)
    return {"D": f32_to_bf16((a @ b.T).astype(np.float32))}
