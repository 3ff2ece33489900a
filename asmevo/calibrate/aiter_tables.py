"""The pinned amd-aiter wheel's real-GPU tuning tables, row by row, as launches of the shipped code objects.

Four tables time assembly kernels the wheel ships (`cu_num` 80 is MI308X and 304 MI300X, both gfx942;
256 is MI355X, gfx950):

- `aiter/configs/bf16_tuned_gemm.csv`, rows with `libtype` asm: `bf16gemm_outf32_tn_*`, column `us`;
- `aiter/configs/asm_a8w8_gemm.csv`: the int8 GEMM `gemm_a8w8_m128_{noSplitK,splitK}`, column `us`;
- `aiter/configs/tuned_fmoe.csv`, rows whose `kernelName1` is an asm kernel of `aiter_meta/hsa/<processor>/`
  (`fmoe_stage1_*` of a two-stage MoE, or a one-stage `fmoe_*`), column `us1` (that stage alone);
- `aiter/configs/a4w4_blockscale_tuned_gemm.csv` (MI355X), rows naming an asm `f4gemm_*` kernel (the others
  name CK kernels, which the wheel does not ship as code objects), column `us`.

`aiter_rows(gpu_name)` returns one `CalibrationRow` per such row measured on that GPU, with the code objects
of its processor: its shape, the measured time, its split (`HELDOUT`: never used to choose a constant) and a
launch spec (a mapping, the public format of asmevo/device/launch.py) of the exact code object at the
row's full shape, marked as a probe so the emulator runs a sample of its workgroups on sparse memory.
A row that cannot be launched keeps `launch` None and says why in `reason`; none is dropped.

asm_a8w8_gemm.csv has no `cu_num` column; its rows are MI308X (cu_num 80) measurements:
- No code in this wheel reads the table (its host, asm_gemm_a8w8.cu `gemm_a8w8_asm`, picks among the
  `i8gemm/I8gemm_*` kernels by a CU-count heuristic and aiter/ops/gemm_op_a8w8.py reads
  a8w8_bpreshuffle_tuned_gemm.csv). The table was written for the previous host (ROCm/aiter at
  3c5bf0092eff: aiter/ops/gemm_op_a8w8.py `get_ASMGEMM_config`, keyed by (M, N, K, bias, outdtype), ->
  csrc/py_itfs_cu/asm_gemm_a8w8.cu `gemm_a8w8_asm(..., splitK)` launching
  `gemm_a8w8_m128_{noSplitK,splitK}.co`, both still shipped, with grid ((N / 128) << ks, cdiv(M, 128))).
  That revision's table holds the same times for 21 of the wheel's 34 rows (OLD_A8W8 below).
- Its times fit 80 CUs and not 304. The tuner split 128x1280x8192 into 10 << 3 = 80 workgroups, one per
  MI308X CU (13.85 us). Scaling M to 16384 multiplies the workgroups by 128: 128 waves of 80 would take
  about 128 x 13.85 = 1773 us, and 1483.54 us is measured; 304 CUs would run 34 waves (about 470 us).
  Likewise 16384x8192x1024 (8192 workgroups) takes 1095 us against 12.6 us for one wave of 64: 102 waves
  of 80 CUs (about 1290 us), not 27 of 304 (about 340 us).
- The wheel's `splitK` column no longer matches the times (128x1280x8192 says 0: 10 workgroups of a
  128x128x8192 tile in 13.85 us would need 2.3x the per-CU int8 peak, 2614.9 TOPS / 304 CUs in AMD's
  MI300X data sheet): rows keep the wheel's value in `shape` and launch with the split of the revision
  that measured them.
- Thirteen rows repeat a time the measuring revision has for other shapes: ten N=1536, K=5120 rows read
  1483.54 us (16384x1280x8192's), 192x1280x1024 and 192x1536x1024 read 13.90 us (192x1280x8192's and
  192x5120x1280's), and 192x5120x1280 now reads 12.70 us (192x8192x1024's; that revision measured it at
  13.90 us). Copies, not measurements: they carry a `note` and no launch.
"""
from __future__ import annotations

