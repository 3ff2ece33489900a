"""GPU records: every product cited, MI355X's published numbers, and the processor each one runs."""
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
    # the uncalibrated assumptions: CDNA3's sustained/peak clock and achievable/peak HBM ratios
    assert g.clock_hz / g.peak_clock_hz == pytest.approx(gpu("mi300x").clock_hz / gpu("mi300x").peak_clock_hz)
    assert g.hbm_bytes_per_s / g.hbm_peak_bytes_per_s == pytest.approx(
        gpu("mi300x").hbm_bytes_per_s / gpu("mi300x").hbm_peak_bytes_per_s)


def test_a_gpu_runs_its_own_processor_only():
    gpu("mi355x").require("gfx950")
    gpu("mi300x").require("gfx942")
    with pytest.raises(UnsupportedTarget, match="GPU mi300x runs gfx942 code; the code object targets gfx950"):
        gpu("mi300x").require("gfx950")
