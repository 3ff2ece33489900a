"""Run hardware work in a child process the caller can lose.

On a GPU memory fault ROCr prints "Memory access fault by GPU node-N ..." and aborts the whole process
(rocr-runtime runtime.cpp, VMFaultHandler); a kernel that never ends blocks the thread waiting for it.
So every hardware launch runs here: `run_isolated("pkg.module:function", *args, timeout=...)` starts
a Python child running `main`, calls the function there with the pickled arguments plus a
`progress(note)` callable, and returns its pickled result.

* Each `progress` note restarts the watchdog: a child silent for `timeout` seconds is killed and
  `ChildTimeout` raised. A child that dies (a signal, or an exit without a result) raises `ChildCrashed`.
  Both carry the last note (the step in flight, e.g. "K1 on launch x (trial 0)") and the tail of the
  child's output (ROCr's fault message).
* An AsmEvoError raised in the child is raised again in the caller, with its class and message.
* The child runs with ASMEVO_ISOLATED=1 (the hip device refuses to run without it) and the caller's
  environment plus `env`; it imports the same `asmevo` as the caller.
"""
from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import tempfile
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..errors import AsmEvoError
from .base import DeviceError

ISOLATED_ENV = "ASMEVO_ISOLATED"
TIMEOUT_ENV = "ASMEVO_HIP_TIMEOUT"
DEFAULT_TIMEOUT = 120.0  # seconds without progress before a child counts as hung
TAIL_LINES = 3
CHILD = "import sys; from asmevo.device.isolated import main; sys.exit(main(sys.argv[1:]))"


class ChildFailure(AsmEvoError):
    """The isolated child ended without a result; `note` is the step it was in."""

    def __init__(self, message: str, note: str | None, output: str):
        super().__init__(message)
        self.note = note
        self.output = output


class ChildCrashed(ChildFailure):
    """The child died: killed by a signal (a GPU fault aborts it) or exited without a result."""


class ChildTimeout(ChildFailure):
    """The child sent nothing for the whole timeout (a hung kernel) and was killed."""


def default_timeout() -> float:
    """Seconds a child may stay silent: $ASMEVO_HIP_TIMEOUT, else DEFAULT_TIMEOUT."""
    raw = os.environ.get(TIMEOUT_ENV)
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise DeviceError(f"{TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def _tail(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-TAIL_LINES:])


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code} without a result"


def _child_env(extra: dict[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra or {})
    env[ISOLATED_ENV] = "1"
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def run_isolated(target: str, *args: Any, timeout: float | None = None, env: dict[str, str] | None = None,
                 **kwargs: Any) -> Any:
    """`target(*args, progress=..., **kwargs)` ("module:function") in a child process; see the module doc."""
    timeout = default_timeout() if timeout is None else timeout
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    with tempfile.TemporaryDirectory(prefix="asmevo-child-") as tmp:
        out_path = Path(tmp) / "output"
        with open(out_path, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-c", CHILD, str(to_child_r), str(from_child_w)],
                                    pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=out, env=_child_env(env))
        os.close(to_child_r)
        os.close(from_child_w)
        sender, receiver = Connection(to_child_w, readable=False), Connection(from_child_r, writable=False)
        note = None
        try:
            try:
                sender.send((target, args, kwargs))
            except (BrokenPipeError, OSError):
                pass  # the child died at start-up: reported below
            sender.close()
            while True:
                if not receiver.poll(timeout):
                    proc.kill()
                    proc.wait()
                    raise ChildTimeout(f"no progress for {timeout:g} s" + (f" during {note}" if note else "") +
                                       "; the child was killed", note, _tail(out_path))
                try:
                    kind, *payload = receiver.recv()
                except (EOFError, OSError):
                    code = proc.wait()
                    output = _tail(out_path)
                    raise ChildCrashed(f"child {_describe_exit(code)}" + (f" during {note}" if note else "") +
                                       (f": {output}" if output else ""), note, output) from None
                if kind == "progress":
                    note = payload[0]
                    continue
                proc.wait()
                if kind == "result":
                    return payload[0]
                raise _rebuild_error(*payload)
        finally:
            receiver.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _rebuild_error(qualified: str | None, message: str) -> AsmEvoError:
    """The child's AsmEvoError, as the same class when it can be imported here."""
    if qualified:
        module, _, name = qualified.partition(":")
        try:
            cls = getattr(importlib.import_module(module), name)
            if isinstance(cls, type) and issubclass(cls, AsmEvoError):
                return cls(message)
        except Exception:
            pass
    return DeviceError(message)


def _resolve(target: str):
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def main(argv: list[str]) -> int:
    """The child: read the call, run it, send progress notes and the result (or the error)."""
    receiver = Connection(int(argv[0]), writable=False)
    sender = Connection(int(argv[1]), readable=False)
    target, args, kwargs = receiver.recv()
    receiver.close()

    def progress(note: str) -> None:
        sender.send(("progress", note))

    try:
        result = _resolve(target)(*args, progress=progress, **kwargs)
    except AsmEvoError as exc:
        sender.send(("error", f"{type(exc).__module__}:{type(exc).__qualname__}", str(exc)))
        return 0
    except Exception as exc:
        traceback.print_exc()
        sender.send(("error", None, f"isolated {target} failed: {type(exc).__name__}: {exc}"))
        return 1
    sender.send(("result", result))
    return 0

