"""`asmevo time K0.co [K1.co] --launch L --device emu|hip [--gpu G] [--verdict V.json] --json F`: how long
a kernel takes on the launch L (the shape users run).

On the emulator the timing model predicts it for GPU G (unit `model_us`; a large launch is modelled
from a sample of its workgroups, K0 and K1 on the same ones). On hardware it is measured (unit `ms`)
by the paired protocol in an isolated child; K1 runs on a GPU only with an equivalent verdict about
K0 and K1 (`asmevo verify ... --json V.json`). One object gives its time, two give both, the paired
speedup and the gate's decision. Exit 0; bad input exits 2."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..codeobj import CodeObject
from ..errors import AsmEvoError
from ..launches import load_launch
from ..timing import decide, model_time, time_on_hardware
from ..verify import Verdict
from .args import add_gpu_option

ESTIMATE_FIELDS = ("predicted_us", "model_cycles", "hbm_floor_us", "compute_floor_us", "bound", "sampled_workgroups",
                   "workgroups", "sampling_error", "gpu", "terms")


def register(subparsers) -> None:
    p = subparsers.add_parser("time", help="predict (emu) or measure (hip) a kernel's time on a launch",
                              description=__doc__.splitlines()[0])
    p.add_argument("k0", help="the code object to time")
    p.add_argument("k1", nargs="?", help="a second code object, timed against K0")
    p.add_argument("--launch", required=True, help="launch spec (.json/.yaml): the shape users run")
    p.add_argument("--device", choices=("emu", "hip"), default="emu", help="emu (the timing model, default) or hip")
    add_gpu_option(p)
    p.add_argument("--verdict", help="`asmevo verify --json` record saying K1 is equivalent to K0 (required on hip)")
    p.add_argument("--json", help="write the result here")
    p.set_defaults(handler=run)


def _verdict(path: str | None) -> Verdict | None:
    if path is None:
        return None
    try:
        return Verdict(**json.loads(Path(path).read_text()))
    except (OSError, json.JSONDecodeError, TypeError) as exc:
        raise AsmEvoError(f"verdict {path}: unreadable ({type(exc).__name__}); write it with `asmevo verify --json`") \
            from None


def _emulated(k0: CodeObject, k1: CodeObject | None, launch, gpu_name: str) -> dict:
    t0, e0 = model_time(k0, launch, gpu_name)
    entry = lambda est: {k: est.to_json()[k] for k in ESTIMATE_FIELDS}  # noqa: E731
    if k1 is None:
        return {"unit": t0.unit, "launch": launch.label, **entry(e0)}
    t1, e1 = model_time(k1, launch, gpu_name, workgroups=e0.sample)
    d = decide(t0, t1)
    return {"unit": t0.unit, "launch": launch.label, "gpu": gpu_name, "kernels": [entry(e0), entry(e1)],
            "speedup": d.speedup, "threshold": d.threshold, "accepted": d.accepted}


def run(args: argparse.Namespace) -> int:
    k0 = CodeObject.from_path(args.k0)
    k1 = CodeObject.from_path(args.k1) if args.k1 else None
    launch = load_launch(args.launch)
    if args.device == "hip":
        out = time_on_hardware(k0, k1, launch, None, verdict=_verdict(args.verdict))
    else:
        out = _emulated(k0, k1, launch, args.gpu)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
        except OSError as exc:
            raise AsmEvoError(f"cannot write {args.json} ({exc.strerror})") from None
    unit = out["unit"]
    times = [k["median"] if "median" in k else k["predicted_us"] for k in out.get("kernels", [out])]
    line = ", ".join(f"K{i}: {t:.4g} {unit}" for i, t in enumerate(times))
    if "speedup" in out:
        line += f"; speedup {out['speedup']:.3f}x ({'accepted' if out['accepted'] else 'not accepted'})"
    print(f"{launch.label}: {line}")
    return 0
