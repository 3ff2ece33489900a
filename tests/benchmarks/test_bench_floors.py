"""benchmarks/agents/bench_floors.py: the floor no edit that keeps the memory accesses can beat counts
the LDS term and the cache-line terms, the latter cut only as far as merging narrow accesses can cut them."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from asmevo.codeobj import CodeObject
from asmevo.model import estimate
from asmevo.target import gpu

from modeltools import program, traced

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.agents.bench_floors import fewest_lines, floor_cycles  # noqa: E402

MI300X = gpu("mi300x")
KERNEL = CodeObject.from_path(ROOT / "benchmarks" / "kernelbench" / "19_ReLU" / "kernel.co").kernels[0]
WORKGROUPS = 65536


def gather(load: str, lds_reads: int = 0):
    """Every wave of the grid runs one `load` touching 16 cache lines of a 64 KiB buffer (the HBM term
    is tiny: the buffer is read again and again), then `lds_reads` 16-byte LDS reads."""
    dst = "v4" if load == "dword" else "v[4:7]"
    lds = "ds_read_b128 v[8:11], v0\ns_waitcnt lgkmcnt(0)\n" * lds_reads
    ins = program(f"v_lshlrev_b32_e32 v0, 4, v0\nglobal_load_{load} {dst}, v[0:1], off\ns_waitcnt vmcnt(0)\n"
                  f"{lds}s_endpgm")
    waves = WORKGROUPS * 4
    run = traced(ins, [[0]], (WORKGROUPS, 1, 1), memory={ins[1].address: (1024, 16, {0: 1024})},
                 buffers=(65536,), weight=waves)
    return ins, estimate(ins, KERNEL, run, MI300X)


def test_a_dwordx4_gathers_lines_no_merge_can_remove():
    ins, est = gather("dwordx4")
    assert fewest_lines(est, ins) == 1.0
    floor, by = floor_cycles(est, ins)
    lines = max(est.terms["vmem_path"], est.terms["l2_bandwidth"])
    assert lines > est.terms["hbm_bandwidth"]
    assert floor == pytest.approx(lines + est.overhead_cycles)
    assert by in ("vmem", "l2")


def test_a_dword_load_may_merge_with_three_others_so_its_lines_count_a_quarter():
    ins, est = gather("dword")
    assert fewest_lines(est, ins) == 0.25
    floor, _ = floor_cycles(est, ins)
    lines = max(est.terms["vmem_path"], est.terms["l2_bandwidth"])
    assert floor == pytest.approx(max(lines / 4, est.terms["hbm_bandwidth"]) + est.overhead_cycles)


def test_lds_traffic_is_a_floor():
    ins, est = gather("dwordx4", lds_reads=64)
    floor, by = floor_cycles(est, ins)
    assert est.terms["lds"] > max(est.terms["vmem_path"], est.terms["l2_bandwidth"])
    assert (by, floor) == ("lds", pytest.approx(est.terms["lds"] + est.overhead_cycles))
