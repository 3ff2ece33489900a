"""The input sets verification runs every launch on: seeded random sets, then special-value sets
(zeros, ones, negatives, large, NaN/Inf, denormals, magnitudes) in every float buffer."""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .device.dtypes import DType
from .device.launch import LaunchSpec, make_inputs
from .errors import AsmEvoError

SPECIAL_SETS = ("zeros", "ones", "negatives", "large", "nan_inf", "denormals", "magnitudes")
# Mantissa bits of the float formats, for building subnormal bit patterns.
_MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52,
                  "float8_e4m3fnuz": 3, "float8_e5m2fnuz": 2, "float8_e4m3fn": 3}
_MAX_FINITE = {"float16": 65504.0, "bfloat16": 3.3895e38, "float32": 3.4028e38, "float64": 1.7976e308,
               "float8_e4m3fnuz": 240.0, "float8_e5m2fnuz": 57344.0, "float8_e4m3fn": 448.0}


def _magnitudes(dtype: DType, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` values of both signs, a quarter each: log-uniform over the whole normal range; log-uniform
    in [2^-12, 2^12]; 1 and the integers and half-integers up to 64, each exact or about an ulp off
    (rounding boundaries); within 1% of the exp/exp2/log range limits (ln and log2 of the largest
    finite, the smallest normal and the smallest subnormal value)."""
    emax = int(np.floor(np.log2(_MAX_FINITE[dtype.name])))
    mbits = _MANTISSA_BITS[dtype.name]
    kind = rng.integers(0, 4, n)
    wide = 2.0 ** rng.uniform(1 - emax, emax + 1, n)
    moderate = 2.0 ** rng.uniform(-12, 12, n)
    steps = np.where(rng.random(n) < 0.25, 1.0, rng.integers(0, 129, n) / 2.0)
    boundary = steps * (1 + rng.integers(-1, 2, n) * 2.0 ** -mbits)
    limits = np.array([emax + 1, 1 - emax, 1 - emax - mbits], float)
    edges = np.concatenate([limits, limits * np.log(2)])
    near = rng.choice(edges, n) * rng.uniform(0.99, 1.01, n)
    values = np.choose(kind, [wide, moderate, boundary, near])
    return np.minimum(values, _MAX_FINITE[dtype.name]) * rng.choice([-1.0, 1.0], n)


def _special(dtype: DType, name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` storage values of the special set `name` for a float dtype."""
    if name == "denormals":
        mbits, nbits = _MANTISSA_BITS[dtype.name], dtype.itemsize * 8
        mant = rng.integers(1, 1 << mbits, n, dtype=np.uint64)
        sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(nbits - 1)
        return (mant | sign).astype(f"u{dtype.itemsize}").view(dtype.storage)
    if name == "zeros":
        values = np.zeros(n)
    elif name == "ones":
        values = np.ones(n)
    elif name == "negatives":
        values = -rng.uniform(0.5, 4.0, n)
    elif name == "large":
        values = rng.choice([-1.0, 1.0], n) * _MAX_FINITE[dtype.name] * rng.uniform(0.01, 0.5, n)
    elif name == "nan_inf":
        values = rng.uniform(-1.0, 1.0, n)
        pick = rng.integers(0, 16, n)
        values[pick == 0] = np.nan
        values[pick == 1] = np.inf
        values[pick == 2] = -np.inf
    elif name == "magnitudes":
        values = _magnitudes(dtype, n, rng)
    else:
        raise AsmEvoError(f"unknown special-value set {name!r} (valid: {', '.join(SPECIAL_SETS)})")
    with np.errstate(over="ignore", invalid="ignore"):
        return dtype.encode(values)


def input_sets(spec: LaunchSpec, trials: int, special: bool = True) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """(label, inputs) for `trials` seeded random sets (seed = spec seed + trial) and, when
    `special`, one set per special-value kind: float buffers (outputs too, so unwritten elements
    show) get the special values, other buffers keep their spec initialisation."""
    for t in range(trials):
        yield f"trial {t} (seed {spec.seed + t})", make_inputs(spec, seed=spec.seed + t)
    if not special:
        return
    for k, name in enumerate(SPECIAL_SETS):
        rng = np.random.default_rng([spec.seed, 0x5EC1A1, k])
        base = make_inputs(spec)
        for buf_name, buf in spec.buffers.items():
            if buf.dtype.kind == "float":
                n = int(np.prod(buf.shape, dtype=np.int64))
                base[buf_name] = _special(buf.dtype, name, n, rng).reshape(buf.shape)
        yield f"special {name}", base