import csv
import functools
import zipfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from . import aiter_launches as L
from ..codeobj import CodeObject
from ..device.emu import EmuDevice
from ..device.launch import LaunchSpec
from ..device.probe import ProbeRun, run_probe
from ..emu.program import program_for
from ..errors import AsmEvoError
from ..suites import load_suite
from ..target import gpu
from .aiter_wheel import CACHE, EXTRACT, code_object, extract, fetch_wheel, host_file
from .fmoe_findings import FINDINGS as ONE_STAGE_FINDINGS
from .moe_routing import route

TABLES = {"bf16": "aiter/configs/bf16_tuned_gemm.csv", "a8w8": "aiter/configs/asm_a8w8_gemm.csv",
          "fmoe": "aiter/configs/tuned_fmoe.csv", "a4w4": "aiter/configs/a4w4_blockscale_tuned_gemm.csv"}
# The held-out rows of each GPU's calibration (issues 16 and 21): (table, shape, kernel) -> held out.
HELDOUT: dict[str, Callable[[str, dict, str], bool]] = {
    "mi308x": lambda table, shape, kernel: table == "tuned_fmoe.csv" and "doweight" in kernel,
    "mi355x": lambda table, shape, kernel: table == "a4w4_blockscale_tuned_gemm.csv" and shape["M"] % 3 == 0,
}
# fp8 element type of each processor's fp8 kernels: CDNA3's FNUZ E4M3; CDNA4's is OCP E4M3 (no launch dtype
# yet, so raw bytes: the calibration only times these launches)
FP8_OF = {"gfx942": L.FP8, "gfx950": "uint8"}
# The tables' cu_num of each GPU they hold rows of (MI325X has MI300X's 304 CUs: its rows cannot be told apart).
CU_NUM = {"mi308x": 80, "mi300x": 304, "mi355x": 256}
A8W8_CU_NUM = 80  # see the module docstring
ROUTING_SEED = 0
# (M, N, K) -> (splitK, us) of asm_a8w8_gemm.csv at ROCm/aiter 3c5bf0092eff5960cd4b13a6564be7341cbdebe4,
# the revision whose host (`gemm_a8w8_asm`, grid (N / 128) << splitK) consumed it.
OLD_A8W8 = {(128, 1280, 8192): (3, 13.85), (192, 128, 5120): (8, 18.90), (192, 1280, 8192): (3, 13.90),
            (192, 1536, 5120): (6, 15.90), (192, 5120, 1280): (2, 13.90), (256, 1280, 8192): (3, 25.54),
            (320, 1280, 8192): (3, 25.56), (512, 1280, 8192): (3, 48.06), (1024, 1280, 8192): (3, 94.45),
            (2048, 1280, 8192): (3, 186.90), (4096, 1280, 8192): (3, 371.85), (8192, 1280, 8192): (3, 742.90),
            (16384, 1280, 8192): (3, 1483.54), (128, 8192, 1024): (0, 12.6), (192, 8192, 1024): (0, 12.70),
            (256, 8192, 1024): (0, 23.80), (320, 8192, 1024): (0, 23.82), (512, 8192, 1024): (0, 44.61),
            (1024, 8192, 1024): (0, 76.33), (2048, 8192, 1024): (0, 140.05), (4096, 8192, 1024): (0, 277.80),
            (8192, 8192, 1024): (0, 552.69), (16384, 8192, 1024): (0, 1095.12)}


