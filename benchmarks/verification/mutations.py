"""Mutation benchmark for AsmEvo's verification.

Each KernelBench code object is recovered to assembly, edited, rebuilt and verified against the
original on the problem's verify and probe shapes. Semantics-breaking edits (operands swapped, a memory
offset changed, a wait or barrier dropped, an instruction deleted, a destination renamed into a
live register, a store widened) must all be rejected; semantics-preserving edits (no-op
reassembly, s_nop padding, reordering two adjacent independent ALU instructions) must all be
accepted. Edits are placed on instructions the verify launches execute (per-PC counts of K0), so
a breaking edit in code no launch reaches is not counted as a miss.

A breaking edit that verification accepts (so it passed the static hazard and s_waitcnt checks)
is checked for a proof that it is an equivalent mutant, one that cannot change any result
(`equivalence.py`: dead register writes, a barrier no wave can observe, a swapped subtraction
that is only squared, identical code). Proved
equivalents are reported with their proof and left out of the rejection rate; every other
accepted breaking edit is a survivor. Prints both rates, the per-operator table, the proved
equivalents, the survivors, and the time of one full verification per kernel.

    python benchmarks/verification/mutations.py [--problems 19_ReLU,23_Softmax] [--trials 3] [--seed 0]
        [--json out.json]

Record: mutations-seedS[-trialsN][-PROBLEMS].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from asmevo.codeobj import CodeObject  # noqa: E402
from asmevo.device import get_device  # noqa: E402
from asmevo.device.launch import make_inputs, run_launch  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.isa.instruction import Instruction, parse_instruction  # noqa: E402
from asmevo.isa.regs import reg_info  # noqa: E402
from asmevo.rebuild import rebuild_source  # noqa: E402
from asmevo.recover import recover  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from asmevo.launches import suite_launches  # noqa: E402
from asmevo.static_checks import static_differences  # noqa: E402
from asmevo.verify import ReferenceCache, verify  # noqa: E402
from benchmarks import record  # noqa: E402
from equivalence import LINE, equivalence_proof  # noqa: E402

_NON_COMMUTATIVE = re.compile(r"^[vs]_(sub|subrev|lshl|lshr|ashr|bfe|cmp_(lt|gt|le|ge)|cndmask|ldexp|"
                              r"alignbit|alignbyte|perm|cvt_pk|pack|andn2|orn2)")
_NOT_ALU = re.compile(r"^(s_waitcnt|s_barrier|s_nop|s_endpgm|s_branch|s_cbranch|s_setpc|s_swappc|s_getpc|"
                      r"s_sendmsg|s_setprio|s_sleep|s_dcache|s_icache|v_readlane|v_writelane|v_readfirstlane)")
_MEMORY = re.compile(r"^(global_|buffer_|flat_|scratch_|ds_|s_load|s_buffer_load|s_store)")


@dataclass
class Site:
    """One instruction of the recovered source: its line index, address and parsed form."""

    line: int
    address: int
    ins: Instruction


@dataclass
class Outcome:
    """A mutant's verdict on the verify shapes; a breaking survivor is re-verified with the
    held-out shape added (`heldout_verdict`), as final acceptance would."""

    problem: str
    operator: str
    breaking: bool
    description: str
    verdict: str
    reason: str
    seconds: float
    heldout_verdict: str = ""
    proof: str = ""  # why an accepted breaking edit is an equivalent mutant

    @property
    def correct(self) -> bool:
        if self.breaking:
            return self.verdict != "equivalent" or bool(self.proof)
        return self.verdict == "equivalent"


Edit = tuple[str, list[str]]  # (description, edited source lines)


def sites(lines: list[str], executed: set[int]) -> list[Site]:
    out = []
    for n, line in enumerate(lines):
        m = LINE.match(line)
        if m and int(m["addr"], 16) in executed and not m["text"].startswith("."):
            out.append(Site(n, int(m["addr"], 16), parse_instruction(m["text"])))
    return out


def _replace(lines: list[str], site: Site, text: str) -> list[str]:
    out = list(lines)
    out[site.line] = f"\t{text}".ljust(48) + f"; 0x{site.address:x} (mutated)"
    return out


def _delete(lines: list[str], site: Site) -> list[str]:
    return lines[:site.line] + lines[site.line + 1:]


def _with_operands(ins: Instruction, ops: list[str]) -> str:
    return f"{ins.mnemonic} {', '.join(ops)}" + (" " + " ".join(ins.modifiers) if ins.modifiers else "")


# ---- semantics-breaking edits ---------------------------------------------------------------------

def swap_operands(lines, ss):
    for s in ss:
        ops = [o.text for o in s.ins.operands]
        if _NON_COMMUTATIVE.match(s.ins.mnemonic) and len(ops) >= 3 and ops[1] != ops[2]:
            ops[1], ops[2] = ops[2], ops[1]
            yield f"swap sources of {s.ins.text()} at 0x{s.address:x}", _replace(lines, s, _with_operands(s.ins, ops))


def change_offset(lines, ss):
    for s in ss:
        name = s.ins.mnemonic
        if not _MEMORY.match(name):
            continue
        if name.startswith(("s_load", "s_buffer_load")) and s.ins.operands and s.ins.operands[-1].kind == "imm":
            ops = [o.text for o in s.ins.operands]
            ops[-1] = hex(int(s.ins.operands[-1].value) + 4)
            text = _with_operands(s.ins, ops)
        else:
            off = s.ins.modifier("offset")
            mods = [m for m in s.ins.modifiers if not m.startswith("offset:")]
            mods.append(f"offset:{int(off or '0', 0) + 4}")
            text = f"{name} {', '.join(o.text for o in s.ins.operands)} {' '.join(mods)}"
        yield f"offset +4 on {s.ins.text()} at 0x{s.address:x}", _replace(lines, s, text)


def drop_wait(lines, ss):
    for s in ss:
        if s.ins.mnemonic == "s_waitcnt":
            yield f"drop {s.ins.text()} at 0x{s.address:x}", _delete(lines, s)


def drop_barrier(lines, ss):
    for s in ss:
        if s.ins.mnemonic == "s_barrier":
            yield f"drop s_barrier at 0x{s.address:x}", _delete(lines, s)


def delete_instruction(lines, ss):
    for s in ss:
        if not _NOT_ALU.match(s.ins.mnemonic) and reg_info(s.ins).dst:
            yield f"delete {s.ins.text()} at 0x{s.address:x}", _delete(lines, s)


def rename_into_live(lines, ss):
    """Rename a single-VGPR destination to a VGPR that a following instruction reads before any
    redefinition (a live value), clobbering it."""
    for i, s in enumerate(ss):
        info = reg_info(s.ins)
        if _NOT_ALU.match(s.ins.mnemonic) or len(info.dst) != 1 or info.dst[0].kind != "vgpr" or info.dst[0].count != 1:
            continue
        dst = info.dst[0].index
        defined: set[int] = set()
        live = None
        for later in ss[i + 1:i + 8]:
            li = reg_info(later.ins)
            reads = sorted(r[1] for r in li.uses if r[0] == "v" and r[1] != dst and r[1] not in defined)
            if reads:
                live = reads[0]
                break
            defined |= {r[1] for r in li.defs if r[0] == "v"}
        if live is not None:
            ops = [o.text for o in s.ins.operands]
            ops[0] = f"v{live}"
            yield (f"rename v{dst} -> live v{live} in {s.ins.text()} at 0x{s.address:x}",
                   _replace(lines, s, _with_operands(s.ins, ops)))


_WIDER = {"global_store_dword": ("global_store_dwordx2", 2), "global_store_dwordx2": ("global_store_dwordx4", 4),
          "buffer_store_dword": ("buffer_store_dwordx2", 2), "ds_write_b32": ("ds_write_b64", 2),
          "global_store_short": ("global_store_dword", 1), "ds_write_b64": ("ds_write_b128", 4)}


def _offset(ins: Instruction) -> int:
    return int(ins.modifier("offset") or "0", 0)


def widen_store(lines, ss):
    """Widen a store so it also writes the next element(s); stores whose extra bytes the same code
    overwrites next (another store through the same address at the following offset) are skipped,
    since the final memory would not change."""
    for s in ss:
        if s.ins.mnemonic not in _WIDER:
            continue
        wide, n = _WIDER[s.ins.mnemonic]
        ops = [o.text for o in s.ins.operands]
        data = s.ins.operands[1]
        if data.kind != "vgpr":
            continue
        width = 4 * data.count if n > 1 else 2
        if any(o is not s and o.ins.mnemonic.startswith(s.ins.mnemonic.split("_")[0]) and "store" in o.ins.mnemonic
               and o.ins.operands and o.ins.operands[0].text == ops[0] and _offset(o.ins) == _offset(s.ins) + width
               for o in ss):
            continue
        ops[1] = f"v{data.index}" if n == 1 else f"v[{data.index}:{data.index + n - 1}]"
        text = f"{wide} {', '.join(ops)}" + (" " + " ".join(s.ins.modifiers) if s.ins.modifiers else "")
        yield f"widen {s.ins.text()} to {wide} at 0x{s.address:x}", _replace(lines, s, text)


# ---- semantics-preserving edits -------------------------------------------------------------------

def noop(lines, ss):
    yield "no-op reassembly", list(lines)


def nop_padding(lines, ss):
    picks = ss[::max(1, len(ss) // 5)][:5]
    out = list(lines)
    for s in sorted(picks, key=lambda s: -s.line):
        out.insert(s.line, "\ts_nop 0")
    yield f"s_nop 0 before {len(picks)} instructions", out


def reorder(lines, ss):
    for a, b in zip(ss, ss[1:]):
        if b.line != a.line + 1 or _NOT_ALU.match(a.ins.mnemonic) or _NOT_ALU.match(b.ins.mnemonic) \
                or _MEMORY.match(a.ins.mnemonic) or _MEMORY.match(b.ins.mnemonic):
            continue
        ia, ib = reg_info(a.ins), reg_info(b.ins)
        if ia.defs & (ib.defs | ib.uses) or ib.defs & ia.uses:
            continue
        out = list(lines)
        out[a.line], out[b.line] = lines[b.line], lines[a.line]
        yield f"swap independent {a.ins.text()} / {b.ins.text()} at 0x{a.address:x}", out


BREAKING: dict[str, Callable] = {"swap_operands": swap_operands, "change_offset": change_offset,
                                 "drop_wait": drop_wait, "drop_barrier": drop_barrier,
                                 "delete_instruction": delete_instruction, "rename_into_live": rename_into_live,
                                 "widen_store": widen_store}
PRESERVING: dict[str, Callable] = {"noop": noop, "nop_padding": nop_padding, "reorder": reorder}
# Operators that look at neighbouring instructions get the sites in line order (from a random start).
SEQUENTIAL = frozenset({"rename_into_live", "nop_padding", "reorder"})


def executed_pcs(k0: CodeObject, launches) -> set[int]:
    dev = get_device("emu")
    pcs: set[int] = set()
    for vl in launches:
        _, result = run_launch(dev, k0.data, vl.spec, make_inputs(vl.spec))
        pcs |= {pc for pc, n in result.report.pc_counts.items() if n}
    return pcs


def first_buildable(edits, info: dict, k0: CodeObject, legal: bool) -> tuple[str, list[str], CodeObject] | None:
    """The first edit that assembles (and, for a preserving edit, adds no static finding)."""
    for description, edited in edits:
        try:
            k1 = CodeObject(rebuild_source("\n".join(edited) + "\n", info).data)
        except AsmEvoError:
            continue
        if legal and static_differences(k0, k1):
            continue
        return description, edited, k1
    return None


def run_problem(problem, trials: int, rng: np.random.Generator) -> tuple[list[Outcome], float]:
    k0 = CodeObject.from_path(problem.code_object)
    launches = suite_launches(problem, probes=True)
    final = suite_launches(problem, heldout=True, probes=True)  # final acceptance of a survivor
    rec = recover(problem.code_object)
    lines = rec.source.splitlines()
    ss = sites(lines, executed_pcs(k0, suite_launches(problem)))
    shuffled = [ss[i] for i in rng.permutation(len(ss))]
    rotation = int(rng.integers(len(ss))) if ss else 0
    rotated = ss[rotation:] + ss[:rotation]
    outcomes = []
    full_seconds = 0.0
    cache = ReferenceCache()
    # Preserving edits first: the no-op's verification runs with a cold K0 cache, so its time is
    # that of one complete verification; later candidates reuse K0's results.
    for table, breaking in ((PRESERVING, False), (BREAKING, True)):
        for op, fn in table.items():
            candidates = rotated if op in SEQUENTIAL else shuffled
            picked = first_buildable(fn(lines, candidates), rec.info, k0, legal=not breaking)
            if picked is None:
                continue
            description, edited, k1 = picked
            v = verify(k0, k1, launches, trials=trials, reference=cache)
            if op == "noop":
                full_seconds = v.seconds
            outcome = Outcome(problem.name, op, breaking, description, v.kind, v.reason, v.seconds)
            if breaking and v.equivalent:
                outcome.proof = equivalence_proof(k0, k1, lines, edited, final)
            if breaking and v.equivalent and not outcome.proof:
                outcome.heldout_verdict = verify(k0, k1, final, trials=trials, reference=cache).kind
            outcomes.append(outcome)
    return outcomes, full_seconds


def problem_rng(seed: int, name: str) -> np.random.Generator:
    """The edit-picking generator of one problem: the same mutants whichever problems run."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", help="comma-separated problem names (default: every KernelBench problem)")
    ap.add_argument("--trials", type=int, default=3, help="random input sets per launch (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write every outcome here")
    return ap.parse_args(argv)


