"""Element types of launch-spec buffers and scalars, and how values are encoded in them.

Every type has a numpy *storage* dtype holding its exact bits: float16 is `np.float16`;
bfloat16 is `uint16` bits and the fp8 types are `uint8` bits, since numpy has neither: CDNA3's FNUZ
formats (`float8_e4m3fnuz`, `float8_e5m2fnuz`: no inf, no -0, NaN 0x80) and CDNA4's OCP E4M3
(`float8_e4m3fn`, OCP MX specification 1.0: bias 7, no inf, NaN S.1111.111, max 448, -0 is 0x80).
Encoding rounds to nearest even; fp8 saturates at its finite max.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import LaunchSpecError


def _minifloat_table(exp_bits: int, man_bits: int, bias: int) -> np.ndarray:
    """Values of the non-negative codes 0..2^(e+m)-1 of an fp8 format without inf (all finite: the caller
    drops an OCP format's NaN code)."""
    codes = np.arange(1 << (exp_bits + man_bits))
    exp, man = codes >> man_bits, codes & ((1 << man_bits) - 1)
    scale = 1 << man_bits
    normal = (1 + man / scale) * np.exp2(exp - bias)
    subnormal = (man / scale) * np.exp2(1 - bias)
    return np.where(exp == 0, subnormal, normal)


@dataclass(frozen=True)
class DType:
    """A launch-spec element type: `kind` is float, int, uint or bool. fp8 types carry the values of their
    finite non-negative codes (`fp8_table`) and whether they follow OCP (NaN S.1111.111) or FNUZ (NaN 0x80)."""

    name: str
    storage: np.dtype
    kind: str
    fp8_table: tuple[float, ...] | None = None
    fp8_ocp: bool = False

    @property
    def itemsize(self) -> int:
        return self.storage.itemsize

    def encode(self, values) -> np.ndarray:
        """Values (floats or ints) to storage bits; ints wrap modulo their width."""
        x = np.asarray(values)
        if self.name == "bfloat16":
            return _f32_to_bf16(x.astype(np.float32))
        if self.fp8_table is not None:
            return _to_fp8(x.astype(np.float64), np.asarray(self.fp8_table), 0x7F if self.fp8_ocp else 0x80)
        if self.kind == "bool":
            return (x.astype(np.int64) % 2).astype(np.bool_) if x.dtype.kind in "iu" else x.astype(np.bool_)
        if self.kind in ("int", "uint") and x.dtype.kind == "f":
            x = np.trunc(x).astype(np.int64)
        return x.astype(self.storage)

    def decode(self, bits: np.ndarray) -> np.ndarray:
        """Storage bits to numbers (float32 for bfloat16 and fp8, otherwise the array itself)."""
        if self.name == "bfloat16":
            return (bits.astype(np.uint32) << 16).view(np.float32)
        if self.fp8_table is not None:
            table = np.asarray(self.fp8_table, dtype=np.float32)
            low = bits & 0x7F
            mag = table[np.minimum(low, len(table) - 1)]
            out = np.where(bits & 0x80, -mag, mag).astype(np.float32)
            out[(low == 0x7F) if self.fp8_ocp else (bits == 0x80)] = np.nan
            return out
        return bits


def _f32_to_bf16(x: np.ndarray) -> np.ndarray:
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), rounded).astype(np.uint16)


def _to_fp8(x: np.ndarray, table: np.ndarray, nan: int) -> np.ndarray:
    mag = np.minimum(np.abs(x), table[-1])
    hi = np.clip(np.searchsorted(table, mag), 0, len(table) - 1)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = mag - table[lo], table[hi] - mag
    code = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo).astype(np.uint8)
    code = np.where((x < 0) & (code != 0), code | 0x80, code)
    return np.where(np.isnan(x), nan, code).astype(np.uint8)


_TYPES = [DType("float16", np.dtype(np.float16), "float"),
          DType("bfloat16", np.dtype(np.uint16), "float"),
          DType("float32", np.dtype(np.float32), "float"),
          DType("float64", np.dtype(np.float64), "float"),
          DType("float8_e4m3fnuz", np.dtype(np.uint8), "float", tuple(_minifloat_table(4, 3, 8))),
          DType("float8_e5m2fnuz", np.dtype(np.uint8), "float", tuple(_minifloat_table(5, 2, 16))),
          DType("float8_e4m3fn", np.dtype(np.uint8), "float", tuple(_minifloat_table(4, 3, 7)[:0x7F]), True),
          DType("bool", np.dtype(np.bool_), "bool")]
_TYPES += [DType(f"int{b}", np.dtype(f"int{b}"), "int") for b in (8, 16, 32, 64)]
_TYPES += [DType(f"uint{b}", np.dtype(f"uint{b}"), "uint") for b in (8, 16, 32, 64)]
DTYPES: dict[str, DType] = {t.name: t for t in _TYPES}
ALIASES = {"fp8_e4m3fnuz": "float8_e4m3fnuz", "fp8_e5m2fnuz": "float8_e5m2fnuz"}


def get_dtype(name: object) -> DType:
    """The DType called `name` (or an fp8 alias); LaunchSpecError listing the valid names."""
    if isinstance(name, str) and (ALIASES.get(name, name) in DTYPES):
        return DTYPES[ALIASES.get(name, name)]
    raise LaunchSpecError(f"unknown dtype {name!r} (valid: {', '.join(DTYPES)})")


def _encode_one(value: object, dtype: DType) -> np.ndarray:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if dtype.kind in ("int", "uint"):
        if not is_int:
            raise LaunchSpecError(f"scalar {value!r} is not an integer for dtype {dtype.name}")
        info = np.iinfo(dtype.storage)
        if not info.min <= value <= info.max:
            raise LaunchSpecError(f"scalar {value} is out of range for {dtype.name} [{info.min}, {info.max}]")
        return dtype.encode(np.asarray([value], dtype=object))
    if not (is_int or isinstance(value, float) or (dtype.kind == "bool" and isinstance(value, bool))):
        raise LaunchSpecError(f"scalar {value!r} is not a number for dtype {dtype.name}")
    return dtype.encode(np.asarray([value]))


def encode_scalar(value: object, dtype: object) -> bytes:
    """Bytes of a by-value argument: a number of one dtype, a list (an array or vector of one
    dtype), or a list of values with a list of dtypes (a C struct: natural alignment, tail padding)."""
    if isinstance(dtype, list):
        if not isinstance(value, list) or len(value) != len(dtype):
            raise LaunchSpecError(f"struct scalar needs a list of {len(dtype)} values, one per dtype")
        types = [get_dtype(d) for d in dtype]
        layout = np.dtype([(f"f{i}", t.storage) for i, t in enumerate(types)], align=True)
        record = np.zeros(1, dtype=layout)
        for i, (v, t) in enumerate(zip(value, types)):
            record[f"f{i}"] = _encode_one(v, t)[0]
        return record.tobytes()
    t = get_dtype(dtype)
    values = value if isinstance(value, list) else [value]
    if not values:
        raise LaunchSpecError("scalar list is empty")
    return b"".join(_encode_one(v, t).tobytes() for v in values)