# Stage-1 objects whose dense small-shape run differs from the MoE reference (tests/calibrate, slow): columns
# 192-223 of every 256-wide tile come out wrong, alongside an lds_race finding no other stage-1 object triggers.
# The kernel races: waves 2-3 run their own copy of the K loop, whose last half issues a prefetch of x by LDS DMA
# (buffer_load_dword ... lds at 0x5b98-0x5bf0, into the second x buffer) that nothing retires (no s_waitcnt vmcnt
# before the epilogue's s_barrier), while waves 0-1's epilogue stages their output in that LDS (ds_write_b64 at
# 0x4834 ...) and reads it back after the barrier. An LDS DMA writes LDS when its load returns, known only through
# the issuing wave's vmcnt (LLVM SIInsertWaitcnts: LDS DMA is a VMEM access that stores to LDS, tracked by
# vmcnt), so hardware gets the reference's values only because the DMA lands first; the emulator runs waves 0-1
# (the lower addresses) through their epilogue before waves 2-3 issue it.
STAGE1_MISMATCH = ("fmoe_stage1_bf16_pertokenFp8_g1u1_32x256_2tg_pf2.co",
                   "fmoe_stage1_bf16_pertokenFp8_doweight_g1u1_32x256_2tg_pf2.co")
STAGE1_MISMATCH_NOTE = ("on the emulator this object's output differs from the reference in columns 192-223 of each "
                        "256-wide tile: the kernel races (an unretired final-iteration LDS-DMA prefetch by waves 2-3 "
                        "lands on the LDS waves 0-1 stage their output in; lds_race), and the emulator's schedule "
                        "lets it land last; control flow does not depend on those values")
# One-stage objects with an `aiter` suite problem (whose known_findings apply to their rows; the gfx950 build is
# the gfx942 text but for the fp8 maximum, asmevo/calibrate/fmoe_findings.py). The others' known findings are
# fmoe_findings.FINDINGS.
ONE_STAGE_PROBLEMS = {"fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_32x256.co": "fmoe_1stage_fp8"}
# Objects whose outputs depend on wave timing (a race the emulator reports): their rows are not run.
RACY = {"fmoe_bf16_blockscaleFp8_g1u1_vs_silu_1tg_ps_32x256.co":
        "the kernel races (lds_race): each wave group exchanges its per-128-block amax through LDS at byte 18688 twice "
        "in a row (ds_write_b64 at 0x523c and 0x5458 for waves 0-1, 0x84f4 and 0x8710 for waves 2-3) with no "
        "s_barrier between reading the first and writing the second, so its outputs depend on wave timing"}


@dataclass
class CalibrationRow:
    """One measured row: `launch` is a probe launch-spec mapping of `code_object` at the row's shape (None
    when no launch reproduces the measurement); `reason` says why the row cannot run on the emulator yet
    (no launch, or an instruction the emulator lacks); `note` flags doubtful data."""

    table: str
    kernel: str
    shape: dict
    measured_us: float
    split: str
    cu_num: int
    code_object: Path | None
    launch: dict | None
    reason: str | None = None
    note: str | None = None
    family: str = ""
    problem: str | None = None  # the suite problem of this family (its known_findings apply)
    suite: str = "aiter"  # the suite `problem` is in
    output: str = ""  # the launch's output buffer
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["code_object"] = str(self.code_object) if self.code_object else None
        return d


@functools.lru_cache(maxsize=None)
def kernel_objects(processor: str = "gfx942") -> dict[str, tuple[Path, dict]]:
    """Every asm kernel the wheel's kernel lists for `processor` name: symbol -> (code object, its list row).
    The lists are the csv files beside the code objects (columns knl_name and co_name or knl_file)."""
    extract(processor=processor)
    out = {}
    for lst in _kernel_lists(processor):
        with open(lst, newline="") as fh:
            for row in csv.DictReader(fh):
                co = row.get("co_name") or row.get("knl_file")
                if row.get("knl_name") and co:
                    out[row["knl_name"]] = (lst.parent / co, row)
    return out


def _kernel_lists(processor: str) -> list[Path]:
    """The wheel's kernel list csvs for `processor`, extracted beside the code objects."""
    prefix = f"aiter_meta/hsa/{processor}/"
    with zipfile.ZipFile(fetch_wheel()) as zf:
        names = [n for n in zf.namelist() if n.startswith(prefix) and n.endswith(".csv")]
        for n in names:
            dest = EXTRACT / n
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(zf.read(n))
    return sorted(EXTRACT / n for n in names)


