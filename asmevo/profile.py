"""Profiles: where a kernel's modelled cycles go, as ranked hot windows an agent can edit.

The timing model (`asmevo.model`) traces the launch (a sample of a large one's workgroups) and costs
every instruction over the whole launch; issue and stall cycles are summed over windows (loop
bodies and basic blocks, as address ranges) and ranked by their share of the kernel's cycles. Each window names its dominant reason and, given a recovery
directory, the line range of the recovered `.s` that holds it (recovery.json maps addresses to
lines).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .codeobj import CodeObject
from .device.launch import LaunchSpec
from .errors import AsmEvoError
from .isa.cfg import build_cfg
from .isa.instruction import Instruction
from .model import Estimate, ModelError, model_spec
from .target import DEFAULT_GPU, gpu


class ProfileError(AsmEvoError):
    """The launch cannot be profiled (it has strictness findings, or the recovery map is unusable)."""


# Issue cycles by instruction class, and stall cycles by cause, grouped into reasons.
_ISSUE_REASON = {"valu": "VALU bound", "trans": "VALU bound (transcendental)", "sleep": "scalar and control overhead",
                 "mfma": "MFMA bound", "salu": "scalar and control overhead", "branch": "scalar and control overhead",
                 "waitcnt": "scalar and control overhead", "nop": "scalar and control overhead",
                 "barrier": "barrier synchronisation", "vmem_load": "memory instruction issue",
                 "vmem_store": "memory instruction issue", "smem": "memory instruction issue",
                 "lds": "LDS instruction issue"}
_STALL_REASON = {"waitcnt vmem_load": "memory-latency bound (vmcnt waits)",
                 "waitcnt vmem_store": "memory-latency bound (vmcnt waits)",
                 "waitcnt smem": "scalar-load latency (lgkmcnt waits)", "waitcnt lds": "LDS latency (lgkmcnt waits)",
                 "dependency": "dependency stalls", "matrix core busy": "MFMA bound",
                 "no VALU co-execution": "MFMA bound (FP32/FP64 MFMAs hold the VALU)",
                 "taken branch": "scalar and control overhead"}


@dataclass
class HotWindow:
    """A hot address range [start, end): `kind` loop or block; `share` of the kernel's cycles;
    `count` executions of its first instruction (summed over waves); `lines` in the recovered `.s`."""

    kind: str
    start: int
    end: int
    cycles: float
    share: float
    count: int
    reason: str
    breakdown: dict[str, float]
    lines: tuple[int, int] | None = None

    def describe(self) -> str:
        lines = f" lines {self.lines[0]}-{self.lines[1]}" if self.lines else ""
        return (f"{self.kind} 0x{self.start:x}-0x{self.end:x}{lines}: {100 * self.share:.1f}% of cycles, "
                f"{self.reason}")


@dataclass
class Profile:
    """A kernel's modelled cost per instruction and its hot windows, best first."""

    kernel: str
    estimate: Estimate
    instructions: list[Instruction]
    windows: list[HotWindow]
    line_of: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        total = _total(self.estimate)
        return {"kernel": self.kernel, "estimate": self.estimate.to_json(),
                "windows": [asdict(w) for w in self.windows],
                "instructions": [{"address": i.address, "line": self.line_of.get(i.address),
                                  "count": self.estimate.per_pc[i.address].count,
                                  "share": self.estimate.per_pc[i.address].cycles / total,
                                  "stall_cause": self.estimate.per_pc[i.address].cause, "text": i.text()}
                                 for i in self.instructions]}

    def listing(self) -> str:
        """An annotated listing: the summary, the windows, then address, count, share, instruction."""
        e = self.estimate
        total = _total(e)
        out = [f"kernel {self.kernel}: {e.predicted_us:.3f} model_us on {e.gpu} ({e.model_cycles:.0f} cycles, bound: "
               f"{e.bound}; {e.sampled_workgroups} of {e.workgroups} workgroups sampled); occupancy "
               f"{e.occupancy.waves_per_simd:g} waves/SIMD (limited by {e.occupancy.limiter}, "
               f"{e.occupancy.vgprs} VGPRs)", "hot windows:"]
        out += [f"  #{n + 1} {w.describe()}" for n, w in enumerate(self.windows)]
        starts = {w.start: n + 1 for n, w in reversed(list(enumerate(self.windows)))}
        out.append(f"{'address':>10} {'line':>5} {'count':>9} {'share':>6}  instruction")
        for ins in self.instructions:
            pc = e.per_pc[ins.address]
            mark = f"   <- window #{starts[ins.address]}" if ins.address in starts else ""
            stall = f"   [stall {pc.stall / max(pc.count, 1):.0f}: {pc.cause}]" if pc.stall else ""
            line = self.line_of.get(ins.address, "")
            out.append(f"0x{ins.address:08x} {line:>5} {pc.count:>9} {100 * pc.cycles / total:5.1f}%  "
                       f"{ins.text()}{stall}{mark}")
        return "\n".join(out)


