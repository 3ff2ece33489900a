"""The gates every candidate passes, in order: precheck (window, directives, labels, per-line
assembly) -> rebuild (full reassembly with resource rescan; ABI refusals) -> ABI comparison ->
static checks (resources, hazards, waitcnt: `static_checks.static_differences`) on the rebuilt binary
-> differential verification against K0 on every verify launch (on hardware: the emulator first,
then an isolated confirmation on the GPU) -> correctness-gated timing on the timing launch (the
problem's bench shape) in the device's unit (`model_us` from the timing model on the emulator, `ms`
on hardware) -> the gate's decision. Profiles always come from the emulator. Every candidate,
accepted or not, lands in the lineage; nothing here raises for a bad edit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..abi import abi_differences
from ..codeobj import CodeObject
from ..device import Device, get_device
from ..device.hip_timing import TimingCrashed, measure
from ..errors import AbiChange, AsmEvoError, RebuildError
from ..launches import VerifyLaunch, largest
from ..model import Estimate
from ..profile import Profile, hot_windows, profile_launch
from ..rebuild import rebuild_source, shrinks
from ..recover import recover
from ..static_checks import static_differences
from ..target import DEFAULT_GPU
from ..timing import Timing, _gate, decide, model_candidate, model_timing, time_candidate
from ..verify import Verdict, sha256, verify
from .body import Body
from .edit import Edit, Rejection, Window, apply_edit, precheck, unified_diff
from .lineage import Candidate, Lineage
from .source import KernelSource

@dataclass
class Baseline:
    """K0: its recovered source, recovery info, its profile on the timing launch (the timing model,
    on the emulator) and its timing there in the device's unit."""

    source: str
    info: dict
    profile: Profile
    timing: Timing

    @property
    def cycles(self) -> float:
        """K0's time on the timing launch, in the lineage's unit."""
        return self.timing.median