@functools.lru_cache(maxsize=None)
def unsupported_instructions(path: Path) -> tuple[str, ...]:
    """Mnemonics (with their first address) of `path`'s instructions the emulator does not implement."""
    program = program_for(CodeObject.from_path(path))
    seen: dict[str, int] = {}
    for addr, op in sorted(program.ops.items()):
        if getattr(op.fn, "__name__", "") == "fail":  # compile_instruction's stand-in for an unsupported one
            seen.setdefault(op.ins.mnemonic, addr)
    return tuple(f"{m} at 0x{a:x}" for m, a in seen.items())


def _unsupported_reason(path: Path) -> str | None:
    try:
        missing = unsupported_instructions(path)
    except AsmEvoError as exc:  # e.g. a processor the emulator does not run
        return str(exc)
    return f"the emulator does not implement {', '.join(missing)}" if missing else None


def read_table(name: str) -> list[dict]:
    with open(host_file(TABLES[name]), newline="") as fh:
        return [{k: v.strip() for k, v in row.items()} for row in csv.DictReader(fh)]


def _spec(kernel: str, built, probe: int) -> dict:
    grid, block, struct = built
    return {"kernel": kernel, "grid": grid, "block": block, "dynamic_lds": 0, "seed": 0, "args": [struct],
            "probe": {"workgroups": probe}}


def bf16_rows(cu_num: int, processor: str, probe: int) -> list[CalibrationRow]:
    """bf16_tuned_gemm.csv rows of `cu_num` with libtype asm (launch: aiter_launches.bf16gemm)."""
    objects = kernel_objects(processor)
    rows = []
    for r in read_table("bf16"):
        if int(r["cu_num"]) != cu_num or r["libtype"] != "asm":
            continue
        m, n, k, splitk = int(r["M"]), int(r["N"]), int(r["K"]), int(r["splitK"])
        shape = {"M": m, "N": n, "K": k, "splitK": splitk}
        co, info = objects[r["kernelName"]]
        launch = _spec(r["kernelName"], L.bf16gemm(m, n, k, max(splitk, 1), int(info["tileM"])), probe)
        rows.append(CalibrationRow("bf16_tuned_gemm.csv", r["kernelName"], shape, float(r["us"]), "fit", cu_num,
                                   co, launch, _unsupported_reason(co), family="bf16gemm_outf32_tn",
                                   problem="bf16gemm", output="D"))
    return rows


def a8w8_rows(cu_num: int, probe: int) -> list[CalibrationRow]:
    """asm_a8w8_gemm.csv rows (all MI308X, module docstring); launch: aiter_launches.a8w8_m128."""
    if cu_num != A8W8_CU_NUM:
        return []
    table = read_table("a8w8")
    by_time: dict[float, list[str]] = {}
    for (m, n, k), (_, us) in OLD_A8W8.items():
        by_time.setdefault(us, []).append(f"{m}x{n}x{k}")
    rows = []
    for r in table:
        m, n, k, splitk, us = int(r["M"]), int(r["N"]), int(r["K"]), int(r["splitK"]), float(r["us"])
        shape = {"M": m, "N": n, "K": k, "splitK": splitk, "bias": r["bias"] == "True"}
        old = OLD_A8W8.get((m, n, k))
        note = reason = launch = None
        ks = splitk
        if old is not None and old[1] == us:
            ks = old[0]
            if ks != splitk:
                note = (f"launched with splitK {ks}, the value measured with (ROCm/aiter 3c5bf0092eff); "
                        f"the wheel says {splitk}")
        elif us in by_time:
            note = f"invalid: the time is that of {' and '.join(by_time[us])} in the measuring revision, copied"
            reason = "no measured configuration: the time is a copy of another shape's (note)"
        else:
            reason = f"no measured configuration: the measuring revision has no time {us} us for this shape"
        co = code_object("gemm_a8w8_m128_splitK.co" if ks > 0 else "gemm_a8w8_m128_noSplitK.co")
        if reason is None:
            launch = _spec("gemm_kernel_func", L.a8w8_m128(m, n, k, ks, scale_init="ones"), probe)
        rows.append(CalibrationRow("asm_a8w8_gemm.csv", "gemm_kernel_func", shape, us, "fit", cu_num, co, launch,
                                   reason or _unsupported_reason(co), note, family="gemm_a8w8_m128",
                                   problem="a8w8_gemm", output="C", extra={"launch_splitK": ks}))
    return rows


