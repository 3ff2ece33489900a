"""GPU records: every product cited, MI355X's published numbers, and the processor each one runs."""
from pathlib import Path

import pytest

from asmevo.target import GPUS, UnsupportedTarget, gpu, processor
from asmevo.target.gpus import SOURCES


def test_every_gpu_has_its_sources():
    assert set(GPUS) <= set(SOURCES)


def test_mi355x_is_cdna4_with_its_published_numbers():
    g = gpu("MI355X")
    assert g.processor is processor("gfx950") and g.processor.family == "CDNA4"
    assert (g.cus, g.xcds, g.cus // g.xcds) == (256, 8, 32)
    assert (g.peak_clock_hz, g.hbm_peak_bytes_per_s) == (2.4e9, 8.0e12)
    assert g.lds_bytes_per_cu == processor("gfx950").lds_bytes == 160 * 1024
    assert (g.l2_bytes_per_xcd, g.mall_bytes) == (4 << 20, 256 << 20)


@pytest.mark.parametrize("name, record", [("mi308x", "fit_model-mi308x.txt"),
                                          ("mi355x", "fit_model-mi355x-per_family27.txt")])
def test_fitted_constants_are_the_fit_records_best_point(name, record):
    """Sustained clock, achievable HBM and launch cost are the grid point of the committed fit record with
    the lowest median error (then p90) on the GPU's fit rows."""
    path = Path(__file__).parents[2] / "benchmarks/calibration" / record
    points = [f for f in map(str.split, path.read_text().splitlines()) if len(f) == 7 and f[3] == "->"]
    best = min(points, key=lambda f: (float(f[5]), float(f[6])))
    g = gpu(name)
    assert (round(g.clock_hz / 1e9, 2), round(g.hbm_bytes_per_s / 1e12, 2), g.launch_us) == \
        (float(best[0]), float(best[1]), float(best[2]))


def test_a_gpu_runs_its_own_processor_only():
    gpu("mi355x").require("gfx950")
    gpu("mi300x").require("gfx942")
    with pytest.raises(UnsupportedTarget, match="GPU mi300x runs gfx942 code; the code object targets gfx950"):
        gpu("mi300x").require("gfx950")