class Evaluator:
    """Runs edits through the gates for one kernel and records every candidate in `lineage`."""

    def __init__(self, k0_path: str | Path, launches: list[VerifyLaunch], *, heldout: list[VerifyLaunch] = (),
                 timing: VerifyLaunch | None = None, device: Device | None = None, trials: int = 3,
                 kernel: str | None = None, gpu_name: str = DEFAULT_GPU, eps: float | None = None):
        """`timing` is the launch candidates are timed on (the bench shape; default: the largest verify
        launch). `eps` is the speedup a candidate must beat to count as better (default 0 on the
        deterministic emulator, 1% on hardware)."""
        if not launches:
            raise AsmEvoError("optimisation needs at least one verify launch that is not a probe")
        self.k0 = CodeObject.from_path(k0_path)
        self.launches = list(launches)
        self.heldout = list(heldout)
        self.timing = timing or largest(self.launches)
        self.device = device or get_device("emu")
        self.gpu_name = gpu_name
        self.eps = (0.0 if self.device.sandboxed else 0.01) if eps is None else eps
        self.trials = trials
        self.kernel = kernel or launches[0].spec.kernel
        if self.kernel not in self.k0.kernel_names:
            raise AsmEvoError(f"kernel {self.kernel} is not in {k0_path} (has {', '.join(self.k0.kernel_names)})")
        rec = recover(k0_path)
        self.name = rec.name
        self.xnack = self.k0.target.xnack != "off"
        profile = self._profile(self.k0)
        self.baseline = Baseline(rec.source, rec.info, profile, self._k0_timing(profile))
        self.k0_source = KernelSource(rec.source, self.kernel)
        self.lineage = Lineage(self.kernel, sha256(self.k0.data), self.baseline.timing.unit)
        self.lineage.add(Candidate(0, None, "k0", 0, "baseline", "the input kernel", status="baseline",
                                   cycles=self.baseline.cycles, speedup=1.0, sha256=self.lineage.k0_sha256,
                                   timing={**self.baseline.timing.to_json(), "launch": self.timing.label},
                                   source=rec.source, data=self.k0.data))
        self._seen: dict[str, int] = {rec.source: 0}

    @property
    def best(self) -> Candidate:
        return self.lineage.best_candidate

    @property
    def kernarg_sgpr(self) -> int | None:
        """First SGPR of the kernarg segment pointer in K0's dispatch, if it has one."""
        layout = self.k0.kernel(self.kernel).descriptor.user_sgpr_layout()
        return next((first for name, first, _ in layout if name == "enable_sgpr_kernarg_segment_ptr"), None)

    def body_of(self, cid: int) -> Body:
        """Candidate `cid`'s kernel body, ready for the rewrite operators."""
        kernel = self.k0.kernel(self.kernel)
        preload = bool(kernel.descriptor.fields["kernarg_preload_spec_length"])
        buffers = frozenset(a[".offset"] for a in kernel.metadata.get(".args", [])
                            if a.get(".value_kind") == "global_buffer")
        return Body.of(self.source_of(cid), self.xnack, self.kernarg_sgpr, preload, buffers)

    def source_of(self, cid: int) -> KernelSource:
        return KernelSource(self.lineage.get(cid).source, self.kernel)

    def seen(self, parent_source: str, edit: Edit) -> bool:
        """Whether applying `edit` to `parent_source` gives a source already evaluated."""
        lines = apply_edit(parent_source.splitlines(), edit)
        return "\n".join(lines) + "\n" in self._seen

    def evaluate(self, parent: int, edit: Edit, window: Window, *, agent: str, step: int) -> Candidate:
        """Run `edit` of candidate `parent` through every gate; the record is added to the lineage."""
        cand = self.build(parent, edit, window, agent=agent, step=step)
        if cand.status == "built":
            self.verify_candidate(cand.id)
        if cand.status == "equivalent":
            self.time_candidate(cand.id)
        return cand

    def build(self, parent: int, edit: Edit, window: Window, *, agent: str, step: int) -> Candidate:
        """Apply `edit` to candidate `parent` and pass the static gates (status `built` or `rejected`)."""
        start = time.perf_counter()
        par = self.lineage.get(parent)
        cand = Candidate(self.lineage.next_id(), parent, agent, step, edit.operator, edit.note, edit.to_json())
        self.lineage.add(cand)
        rejection = None
        try:
            src = KernelSource(par.source, self.kernel)
            rejection = precheck(src, edit, window, self.k0.target)
            if rejection is None:
                cand.source = "\n".join(apply_edit(src.lines, edit)) + "\n"
                cand.diff = unified_diff(par.source, cand.source, self.name)
                rejection = self._static_gates(cand)
        except AsmEvoError as exc:
            rejection = Rejection("error", str(exc))
        self._finish(cand, rejection, start, "built")
        return cand

    def verify_candidate(self, cid: int) -> Candidate:
        """Differential verification of a built candidate on every verify launch."""
        cand = self.lineage.get(cid)
        if cand.status != "built":
            raise AsmEvoError(f"candidate #{cid} is {cand.status}; only built candidates are verified")
        start = time.perf_counter()
        rejection = None
        try:
            verdict = verify(self.k0, self._code(cand), self.launches, trials=self.trials, device=self.device,
                             static=False)
            cand.verdict = verdict.to_json()
            if not verdict.equivalent:
                rejection = Rejection(verdict.kind, verdict.reason)
        except AsmEvoError as exc:
            rejection = Rejection("error", str(exc))
        self._finish(cand, rejection, start, "equivalent")
        return cand

    def _profile(self, co: CodeObject) -> Profile:
        return profile_launch(co, self.timing.spec, gpu_name=self.gpu_name, known_findings=self.timing.known_findings)

    def _k0_timing(self, profile: Profile) -> Timing:
        """K0's timing on the timing launch: the model's (from its profile) on the emulator, a measurement
        on hardware."""
        if self.device.sandboxed:
            return model_timing(self.k0, self.timing, profile.estimate)
        run = measure([self.k0.data], self.timing.spec, device_id=getattr(self.device, "device_id", None))
        return Timing("ms", tuple(run["samples"][0]), {"device": "hip", "launch": self.timing.label})

    def time_candidate(self, cid: int) -> Candidate:
        """Correctness-gated timing of an equivalent candidate on the timing launch; the gate's decision
        (`asmevo.timing.decide`) says whether it beats K0 (a crash or hang on hardware rejects it)."""
        cand = self.lineage.get(cid)
        if cand.status != "equivalent":
            raise AsmEvoError(f"candidate #{cid} is {cand.status}; only equivalent candidates are timed")
        start = time.perf_counter()
        k1 = self._code(cand)
        verdict = Verdict(**cand.verdict)
        try:
            if self.device.sandboxed:
                _gate(verdict, self.k0, k1)
                t1, est = model_candidate(self.k0, k1, self.timing, self.baseline.profile.estimate,
                                          largest(self.launches), self.gpu_name)
                decision = decide(self.baseline.timing, t1, eps=self.eps)
                cand.profile = est
            else:
                decision = time_candidate(verdict, self.k0, k1, self.timing, self.device, eps=self.eps)
        except TimingCrashed as exc:
            self._finish(cand, Rejection("crashed", str(exc)), start, "verified")
            return cand
        except AsmEvoError as exc:
            self._finish(cand, Rejection("error", str(exc)), start, "verified")
            return cand
        cand.cycles = decision.candidate.median
        cand.speedup = decision.speedup
        cand.timing = {**decision.to_json(), "launch": self.timing.label}
        self._finish(cand, None, start, "verified")
        if decision.accepted and cand.cycles < self.best.cycles:
            self.lineage.best = cand.id
        return cand

    def _finish(self, cand: Candidate, rejection: Rejection | None, start: float, status: str) -> None:
        cand.seconds += time.perf_counter() - start
        if rejection is None:
            cand.status = status
        else:
            cand.status, cand.reason, cand.detail = "rejected", rejection.reason, rejection.detail

    def _code(self, cand: Candidate) -> CodeObject:
        return CodeObject(cand.data, f"candidate-{cand.id}.co")

    def _static_gates(self, cand: Candidate) -> Rejection | None:
        if cand.source in self._seen:
            return Rejection("no-op", f"same source as candidate #{self._seen[cand.source]}")
        self._seen[cand.source] = cand.id
        try:
            data = rebuild_source(cand.source, self.baseline.info, shrink=shrinks(cand.source, self.baseline.info),
                                  origin=f"candidate {cand.id}").data
        except AbiChange as exc:
            return Rejection("abi", str(exc))
        except RebuildError as exc:
            return Rejection("assemble", str(exc))
        cand.data, cand.sha256 = data, sha256(data)
        k1 = self._code(cand)
        abi = abi_differences(self.k0, k1)
        if abi:
            return Rejection("abi", abi[0])
        new = static_differences(self.k0, k1)
        if new:
            return Rejection("static", new[0])
        return None

    def profile(self, cid: int) -> Profile:
        """The profile of a verified candidate on the timing launch (from the emulator)."""
        cand = self.lineage.get(cid)
        if not cand.verified:
            raise AsmEvoError(f"candidate #{cid} is not verified; only verified candidates are profiled")
        if cid == 0:
            return self.baseline.profile
        k1 = self._code(cand)
        if isinstance(cand.profile, Estimate):
            ins = k1.kernel_instructions(self.kernel)
            return Profile(self.kernel, cand.profile, ins, hot_windows(ins, cand.profile))
        return self._profile(k1)

    def confirm_heldout(self) -> Candidate:
        """Re-verify the best candidate on verify + held-out launches; on failure fall back to the next
        best verified candidate (K0 last). Records every attempt in the lineage; returns the winner."""
        ranked = sorted((c for c in self.lineage.candidates if c.status == "verified" and c.accepted),
                        key=lambda c: (c.cycles, c.id))
        launches = self.launches + self.heldout
        attempts = []
        self.lineage.best = 0
        for cand in ranked:
            verdict = verify(self.k0, self._code(cand), launches,
                             trials=self.trials, device=self.device)
            attempts.append({"candidate": cand.id, **verdict.to_json()})
            if verdict.equivalent:
                self.lineage.best = cand.id
                break
            cand.status, cand.reason, cand.detail = "rejected", "heldout-" + verdict.kind, verdict.reason
        self.lineage.heldout = {"launches": [vl.label for vl in launches], "accepted": self.lineage.best,
                                "attempts": attempts}
        return self.best