def routing_files(tokens: int, experts: int, topk: int, block: int, seed: int = ROUTING_SEED) -> dict[str, str]:
    """`file:` inits of the tuner-style routing (asmevo.calibrate.moe_routing.route) for one shape, written
    once as .npy files under benchmarks/.cache/aiter/routing/."""
    d = CACHE / "routing" / f"t{tokens}_e{experts}_k{topk}_b{block}_s{seed}"
    names = ("sorted_token_ids", "sorted_weights", "sorted_expert_ids", "num_valid_ids")
    if not all((d / f"{n}.npy").exists() for n in names):
        r = route(tokens, experts, topk, block, seed)
        d.mkdir(parents=True, exist_ok=True)
        for n in names:
            tmp = d / f"{n}.tmp.npy"
            np.save(tmp, getattr(r, n))
            tmp.replace(d / f"{n}.npy")
    return {n: f"file:{d / n}.npy" for n in names}


def valid_blocks(routing: dict[str, str], block: int) -> int:
    """Blocks of sorted_expert_ids holding routed tokens (num_valid_ids[0] / block): the grid rows that do
    work; the others exit early."""
    return int(np.load(routing["num_valid_ids"][len("file:"):])[0]) // block


def fmoe_rows(cu_num: int, processor: str, probe: int) -> list[CalibrationRow]:
    """tuned_fmoe.csv rows of `cu_num` whose kernelName1 is an asm kernel shipped for `processor`."""
    objects = kernel_objects(processor)
    rows = []
    for r in read_table("fmoe"):
        name = r["kernelName1"]
        if int(r["cu_num"]) != cu_num or name not in objects:
            continue
        co, info = objects[name]
        t, dim, inter, e, topk = (int(r[c]) for c in ("token", "model_dim", "inter_dim", "expert", "topk"))
        block_m, ksplit = int(r["block_m"]), int(r["ksplit"])
        act = r["act_type"].split(".")[-1].lower()
        shape = {"token": t, "model_dim": dim, "inter_dim": inter, "expert": e, "topk": topk, "act_type": act,
                 "q_dtype_a": r["q_dtype_a"].split(".")[-1], "q_type": r["q_type"].split(".")[-1],
                 "doweight_stage1": int(r["doweight_stage1"]), "block_m": block_m, "ksplit": ksplit,
                 "run_1stage": int(r["run_1stage"])}
        routing = routing_files(t, e, topk, block_m)
        extra = {"valid_blocks": valid_blocks(routing, block_m)}
        if "fmoe_stage1_" in name:
            family, problem = "fmoe_stage1_g1u1", "fmoe_stage1_fp8"
            qdtype = FP8_OF[processor] if "Fp8" in name else "int8"
            built = L.fmoe_stage1(t, dim, inter, e, topk, int(info["tile_m"]), int(info["tile_n"]), routing,
                                  qdtype=qdtype, doweight="doweight" in name, activation=act, ksplit=ksplit,
                                  scale_init="ones")
        else:
            family, problem = "fmoe_g1u1_1stage", ONE_STAGE_PROBLEMS.get(co.name)
            persistent = int(info["tg_num_perCU"]) * cu_num if info["ps"] == "1" else 0
            built = L.fmoe_g1u1(t, dim, inter, e, topk, block_m, int(info["subGU_n"]), routing,
                                persistent_tgs=persistent, blockscale="blockscale" in name, scale_init="ones")
            extra["persistent_workgroups"] = persistent
        note = STAGE1_MISMATCH_NOTE if co.name in STAGE1_MISMATCH else None
        rows.append(CalibrationRow("tuned_fmoe.csv", name, shape, float(r["us1"]), "fit", cu_num, co,
                                   _spec(name, built, probe), _unsupported_reason(co) or RACY.get(co.name), note,
                                   family=family, problem=problem, output="out", extra=extra))
    return rows


