"""GPUs as data: the machine numbers the timing model needs, one record per product, each cited.

`--gpu NAME` on every command that times picks one. Every field's source is in `SOURCES` (and in
docs/cycle_model.md); a number that is an assumption says so there.
"""
from __future__ import annotations

from dataclasses import dataclass

from .processors import Processor, UnsupportedTarget, processor


@dataclass(frozen=True)
class GPU:
    """One GPU product.

    Compute: `cus` compute units in `xcds` dies, `simds_per_cu` SIMD16 units, `clock_hz` the engine clock
    sustained under load (what the model's cycles run at), `peak_clock_hz` the data sheet's;
    `max_waves_per_simd` wave slots, `max_workgroups_per_cu` (barrier resources), the VGPR
    file per SIMD lane (`vgprs_per_lane`, allocated in `vgpr_alloc_granule`), SGPRs per SIMD
    (`sgprs_per_simd`, granule `sgpr_alloc_granule`), LDS per CU (`lds_bytes_per_cu`, granule).
    Memory: HBM peak and achievable (STREAM-like) bandwidth, L2 per XCD, Infinity Cache (MALL).
    `launch_us`: the fixed cost of a kernel launch (dispatch and completion signalling) in the GPU's
    measured times."""

    name: str
    processor: Processor
    cus: int
    xcds: int
    clock_hz: float
    hbm_peak_bytes_per_s: float
    hbm_bytes_per_s: float
    l2_bytes_per_xcd: int
    mall_bytes: int
    peak_clock_hz: float = 2.1e9
    simds_per_cu: int = 4
    max_waves_per_simd: int = 8
    max_workgroups_per_cu: int = 16
    vgprs_per_lane: int = 512
    vgpr_alloc_granule: int = 8
    sgprs_per_simd: int = 800
    sgpr_alloc_granule: int = 16
    lds_bytes_per_cu: int = 65536
    lds_alloc_granule: int = 512
    launch_us: float = 6.0  # CDNA3's, fitted with the sustained clock (SOURCES["clock"])

    def require(self, processor_name: str) -> None:
        """UnsupportedTarget unless code for `processor_name` runs on this GPU."""
        if processor_name != self.processor.name:
            raise UnsupportedTarget(f"GPU {self.name} runs {self.processor.name} code; the code object targets "
                                    f"{processor_name}")

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / self.clock_hz * 1e6

    def us_to_cycles(self, us: float) -> float:
        return us * 1e-6 * self.clock_hz


_GFX942, _GFX950 = processor("gfx942"), processor("gfx950")
SUSTAINED_CLOCK_HZ = 1.4e9  # fitted on the fit split of MI308X's amd-aiter rows (benchmarks/calibration)
# MI355X: sustained clock, achievable HBM and launch cost fitted on its own fit rows (SOURCES["mi355x"]), as
# fractions of its data-sheet peaks from benchmarks/calibration/fit_model.py's grid.
MI355X_PEAK_CLOCK_HZ, MI355X_HBM_PEAK = 2.4e9, 8.0e12
MI355X_CLOCK_HZ = 1.2 / 2.1 * MI355X_PEAK_CLOCK_HZ
MI355X_HBM = 4.2 / 5.3 * MI355X_HBM_PEAK
GPUS: dict[str, GPU] = {g.name: g for g in (
    GPU("mi300x", _GFX942, cus=304, xcds=8, clock_hz=SUSTAINED_CLOCK_HZ, hbm_peak_bytes_per_s=5.3e12,
        hbm_bytes_per_s=4.2e12, l2_bytes_per_xcd=4 << 20, mall_bytes=256 << 20),
    GPU("mi308x", _GFX942, cus=80, xcds=4, clock_hz=SUSTAINED_CLOCK_HZ, hbm_peak_bytes_per_s=5.3e12,
        hbm_bytes_per_s=3.2e12, l2_bytes_per_xcd=4 << 20, mall_bytes=256 << 20),
    GPU("mi325x", _GFX942, cus=304, xcds=8, clock_hz=SUSTAINED_CLOCK_HZ, hbm_peak_bytes_per_s=6.0e12,
        hbm_bytes_per_s=4.8e12, l2_bytes_per_xcd=4 << 20, mall_bytes=256 << 20),
    GPU("mi355x", _GFX950, cus=256, xcds=8, clock_hz=MI355X_CLOCK_HZ, peak_clock_hz=MI355X_PEAK_CLOCK_HZ,
        hbm_peak_bytes_per_s=MI355X_HBM_PEAK, hbm_bytes_per_s=MI355X_HBM, l2_bytes_per_xcd=4 << 20,
        mall_bytes=256 << 20, lds_bytes_per_cu=160 * 1024, launch_us=4.0),
)}
DEFAULT_GPU = "mi300x"

