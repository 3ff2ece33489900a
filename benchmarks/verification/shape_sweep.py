"""Verify a mutation benchmark survivor against K0 over every shape of a range, bit for bit.

Several survivors are equivalent by an argument about shapes (a remainder loop that never needs a
second trip, lanes past the end whose values no stored element reads); whether a kernel's control
flow can tell two shapes apart depends on the sizes' residues modulo its block and tile sizes. This
rebuilds K1 from K0's recovered source with the given edits, then runs K0 and K1 on one random
input set per shape (`asmevo.verify`, static checks once) for the cartesian product of the
problem's launch dims (`benchmarks/kernelbench/specs.py`), and reports every shape that differs.

    python benchmarks/verification/shape_sweep.py 19_ReLU --dims 1 1..2100
        --edit '0x173c=s_andn2_b64 exec, exec, s[8:9]=s_andn2_b64 exec, s[8:9], exec'

`--edit ADDR=OLD=NEW` replaces the instruction at ADDR (which must start with OLD) by NEW, or deletes
it when NEW is empty; `--dims` takes one field per launch dim, each an integer, LO..HI or LO..HI:STEP.
Exits 1 when any shape differs. Record: shape_sweep-PROBLEM-ADDRS.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "kernelbench"))

from asmevo.codeobj import CodeObject  # noqa: E402
from asmevo.recover import recover  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from asmevo.launches import launch_from_dict  # noqa: E402
from asmevo.static_checks import static_differences  # noqa: E402
from asmevo.verify import verify  # noqa: E402
from benchmarks import record  # noqa: E402
from line_edits import build  # noqa: E402
from specs import launch_spec  # noqa: E402


def edit_arg(text: str) -> tuple[int, str, str | None]:
    address, old, new = text.split("=", 2)
    return int(address, 0), old.strip(), new.strip() or None


def dims_arg(text: str) -> range:
    span, _, step = text.partition(":")
    lo, _, hi = span.partition("..")
    return range(int(lo), int(hi or lo) + 1, int(step or 1))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem")
    ap.add_argument("--edit", type=edit_arg, action="append", required=True, help="ADDR=OLD=NEW (NEW empty: delete)")
    ap.add_argument("--dims", type=dims_arg, nargs="+", required=True, help="per launch dim: N, LO..HI or LO..HI:STEP")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def record_path(argv: list[str]) -> Path:
    """shape_sweep-PROBLEM-ADDRS.txt: one record per survivor."""
    args = parse_args(argv)
    return record.default_path(__file__, args.problem, "_".join(f"0x{a:x}" for a, _, _ in args.edit),
                               args.seed and f"seed{args.seed}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problem = load_suite("kernelbench").problem(args.problem)
    manifest = json.loads((ROOT / "benchmarks" / "kernelbench" / "manifest.json").read_text())
    rec = recover(problem.code_object)
    k0 = CodeObject.from_path(problem.code_object)
    k1 = CodeObject(build(rec.source.splitlines(), rec.info, {a: (old, new) for a, old, new in args.edit}))
    static = static_differences(k0, k1)
    if static:
        print(f"static check rejects K1: {static[0]}")
        return 1
    start, differing, count = time.perf_counter(), [], 0
    for dims in itertools.product(*args.dims):
        spec = {**launch_spec(args.problem, dims, manifest), "seed": args.seed}
        v = verify(k0, k1, [launch_from_dict(spec, problem.dir, "x".join(map(str, dims)))], trials=1,
                   special=False, static=False)
        count += 1
        if v.kind != "equivalent":
            differing.append((dims, v.summary()))
            print(f"DIFFER {dims}: {v.summary()}", flush=True)
    print(f"{args.problem}: {count} shapes, {len(differing)} differing, {time.perf_counter() - start:.0f} s")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
