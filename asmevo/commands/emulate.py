"""`asmevo emulate K.co --launch L.json --out DIR`: run one launch on the CPU emulator and write
every buffer after it as DIR/<name>.npy plus DIR/report.json. Exit 0 when the launch is clean,
1 when strictness findings made it fail (they are printed), 2 for bad input."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from ..codeobj import CodeObject
from ..device import get_device
from ..device.launch import LaunchSpec, make_inputs, run_launch
from ..errors import AsmEvoError
from .args import positive_int


def register(subparsers) -> None:
    p = subparsers.add_parser("emulate", help="run a kernel launch on the CPU emulator",
                              description=__doc__.splitlines()[0])
    p.add_argument("code_object", help="the kernel's code object (.co)")
    p.add_argument("--launch", required=True, help="launch spec (.json, .yaml or .yml)")
    p.add_argument("--out", required=True, help="directory for <buffer>.npy and report.json")
    p.add_argument("--checked", action="store_true", help="enable the emulator's extra strictness checks")
    p.add_argument("--budget", type=positive_int, default=50_000_000, help="instruction budget (default 50M)")
    p.set_defaults(handler=run)


def _finding_line(f: dict) -> str:
    where = f" at pc 0x{f['pc']:x}" if f.get("pc") is not None else ""
    wave = f" wave {f['wave']}" if f.get("wave") is not None else ""
    return f"finding: {f['kind']}{where}{wave}: {f['message']}"


def run(args: argparse.Namespace) -> int:
    spec = LaunchSpec.load(args.launch)
    co = CodeObject.from_path(args.code_object)
    spec.check(co.kernel(spec.kernel), co.target.processor)
    inputs = make_inputs(spec)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AsmEvoError(f"cannot create output directory {out} ({exc.strerror})") from None
    device = get_device("emu", budget=args.budget, checked=args.checked)
    outputs, result = run_launch(device, co.data, spec, inputs)
    for name, array in outputs.items():
        np.save(out / f"{name}.npy", array)
    report = result.report
    summary = {
        "kernel": spec.kernel, "code_object": str(args.code_object), "launch": str(args.launch),
        "grid": list(spec.grid), "block": list(spec.block), "dynamic_lds": spec.dynamic_lds, "seed": spec.seed,
        "ok": result.ok, "instructions": report.instructions, "lane_instructions": report.lane_instructions,
        "waves": report.waves, "findings": result.findings, "wall_time_s": round(result.wall_time_s, 6),
        "buffers": {name: {"dtype": buf.dtype.name, "shape": list(buf.shape), "file": f"{name}.npy"}
                    for name, buf in spec.buffers.items()},
    }
    (out / "report.json").write_text(json.dumps(summary, indent=2) + "\n")
    for f in result.findings:
        print(_finding_line(f), file=sys.stderr)
    status = "ok" if result.ok else "FAILED"
    print(f"{status}: {spec.kernel} grid {list(spec.grid)} block {list(spec.block)}: {report.instructions} "
          f"instructions, {report.waves} waves, {len(result.findings)} findings, {result.wall_time_s:.2f} s -> {out}")
    return 0 if result.ok else 1