def record_path(argv: list[str]) -> Path:
    args = parse_args(argv)
    return record.default_path(__file__, f"seed{args.seed}", f"trials{args.trials}" if args.trials != 3 else None,
                               args.problems)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    suite = load_suite("kernelbench")
    problems = [suite.problem(n) for n in args.problems.split(",")] if args.problems else list(suite.problems)
    outcomes: list[Outcome] = []
    verify_times: dict[str, float] = {}
    start = time.perf_counter()
    for p in problems:
        try:
            got, full = run_problem(p, args.trials, problem_rng(args.seed, p.name))
        except AsmEvoError as exc:
            print(f"{p.name}: skipped ({exc})", flush=True)
            continue
        outcomes += got
        verify_times[p.name] = full
        bad = [o for o in got if not o.correct]
        print(f"{p.name}: {len(got)} mutants, {len(bad)} misjudged, full verification {full:.2f} s", flush=True)
    proved = [o for o in outcomes if o.proof]
    brk = [o for o in outcomes if o.breaking and not o.proof]
    pres = [o for o in outcomes if not o.breaking]
    print("\noperator             kind        n  correct  proved equivalent")
    for op in [*BREAKING, *PRESERVING]:
        mine = [o for o in outcomes if o.operator == op]
        if mine:
            kind = "breaking" if mine[0].breaking else "preserving"
            print(f"{op:20s} {kind:10s} {len(mine):3d}  {sum(o.correct and not o.proof for o in mine):3d}"
                  f"  {sum(bool(o.proof) for o in mine):3d}")
    for o in proved:
        print(f"EQUIVALENT {o.problem} {o.operator}: {o.description} -- {o.proof}")
    for o in outcomes:
        if not o.correct:
            held = f"; with the held-out shape: {o.heldout_verdict}" if o.heldout_verdict else ""
            what = "SURVIVED" if o.breaking else "REJECTED"
            print(f"{what} {o.problem} {o.operator}: {o.description} -> {o.verdict} ({o.reason}){held}")
    times = sorted(verify_times.values())
    print(f"\nproved equivalent mutants (accepted, not counted as breaking): {len(proved)}")
    print(f"rejection rate of semantics-breaking edits:  {sum(o.correct for o in brk)}/{len(brk)}"
          f" = {100 * sum(o.correct for o in brk) / max(1, len(brk)):.1f}%")
    held = sum(o.heldout_verdict not in ("", "equivalent") for o in brk)
    print(f"  ... including the held-out shape (final acceptance): {sum(o.correct for o in brk) + held}/{len(brk)}")
    print(f"acceptance rate of semantics-preserving edits: {sum(o.correct for o in pres)}/{len(pres)}"
          f" = {100 * sum(o.correct for o in pres) / max(1, len(pres)):.1f}%")
    if times:
        print(f"full verification per kernel (all verify shapes x {args.trials} trials + special sets): "
              f"median {np.median(times):.2f} s, max {times[-1]:.2f} s over {len(times)} kernels")
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"outcomes": [asdict(o) for o in outcomes],
                                               "verify_seconds": verify_times}, indent=1) + "\n")
    return 0 if all(o.correct for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
