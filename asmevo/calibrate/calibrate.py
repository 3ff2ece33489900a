"""`asmevo calibrate aiter`: the timing model against the real-GPU times in the amd-aiter tuning tables.

Every row of `aiter_tables.aiter_rows` for the GPU's CU count is modelled at its full shape (a traced
sample of its workgroups, `asmevo.model`) and compared with the measured microseconds. A row that
cannot run keeps `predicted_us` None and its `reason`. Traces do not depend on the model's constants,
so they are cached (by code object, launch and sampler) and re-costing every row with other
`Latencies` is cheap; only `fit` rows may be used to choose a constant, never `heldout` ones.
"""
from __future__ import annotations

import hashlib
import json
import math
import pickle
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .. import emu
from ..codeobj import CodeObject
from ..device.launch import LaunchSpec
from ..errors import AsmEvoError
from ..model import DEFAULT_LATENCIES, Estimate, Latencies, TracedLaunch, estimate, trace_sample
from ..model import sample as sampler
from ..target import gpu
from .aiter_tables import CalibrationRow, aiter_rows, known_findings
from .aiter_wheel import CACHE

TRACES = CACHE / "calibration-traces"


def _code_version() -> str:
    """The emulator's and the sampler's source: a trace is stale when either changes."""
    files = sorted(Path(emu.__file__).parent.glob("*.py")) + [Path(sampler.__file__)]
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()


def _trace_key(row: CalibrationRow, data: bytes) -> str:
    payload = {"code": hashlib.sha256(data).hexdigest(), "launch": row.launch, "version": _code_version()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def traced(row: CalibrationRow) -> TracedLaunch:
    """The row's traced sample (cached on disk by content)."""
    data = Path(row.code_object).read_bytes()
    path = TRACES / f"{_trace_key(row, data)}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    co = CodeObject(data, str(row.code_object))
    spec = LaunchSpec.from_dict({k: v for k, v in row.launch.items() if k != "probe"})
    run = trace_sample(co, spec, spec.seed, known_findings=known_findings(row))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(run))
    tmp.replace(path)
    return run


def estimate_row(row: CalibrationRow, gpu_name: str, latencies: Latencies = DEFAULT_LATENCIES) -> Estimate:
    """The model's estimate of a runnable row (AsmEvoError when its trace cannot be made)."""
    co = CodeObject.from_path(row.code_object)
    kernel = LaunchSpec.from_dict(row.launch).kernel
    return estimate(co.kernel_instructions(kernel), co.kernel(kernel), traced(row), gpu(gpu_name), latencies)


def predict_row(row: CalibrationRow, gpu_name: str, latencies: Latencies = DEFAULT_LATENCIES) -> dict:
    """The row's JSON object: table, kernel, shape, measured_us, predicted_us (None with a `reason` when
    it cannot run), split, and the model's bound and sampling error."""
    out = {"table": row.table, "kernel": row.kernel, "shape": row.shape, "measured_us": row.measured_us,
           "predicted_us": None, "split": row.split}
    if row.launch is None or row.reason:
        return {**out, "reason": row.reason or row.note or "no launch"}
    try:
        est = estimate_row(row, gpu_name, latencies)
    except AsmEvoError as exc:
        return {**out, "reason": str(exc)}
    return {**out, "predicted_us": est.predicted_us, "bound": est.bound, "sampled_workgroups": est.sampled_workgroups,
            "sampling_error": est.sampling_error, **({"note": row.note} if row.note else {})}


def select_rows(rows: list[CalibrationRow], split: str | None = None, sample: int | None = None) -> list[CalibrationRow]:
    """The rows of `split` (all when None), thinned to `sample` rows spread evenly over the tables' order
    (every k-th; deterministic) when there are more."""
    if sample is not None and sample < 1:
        raise AsmEvoError(f"--sample must be at least 1, got {sample}")
    rows = [r for r in rows if split is None or r.split == split]
    if sample is None or sample >= len(rows):
        return rows
    return [rows[i * len(rows) // sample] for i in range(sample)]


def select_per_family(rows: list[CalibrationRow], split: str, per_family: int) -> list[CalibrationRow]:
    """`select_rows` applied to each kernel family of `split` on its own: `per_family` rows spread evenly over
    each family (all of a smaller family), so no family outweighs another by its table's length."""
    families = dict.fromkeys(r.family for r in rows if r.split == split)
    return [r for f in families for r in select_rows([r for r in rows if r.family == f], split, per_family)]


def calibrate_aiter(gpu_name: str, latencies: Latencies = DEFAULT_LATENCIES,
                    progress: Callable[[str], None] = lambda s: None, split: str | None = None,
                    sample: int | None = None) -> list[dict]:
    """The AITer rows measured on `gpu_name` (those `select_rows` keeps), modelled (see `predict_row`)."""
    out = []
    rows = select_rows(aiter_rows(gpu_name), split, sample)
    for n, row in enumerate(rows, 1):
        out.append(predict_row(row, gpu_name, latencies))
        progress(f"[{n}/{len(rows)}] {row.table} {row.kernel} {row.shape}: measured {row.measured_us} us, "
                 f"predicted {out[-1]['predicted_us']}")
    return out


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation: Pearson's correlation of the ranks (ties share their mean rank)."""
    ra, rb = pd.Series(a).rank().to_numpy(), pd.Series(b).rank().to_numpy()
    return float(np.corrcoef(ra, rb)[0, 1])


def summary(results: list[dict]) -> pd.DataFrame:
    """Per split: rows, rows predicted, Spearman rank correlation, median and 90th percentile of
    |predicted / measured - 1| in percent."""
    table = []
    for split in sorted({r["split"] for r in results}):
        rows = [r for r in results if r["split"] == split]
        done = [r for r in rows if r["predicted_us"] is not None]
        pred = np.array([r["predicted_us"] for r in done])
        meas = np.array([r["measured_us"] for r in done])
        err = np.abs(pred / meas - 1) if len(done) else np.array([math.nan])
        rho = spearman(pred, meas) if len(done) > 1 else math.nan
        table.append({"split": split, "rows": len(rows), "predicted": len(done), "spearman": round(rho, 4),
                      "median_abs_err_%": round(100 * float(np.median(err)), 1),
                      "p90_abs_err_%": round(100 * float(np.percentile(err, 90)), 1)})
    return pd.DataFrame(table)
