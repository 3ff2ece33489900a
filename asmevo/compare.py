"""Buffer comparison: a candidate's buffers against K0's (differential verification) and a kernel's
outputs against a suite reference (`asmevo suite check`).

K0 vs K1: integers are compared exactly. Floats are compared bit for bit unless a tolerance is
declared (`atol`/`rtol` in the numpy `allclose` sense, or `max_ulp`); an element then passes when it
meets any declared criterion. Under a tolerance NaN positions must still match exactly and
infinities must be equal. The first failing element is reported with both values.

Against a reference (numpy values, possibly wider than the kernel's type): `{exact: true}` (equal
values, any NaN matches any NaN), `{atol, rtol}` (in float64) or `{max_ulp: N}`; NaNs must coincide.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from .errors import AsmEvoError

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class ToleranceError(AsmEvoError):
    """A tolerance declaration is malformed."""


@dataclass(frozen=True)
class Tolerance:
    """Allowed float deviation; all-zero and no `max_ulp` means bitwise."""

    atol: float = 0.0
    rtol: float = 0.0
    max_ulp: int | None = None

    @property
    def bitwise(self) -> bool:
        return self.atol == 0.0 and self.rtol == 0.0 and self.max_ulp is None

    @classmethod
    def from_dict(cls, d: dict) -> "Tolerance":
        unknown = set(d) - {"atol", "rtol", "max_ulp"}
        if unknown:
            raise ToleranceError(f"unknown tolerance keys {sorted(unknown)} (allowed: atol, rtol, max_ulp)")
        atol, rtol = float(d.get("atol", 0.0)), float(d.get("rtol", 0.0))
        ulp = d.get("max_ulp")
        if atol < 0 or rtol < 0 or (ulp is not None and int(ulp) < 0):
            raise ToleranceError(f"negative tolerance {d}")
        return cls(atol, rtol, None if ulp is None else int(ulp))


@dataclass(frozen=True)
class TolerancePolicy:
    """A default tolerance plus per-buffer overrides.

    Declared as `{"atol": .., "rtol": .., "max_ulp": .., "buffers": {name: {...}}}`; an empty
    declaration is bitwise for every buffer.
    """

    default: Tolerance = Tolerance()
    buffers: dict[str, Tolerance] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict | None) -> "TolerancePolicy":
        if not d:
            return cls()
        if not isinstance(d, dict):
            raise ToleranceError(f"tolerance must be a mapping, got {type(d).__name__}")
        d = dict(d)
        per = d.pop("buffers", {}) or {}
        return cls(Tolerance.from_dict(d), {name: Tolerance.from_dict(v) for name, v in per.items()})

    def for_buffer(self, name: str) -> Tolerance:
        return self.buffers.get(name, self.default)

    def to_dict(self) -> dict:
        out = asdict(self.default)
        if self.buffers:
            out["buffers"] = {k: asdict(v) for k, v in self.buffers.items()}
        return out


@dataclass(frozen=True)
class Difference:
    """The first element where the candidate differs from the reference."""

    buffer: str
    index: tuple[int, ...]
    expected: str
    actual: str
    reason: str
    count: int = 1

    def describe(self) -> str:
        where = f"{self.buffer}[{', '.join(map(str, self.index))}]" if self.index else self.buffer
        more = f" ({self.count} elements differ)" if self.count > 1 else ""
        return f"{where}: expected {self.expected}, got {self.actual} ({self.reason}){more}"


def _fmt(value) -> str:
    if isinstance(value, (np.floating, float)):
        bits = np.asarray(value).view(_UINT_OF_SIZE[np.asarray(value).itemsize])
        return f"{float(value)!r} (0x{int(bits):0{2 * np.asarray(value).itemsize}x})"
    return repr(value.item() if hasattr(value, "item") else value)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(_UINT_OF_SIZE[a.dtype.itemsize])


def ulp_distance(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Units in the last place between two arrays of sign-magnitude float bits of one width (+0 and
    -0 are 0 apart)."""
    nbits = expected.dtype.itemsize * 8
    sign_mask = 1 << (nbits - 1)

    def ordered(a: np.ndarray) -> np.ndarray:
        u = _bits(a).astype(np.uint64)
        mag = (u & np.uint64(sign_mask - 1)).astype(np.int64)
        return np.where(u & np.uint64(sign_mask), -mag, mag)

    return np.abs(ordered(expected) - ordered(actual))