def known_findings(row: CalibrationRow) -> dict[str, str]:
    """The strictness findings the row's shipped code is known to trigger: its suite problem's, else those
    fmoe_findings records for its code object."""
    if row.problem:
        return load_suite(row.suite).problem(row.problem).known_findings
    return ONE_STAGE_FINDINGS.get(row.code_object.name, {}) if row.code_object else {}


def run_row(row: CalibrationRow, device: EmuDevice | None = None, seed: int = 0) -> ProbeRun:
    """K0 of a runnable row on a sample of its workgroups (`launch["probe"]`) on sparse memory."""
    if row.launch is None or row.reason:
        raise AsmEvoError(f"{row.table} {row.kernel} {row.shape}: not runnable ({row.reason})")
    return run_probe(device or EmuDevice(checked=True), Path(row.code_object).read_bytes(),
                     LaunchSpec.from_dict(row.launch), seed)


def unexpected_findings(row: CalibrationRow, run: ProbeRun) -> list[dict]:
    """Findings of `run` whose kind the row's suite problem does not list in known_findings."""
    known = known_findings(row)
    return [f for f in run.findings if f["kind"] not in known]


def written_elements(run: ProbeRun, buffer: str) -> int:
    """Nonzero elements of `buffer` (zero-initialised) on the pages the probe touched: 0 means the sampled
    workgroups stored nothing (they exited early, or the launch is wrong)."""
    buf, spec = run.buffers[buffer], run.spec.buffers[buffer]
    data = b"".join(run.memory.read(buf.address + lo, hi - lo) for lo, hi in run.memory.touched(buf))
    return int(np.count_nonzero(np.frombuffer(data, spec.dtype.storage)))


def a4w4_rows(cu_num: int, processor: str, probe: int) -> list[CalibrationRow]:
    """a4w4_blockscale_tuned_gemm.csv rows of `cu_num` whose kernelName is an asm f4gemm kernel shipped for
    `processor` (launch: aiter_launches.f4gemm)."""
    objects = kernel_objects(processor)
    rows = []
    for r in read_table("a4w4"):
        if int(r["cu_num"]) != cu_num or r["kernelName"] not in objects:
            continue
        m, n, k, splitk = int(r["M"]), int(r["N"]), int(r["K"]), int(r["splitK"])
        co, info = objects[r["kernelName"]]
        reason = _unsupported_reason(co)
        if splitk:
            reason = f"splitK {splitk}: the K-split launch (output zeroed first, gdz from K) is not built"
        launch = _spec(r["kernelName"], L.f4gemm(m, n, k, int(info["tile_m"]), int(info["tile_n"])), probe)
        rows.append(CalibrationRow("a4w4_blockscale_tuned_gemm.csv", r["kernelName"],
                                   {"M": m, "N": n, "K": k, "splitK": splitk}, float(r["us"]), "fit", cu_num, co,
                                   launch, reason, family="f4gemm_bf16_per1x32Fp4", problem="f4gemm",
                                   suite="aiter_gfx950", output="D"))
    return rows


def aiter_rows(gpu_name: str, probe: int = 8) -> list[CalibrationRow]:
    """Every relevant row of the four tables measured on `gpu_name` (one of CU_NUM), with the code objects of
    its processor, in table order, split by HELDOUT; launches run `probe` workgroups on the emulator."""
    if gpu_name not in CU_NUM:
        raise AsmEvoError(f"no amd-aiter tuning rows for {gpu_name} (tables have: {', '.join(CU_NUM)})")
    cu_num, processor = CU_NUM[gpu_name], gpu(gpu_name).processor.name
    rows = (bf16_rows(cu_num, processor, probe) + a8w8_rows(cu_num, probe) + fmoe_rows(cu_num, processor, probe)
            + a4w4_rows(cu_num, processor, probe))
    held = HELDOUT.get(gpu_name, lambda table, shape, kernel: False)
    return [replace(r, split="heldout" if held(r.table, r.shape, r.kernel) else "fit") for r in rows]