SOURCES = {
    "mi300x": "AMD CDNA3 white paper and MI300X data sheet: 304 CUs in 8 XCDs of 38, 4 SIMD16 per CU, 2100 MHz "
              "peak engine clock, 8 HBM3 stacks 5.3 TB/s peak, 4 MB L2 per XCD, 256 MB Infinity Cache (also "
              "Chips and Cheese 'Testing AMD's Giant MI300X', 2024). Achievable HBM: STREAM on MI300X measures "
              "4.09-4.26 TB/s (samuel-bohman/AI-benchmarking-guide, Azure ND MI300X v5 results): 4.2 TB/s.",
    "mi308x": "80 CUs (the amd-aiter tuning tables' cu_num 80) in 4 XCDs of 20 (ROCm/rocMLIR PR #2151: gfx942 with "
              "80 CUs has 4 chiplets; PR #2197: 20 CUs per CPX partition). Peak clock, HBM3 (8 stacks) and caches: "
              "taken equal to MI300X's (same package; no AMD data sheet in the stored corpus: an assumption). "
              "Achievable HBM 3.2 TB/s: fitted on the fit split of the amd-aiter rows (no public STREAM figure; "
              "with 4 of 8 XCDs fewer requests are in flight).",
    "clock": "Sustained engine clock under load 1.4 GHz and launch cost 6 us: fitted on the fit split of MI308X's "
             "amd-aiter rows (all 90 that run; benchmarks/calibration/fit_model-mi308x.txt; lowest median error, then "
             "lowest p90; the data sheets give the 2.1 GHz peak only, and "
             "sustained clocks under load are lower, review #1; AMD's community thread 'HSA kernel dispatch "
             "latencies' gives 3.5-7 us, the order of magnitude). MI300X and MI325X take the same values (same CDNA3 "
             "silicon and software: an assumption; no measured rows for them).",
    "mi325x": "AMD MI325X data sheet: 304 CUs, 2100 MHz, HBM3E 6.0 TB/s peak, 256 MB Infinity Cache; achievable "
              "HBM scaled from MI300X's measured 79% of peak (an assumption).",
    "mi355x": "CDNA4 (gfx950). 256 CUs in 8 XCDs of 32 (ServeTheHome 'AMD MI350 and CDNA 4 Architecture Launched', "
              "2025; ISSCC 2026 talk as reported by Tom's Hardware 'Inside the Instinct MI355X'); 2.4 GHz peak engine "
              "clock (AMD at Hot Chips 2025, Wccftech's report: MI355X 2.4 GHz, MI350X 2.2 GHz); 288 GB HBM3E in 8 "
              "stacks at 8 TB/s peak (AMD MI355X data sheet figure, aiwiki 'AMD Instinct MI355X'); 4 MB L2 per XCD "
              "and 256 MB Infinity Cache (TechPowerUp 'AMD Instinct MI350X Series AI GPU Silicon Detailed', 2025); "
              "160 KiB LDS per CU (CDNA4 ISA guide; LLVM's gfx950 LDS limit 163840 bytes, test "
              "lds-limit-diagnostics-gfx950.ll). Sustained clock 1.37 GHz (0.57 of peak), achievable HBM 6.34 TB/s "
              "(0.79 of peak) and launch cost 4 us: fitted on 80 fit rows of the MI355X amd-aiter tables (27 spread "
              "evenly over each kernel family's fit rows, all of the smallest; "
              "benchmarks/calibration/fit_model-mi355x-per_family27.txt; lowest median error, then lowest p90; the "
              "clock at the grid's lowest point, the HBM fraction at its highest, MI300X's STREAM fraction, within "
              "AMD's 3.5-7 us launch range). Wave "
              "slots, register files and allocation granules are CDNA3's: the CDNA4 ISA guide describes the same "
              "512-entry unified VGPR/AGPR file and SGPR file (an assumption for the slot and workgroup limits).",
    "waves": "8 wave slots per SIMD, 512 VGPRs per lane (unified arch+acc file, granule 8), 800 SGPRs per SIMD "
             "(granule 16), 64 KiB LDS per CU (granule 512 B), 16 workgroups per CU: ROCm Compute Profiler "
             "'Pipeline descriptions' and LLVM AMDGPU (GCNSubtarget occupancy) for gfx90a/gfx942.",
}


def gpus_of(processor_name: str) -> list[GPU]:
    """The GPU records running `processor_name` code, in `GPUS` order (the first is its flagship)."""
    return [g for g in GPUS.values() if g.processor.name == processor_name]


def gpu(name: str) -> GPU:
    """The GPU record `name` (case-insensitive); UnsupportedTarget lists the known ones."""
    try:
        return GPUS[name.lower()]
    except KeyError:
        raise UnsupportedTarget(f"unknown GPU {name!r} (known: {', '.join(GPUS)})") from None