def _first(mask: np.ndarray, shape: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    flat = np.flatnonzero(mask)
    idx = tuple(int(i) for i in np.unravel_index(int(flat[0]), shape)) if shape else ()
    return int(flat.size), idx


def compare_buffer(name: str, expected: np.ndarray, actual: np.ndarray, tol: Tolerance = Tolerance(),
                   decode: Callable[[np.ndarray], np.ndarray] | None = None) -> Difference | None:
    """The first difference between two buffers under `tol`, or None when they agree.

    `decode` marks a float type kept as integer bits (bfloat16, fp8): values come from
    `decode(bits)` and ULPs are counted on the bits."""
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return Difference(name, (), f"{expected.dtype}{list(expected.shape)}",
                          f"{actual.dtype}{list(actual.shape)}", "dtype or shape")
    if expected.size == 0:
        return None
    is_float = np.issubdtype(expected.dtype, np.floating) or decode is not None
    if not is_float or tol.bitwise:
        if expected.dtype.itemsize not in _UINT_OF_SIZE:
            raise ToleranceError(f"buffer {name}: cannot compare dtype {expected.dtype}")
        bad = _bits(expected) != _bits(actual)
        if not bad.any():
            return None
        count, idx = _first(bad, expected.shape)
        return Difference(name, idx, _fmt(expected[idx]), _fmt(actual[idx]),
                          "bitwise" if is_float else "exact", count)
    ev, av = (decode(expected), decode(actual)) if decode is not None else (expected, actual)
    nan_e, nan_a = np.isnan(ev), np.isnan(av)
    nan_bad = nan_e != nan_a
    if nan_bad.any():
        count, idx = _first(nan_bad, expected.shape)
        return Difference(name, idx, _fmt(ev[idx]), _fmt(av[idx]), "NaN position", count)
    finite = ~nan_e & np.isfinite(ev) & np.isfinite(av)
    inf_bad = ~nan_e & ~finite & (ev != av)
    e64 = ev.astype(np.float64)
    a64 = av.astype(np.float64)
    ok = np.zeros(expected.shape, dtype=bool)
    if tol.atol or tol.rtol:
        with np.errstate(invalid="ignore", over="ignore"):
            ok |= np.abs(a64 - e64) <= tol.atol + tol.rtol * np.abs(e64)
    if tol.max_ulp is not None:
        ok |= ulp_distance(expected, actual) <= tol.max_ulp
    bad = inf_bad | (finite & ~ok)
    if not bad.any():
        return None
    count, idx = _first(bad, expected.shape)
    reason = "infinity" if inf_bad[idx] else f"beyond tolerance {_tol_text(tol)}"
    return Difference(name, idx, _fmt(ev[idx]), _fmt(av[idx]), reason, count)


def _tol_text(tol: Tolerance) -> str:
    parts = [f"atol={tol.atol:g}", f"rtol={tol.rtol:g}"] if tol.atol or tol.rtol else []
    if tol.max_ulp is not None:
        parts.append(f"max_ulp={tol.max_ulp}")
    return " ".join(parts)


def compare_buffers(expected: dict[str, np.ndarray], actual: dict[str, np.ndarray],
                    policy: TolerancePolicy = TolerancePolicy(),
                    decoders: dict[str, Callable[[np.ndarray], np.ndarray]] | None = None) -> Difference | None:
    """First difference over every buffer (in the reference's order); a missing buffer differs.
    `decoders` maps buffers holding float bits in integer storage to their decoder."""
    decoders = decoders or {}
    for name, exp in expected.items():
        if name not in actual:
            return Difference(name, (), "a buffer", "missing", "buffer missing")
        diff = compare_buffer(name, np.asarray(exp), np.asarray(actual[name]), policy.for_buffer(name),
                              decoders.get(name))
        if diff is not None:
            return diff
    return None


# ---- against a suite reference ---------------------------------------------------------------

def _values(a: np.ndarray, dtype: str | None) -> np.ndarray:
    """Values for comparison: bfloat16 storage (uint16) is widened to float32."""
    if dtype == "bfloat16":
        return (np.asarray(a).astype(np.uint32) << 16).view(np.float32)
    return np.asarray(a)


def _reference_mismatch(a: np.ndarray, e: np.ndarray, tolerance: dict) -> np.ndarray | str:
    """Elements of `a` outside `tolerance` of the reference `e` (or why they cannot be compared)."""
    if tolerance.get("exact"):
        e = e.astype(a.dtype)
        if a.dtype.kind == "f":
            return (_bits(a) != _bits(e)) & ~(np.isnan(a) & np.isnan(e))
        return a != e
    if "max_ulp" in tolerance:
        if a.dtype.kind != "f":
            return f"max_ulp tolerance needs a float buffer, got {a.dtype}"
        e = e.astype(a.dtype)
        nan = np.isnan(a) | np.isnan(e)
        return np.where(nan, np.isnan(a) != np.isnan(e), ulp_distance(e, a) > tolerance["max_ulp"])
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    nan = np.isnan(a64) | np.isnan(e64)
    with np.errstate(invalid="ignore"):
        close = np.abs(a64 - e64) <= tolerance.get("atol", 0.0) + tolerance.get("rtol", 0.0) * np.abs(e64)
        close |= a64 == e64  # equal infinities
    return np.where(nan, np.isnan(a64) != np.isnan(e64), ~close)


def compare_to_reference(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray], tolerance: dict,
                         dtypes: dict[str, str] | None = None) -> tuple[bool, str]:
    """Compare every expected buffer; the message names the first mismatch (buffer, index, both
    values). `dtypes` names buffer dtypes whose storage differs from the value type (bfloat16 stored
    as uint16)."""
    dtypes = dtypes or {}
    for name, exp in expected.items():
        if name not in actual:
            return False, f"{name}: output buffer missing"
        act, exp = np.asarray(actual[name]), np.asarray(exp)
        if act.shape != exp.shape:
            return False, f"{name}: shape {list(act.shape)} != expected {list(exp.shape)}"
        a, e = _values(act, dtypes.get(name)), _values(exp, dtypes.get(name))
        bad = _reference_mismatch(a, e, tolerance)
        if isinstance(bad, str):
            return False, f"{name}: {bad}"
        if bad.any():
            count, idx = _first(bad, a.shape)
            return False, (f"{name}{list(idx)}: got {a[idx]!r}, expected {e[idx]!r} "
                           f"({count} of {bad.size} elements outside {tolerance})")
    return True, "ok"
