"""The gates every candidate passes, in order: precheck (window, directives, labels, per-line
assembly) -> rebuild (full reassembly with resource rescan; ABI refusals) -> ABI comparison ->
static checks (resources, hazards, waitcnt: `static_checks.static_differences`) on the rebuilt binary
-> differential verification against K0 on every verify launch (on hardware: the emulator first,
then an isolated confirmation on the GPU) -> correctness-gated timing on the timing launch (the
problem's bench shape) in the device's unit (`model_us` from the timing model on the emulator, `ms`
on hardware) -> the gate's decision. Profiles always come from the emulator. Every candidate,
accepted or not, lands in the lineage; nothing here raises for a bad edit. The gates after the
precheck run as one content-addressed outcome per candidate (`outcome.evaluate`), computed here or
taken from a cache by the `Evaluations` the Evaluator is given.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..codeobj import CodeObject
from ..device import Device
from ..errors import AsmEvoError
from ..isa.resources import hardware_sgprs
from ..launches import VerifyLaunch
from ..model import Estimate
from ..profile import Profile, hot_windows, profile_launch
from ..target import DEFAULT_GPU
from ..timing import Timing
from ..verify import sha256, verify
from .body import Body, FloatMode
from .edit import Edit, Rejection, Window, apply_edit, precheck, unified_diff
from .lineage import Candidate, Lineage
from .ops_alloc import release_vgpr_padding
from .outcome import Evaluations, K0Outcome, LocalEvaluations, Outcome, make_setup
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
    """Runs edits through the gates for one kernel and records every candidate in `lineage`.

    The lineage-dependent checks (precheck, no-op against every source seen) run here; the rest of a
    candidate's gates and K0's baseline come from `evaluations` (`outcome.Evaluations`; default
    `LocalEvaluations`: computed in this process; a flow passes a cached task per call)."""

    def __init__(self, k0_path: str | Path, launches: list[VerifyLaunch], *, heldout: list[VerifyLaunch] = (),
                 timing: VerifyLaunch | None = None, device: Device | None = None, trials: int = 3,
                 kernel: str | None = None, gpu_name: str = DEFAULT_GPU, eps: float | None = None,
                 evaluations: Evaluations | None = None):
        """`timing` is the launch candidates are timed on (the bench shape; default: the largest verify
        launch). `eps` is the speedup a candidate must beat to count as better (default 0 on the
        deterministic emulator, 1% on hardware)."""
        self.setup = make_setup(CodeObject.from_path(k0_path), list(launches), name=Path(k0_path).stem,
                                timing=timing, device=device, gpu_name=gpu_name, trials=trials, kernel=kernel, eps=eps)
        s = self.setup
        self.k0, self.kernel, self.launches, self.timing = s.k0, s.kernel, list(s.launches), s.timing
        self.device, self.gpu_name, self.eps, self.trials = s.device, s.gpu_name, s.eps, s.trials
        self.heldout = list(heldout)
        self.evaluations = evaluations or LocalEvaluations(self.setup)
        k0 = K0Outcome.from_json(self.evaluations.baseline())
        self.name = k0.name
        self.xnack = self.k0.target.xnack != "off"
        self.processor = self.k0.target.processor  # the ISA every body analysis of this kernel reads
        ins = self.k0.kernel_instructions(self.kernel)
        profile = Profile(self.kernel, k0.estimate, ins, hot_windows(ins, k0.estimate))
        self.baseline = Baseline(k0.source, k0.info, profile, k0.timing)
        self.k0_source = KernelSource(k0.source, self.kernel)
        self.lineage = Lineage(self.kernel, sha256(self.k0.data), self.baseline.timing.unit)
        self.lineage.add(Candidate(0, None, "k0", 0, "baseline", "the input kernel", status="baseline",
                                   cycles=self.baseline.cycles, speedup=1.0, sha256=self.lineage.k0_sha256,
                                   timing={**self.baseline.timing.to_json(), "launch": self.timing.label},
                                   source=k0.source, data=self.k0.data))
        self._seen: dict[str, int] = {k0.source: 0}
        self._outcomes: dict[int, Outcome] = {}
        self.on_candidate: Callable[[Candidate], None] | None = None  # told of every evaluated candidate

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
        mode = FloatMode(bool(kernel.descriptor.fields["enable_ieee_mode"]), kernel.descriptor.fields["float_denorm_mode_32"])
        return Body.of(self.source_of(cid), self.xnack, self.kernarg_sgpr, preload, buffers, self.processor, mode,
                       hardware_sgprs(kernel.descriptor))

    def source_of(self, cid: int) -> KernelSource:
        return KernelSource(self.lineage.get(cid).source, self.kernel)

    def seen(self, parent_source: str, edit: Edit) -> bool:
        """Whether applying `edit` to `parent_source` gives a source already evaluated."""
        lines = apply_edit(parent_source.splitlines(), edit)
        return "\n".join(lines) + "\n" in self._seen

    def evaluate(self, parent: int, edit: Edit, window: Window, *, agent: str, step: int) -> Candidate:
        """Run `edit` of candidate `parent` through every gate; the record is added to the lineage."""
        return self._through(self._propose(parent, edit, window, agent, step, "timed"))

    def build(self, parent: int, edit: Edit, window: Window, *, agent: str, step: int) -> Candidate:
        """Apply `edit` to candidate `parent` and pass the static gates (status `built` or `rejected`)."""
        return self._propose(parent, edit, window, agent, step, "built")

    def release_padding(self, parent: int, *, agent: str, step: int, through: str = "timed") -> Candidate | None:
        """Candidate `parent` declaring only the VGPRs its code needs, through the gates up to `through`
        ("built" or "timed"), when its declaration is padded past a level that caps its waves per SIMD
        (`ops_alloc`); None otherwise. The edit changes the kernel's `.amdhsa_next_free_vgpr` directive,
        which instruction edits may not."""
        src = KernelSource(self.lineage.get(parent).source, self.kernel)
        edit = release_vgpr_padding(src, self.k0.kernel(self.kernel).descriptor, self.processor)
        if edit is None or self.seen(src.text, edit):
            return None
        cand = self._propose(parent, edit, None, agent, step, through)
        return self._through(cand) if through == "timed" else cand

    def _through(self, cand: Candidate) -> Candidate:
        """A proposed candidate verified and timed as far as its gates let it go."""
        if cand.status == "built":
            self.verify_candidate(cand.id)
        if cand.status == "equivalent":
            self.time_candidate(cand.id)
        if self.on_candidate is not None:
            self.on_candidate(cand)
        return cand

    def _propose(self, parent: int, edit: Edit, window: Window | None, agent: str, step: int,
                 through: str) -> Candidate:
        """A new candidate from `edit` of `parent`: the lineage's checks here (`precheck` in `window`;
        no window for the allocation edit, made by `ops_alloc` itself), then the outcome's static gates
        (the outcome, evaluated `through` that depth, is kept for the later gates)."""
        start = time.perf_counter()
        par = self.lineage.get(parent)
        cand = Candidate(self.lineage.next_id(), parent, agent, step, edit.operator, edit.note, edit.to_json())
        self.lineage.add(cand)
        rejection = None
        try:
            src = KernelSource(par.source, self.kernel)
            rejection = precheck(src, edit, window, self.k0.target) if window is not None else None
            if rejection is None:
                cand.source = "\n".join(apply_edit(src.lines, edit)) + "\n"
                cand.diff = unified_diff(par.source, cand.source, self.name)
                if cand.source in self._seen:
                    rejection = Rejection("no-op", f"same source as candidate #{self._seen[cand.source]}")
                else:
                    self._seen[cand.source] = cand.id
        except AsmEvoError as exc:
            rejection = Rejection("error", str(exc))
        if rejection is not None:
            self._finish(cand, rejection, start, "built")
            return cand
        out = self._outcome(cand, through)
        rec = out.record
        cand.data, cand.sha256 = out.data, rec["sha256"]
        self._finish(cand, self._rejection(rec, "build"), start, "built")
        return cand

    def _outcome(self, cand: Candidate, through: str) -> Outcome:
        """Candidate `cand`'s outcome evaluated at least `through` that depth (asked for once per depth)."""
        out = self._outcomes.get(cand.id)
        if out is None or (through == "timed" and out.record["status"] == "built"):
            out = self.evaluations.candidate(cand.source, through, f"{self.kernel} #{cand.id} {cand.operator}")
            self._outcomes[cand.id] = out
            cand.cached = cand.cached or out.cached
        return out

    @staticmethod
    def _rejection(record: dict, *gates: str) -> Rejection | None:
        """The record's rejection if one of `gates` made it."""
        if record["rejected_at"] in gates:
            return Rejection(record["reason"], record["detail"])
        return None

    def verify_candidate(self, cid: int) -> Candidate:
        """Differential verification of a built candidate on every verify launch."""
        cand = self.lineage.get(cid)
        if cand.status != "built":
            raise AsmEvoError(f"candidate #{cid} is {cand.status}; only built candidates are verified")
        start = time.perf_counter()
        rec = self._outcome(cand, "timed").record
        cand.verdict = rec["verdict"]
        self._finish(cand, self._rejection(rec, "build", "verify"), start, "equivalent")
        return cand

    def time_candidate(self, cid: int) -> Candidate:
        """Correctness-gated timing of an equivalent candidate on the timing launch; the gate's decision
        (`asmevo.timing.decide`) says whether it beats K0 (a crash or hang on hardware rejects it)."""
        cand = self.lineage.get(cid)
        if cand.status != "equivalent":
            raise AsmEvoError(f"candidate #{cid} is {cand.status}; only equivalent candidates are timed")
        start = time.perf_counter()
        rec = self._outcome(cand, "timed").record
        rejection = self._rejection(rec, "time")
        if rejection is None:
            cand.timing = rec["timing"]
            cand.cycles = cand.timing["candidate"]["median"]
            cand.speedup = cand.timing["speedup"]
            cand.profile = Estimate.from_dict(rec["estimate"]) if rec["estimate"] else None
        self._finish(cand, rejection, start, "verified")
        if cand.status == "verified" and cand.accepted and cand.cycles < self.best.cycles:
            self.lineage.best = cand.id
        return cand

    def _finish(self, cand: Candidate, rejection: Rejection | None, start: float, status: str) -> None:
        cand.seconds += time.perf_counter() - start
        if rejection is None:
            cand.status = status
        else:
            cand.status, cand.reason, cand.detail = "rejected", rejection.reason, rejection.detail

    def _profile(self, co: CodeObject) -> Profile:
        return profile_launch(co, self.timing.spec, gpu_name=self.gpu_name, known_findings=self.timing.known_findings)

    def _code(self, cand: Candidate) -> CodeObject:
        return CodeObject(cand.data, f"candidate-{cand.id}.co")

    def profile(self, cid: int) -> Profile:
        """The profile of a verified candidate on the timing launch: its stored estimate's (which keeps
        the cache lines per execution the search counts), else traced afresh on the emulator."""
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
            verdict = verify(self.k0, self._code(cand), launches, trials=self.trials, device=self.device,
                             reference=self.setup.reference)
            attempts.append({"candidate": cand.id, **verdict.to_json()})
            if verdict.equivalent:
                self.lineage.best = cand.id
                break
            cand.status, cand.reason, cand.detail = "rejected", "heldout-" + verdict.kind, verdict.reason
        self.lineage.heldout = {"launches": [vl.label for vl in launches], "accepted": self.lineage.best,
                                "attempts": attempts}
        return self.best