def _total(e: Estimate) -> float:
    return sum(p.cycles for p in e.per_pc.values()) or 1.0


def load_line_map(recovery_dir: str | Path) -> dict[int, int]:
    """Instruction address -> source line of the recovered `.s`, from recovery.json."""
    path = Path(recovery_dir) / "recovery.json"
    try:
        info = json.loads(path.read_text())
        return {int(addr): int(line) for addr, line, _size in info["instructions"] if line}
    except FileNotFoundError:
        raise ProfileError(f"{path}: no such file (run `asmevo recover` first)") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ProfileError(f"{path}: no usable instruction map ({type(exc).__name__})") from None


def _breakdown(instructions: list[Instruction], e: Estimate) -> dict[str, float]:
    out: dict[str, float] = {}
    for ins in instructions:
        pc = e.per_pc[ins.address]
        issue = pc.cycles - pc.stall
        if issue:
            key = _ISSUE_REASON[pc.cls]
            out[key] = out.get(key, 0.0) + issue
        if pc.stall:
            key = _STALL_REASON[pc.cause]
            out[key] = out.get(key, 0.0) + pc.stall
    return out


def hot_windows(instructions: list[Instruction], e: Estimate, line_of: dict[int, int] | None = None,
                *, top: int = 8, min_share: float = 0.01) -> list[HotWindow]:
    """Loop bodies and basic blocks ranked by their share of cycles (a block that spans the same
    range as a loop is reported once, as the loop)."""
    cfg = build_cfg(instructions)
    total = _total(e)
    ranges: dict[tuple[int, int], str] = {}
    for loop in cfg.loops():
        lo = min(cfg.blocks[b].start for b in loop.blocks)
        hi = max(cfg.blocks[b].end for b in loop.blocks)
        ranges[(lo, hi)] = "loop"
    for b in cfg.blocks:
        ranges.setdefault((b.start, b.end), "block")
    windows = []
    for (lo, hi), kind in ranges.items():
        body = instructions[lo:hi]
        cycles = sum(e.per_pc[i.address].cycles for i in body)
        if cycles / total < min_share:
            continue
        breakdown = _breakdown(body, e)
        last = body[-1]
        lines = None
        if line_of:
            found = [line_of[i.address] for i in body if i.address in line_of]
            lines = (min(found), max(found)) if found else None
        windows.append(HotWindow(kind, body[0].address, last.address + max(last.size, 4), cycles, cycles / total,
                              e.per_pc[body[0].address].count, max(breakdown, key=lambda k: breakdown[k]),
                              breakdown, lines))
    windows.sort(key=lambda w: (-w.cycles, w.kind != "loop", w.start))
    return windows[:top]


def profile_launch(code_object: CodeObject, spec: LaunchSpec, *, gpu_name: str = DEFAULT_GPU,
                   recovery_dir: str | Path | None = None, top: int = 8,
                   known_findings: frozenset[str] = frozenset()) -> Profile:
    """Model `spec` on the emulator and profile it (findings of `known_findings` kinds, which the
    unmodified kernel is known to trigger, do not stop it)."""
    try:
        est = model_spec(code_object, spec, gpu(gpu_name), known_findings=known_findings)
    except ModelError as exc:
        raise ProfileError(f"not profiled: {exc}") from None
    instructions = code_object.kernel_instructions(spec.kernel)
    line_of = load_line_map(recovery_dir) if recovery_dir else {}
    return Profile(spec.kernel, est, instructions, hot_windows(instructions, est, line_of, top=top), line_of)
