"""Triton's bundled LLVM as AsmEvo's assembler and linker, in one resident worker process.

Triton 3.9 ships two LLVM 24 builds: `libtriton_amd_codegen.so`, whose MC assembler Triton itself uses
(`triton.backends.amd.compiler.assemble_amdgcn(assembly, processor, features) -> bytes`, raising
RuntimeError when the assembler rejects the source; LLVM's diagnostics, `<buffer>:line:col: error: ...`,
go to the process's stderr), and `libtriton.so`, whose `amd.link_hsaco(in_path, out_path)` runs lld's ELF
driver in process (`ld.lld --threads=1 -shared in_path -o out_path`; an `@file` input is a response file).

Both are LLVM built with assertions, and the MC layer overflows its stack on deeply nested expressions
(as llvm-mc does), so they run in a worker process started once per AsmEvo process (`python -c` of
`serve`) rather than in AsmEvo's own: a crash there fails the one call with a ToolchainError and the
next call starts a new worker. Requests and replies are length-prefixed pickles over the worker's
stdin/stdout; the worker points its own fds 0 and 1 at /dev/null and captures fd 2 per call.
"""
from __future__ import annotations

import importlib.util
import os
import pickle
import re
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .errors import ToolchainError

_HEADER = struct.Struct("<Q")
_LLD_RE = re.compile(rb"Linker: LLD ((\d+)\.[^\x00]*)")
_PROBE = '.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n.text\ns_endpgm\n'


@dataclass(frozen=True)
class WorkerInfo:
    """What the worker found at start: the Triton release, its lld's version text (from the `.comment`
    of a linked probe object) and major, and the assembler library's LLVM revision. The major stands for
    both: triton 3.9.0 builds both libraries from LLVM 24.0.0git (their version strings say so)."""

    triton: str
    linker: str
    major: int
    assembler_revision: str


def _send(out: BinaryIO, obj) -> None:
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_HEADER.pack(len(payload)) + payload)
    out.flush()


def _recv(inp: BinaryIO):
    head = inp.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(head)[0]
    payload = inp.read(size)
    if len(payload) < size:
        raise EOFError
    return pickle.loads(payload)


# ---------------------------------------------------------------- worker side


def _captured(call):
    """(result or None, the text written to fd 2 during `call`, the exception text or None)."""
    sys.stderr.flush()
    with tempfile.TemporaryFile() as capture:
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            result, error = call(), None
        except Exception as exc:  # the worker reports every failure to its client
            result, error = None, f"{type(exc).__name__}: {exc}"
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        return result, capture.read().decode(errors="replace"), error


def _link_in_worker(link_hsaco, obj: bytes, args: list[str]) -> bytes:
    with tempfile.TemporaryDirectory(prefix="asmevo-ld-") as tmp:
        src, rsp, out = Path(tmp, "in.o"), Path(tmp, "args.rsp"), Path(tmp, "out.co")
        src.write_bytes(obj)
        quoted = '"' + str(src).replace("\\", "\\\\").replace('"', '\\"') + '"'  # GNU response-file quoting
        rsp.write_text("\n".join([*args, quoted]) + "\n")
        link_hsaco(f"@{rsp}", str(out))
        return out.read_bytes()


def serve() -> None:
    """The worker's loop: ("assemble", source, processor, features) -> (object | None, diagnostics,
    error | None); ("link", object, args) -> (code object | None, diagnostics, error | None)."""
    inp, out = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    try:
        import triton
        from triton._C.libtriton import amd
        from triton.backends.amd.compiler import assemble_amdgcn, get_amd_codegen_revision

        probe, diag, error = _captured(lambda: _link_in_worker(amd.link_hsaco,
                                                               assemble_amdgcn(_PROBE, "gfx942", ""), []))
        m = _LLD_RE.search(probe or b"")
        if m is None:
            raise RuntimeError(error or diag.strip() or "the probe link names no LLD version")
        info = WorkerInfo(triton.__version__, m.group(1).decode(), int(m.group(2)), get_amd_codegen_revision())
    except Exception as exc:  # any failure to start makes the backend unusable, with this reason
        _send(out, ("unusable", f"{type(exc).__name__}: {exc}".splitlines()[0]))
        return
    _send(out, ("ready", info))
    while True:
        try:
            request = _recv(inp)
        except EOFError:
            return
        if request[0] == "assemble":
            _, source, processor, features = request
            _send(out, _captured(lambda: assemble_amdgcn(source, processor, features)))
        elif request[0] == "link":
            _, obj, args = request
            _send(out, _captured(lambda: _link_in_worker(amd.link_hsaco, obj, args)))
        else:
            _send(out, (None, "", f"unknown request {request[0]!r}"))


# ---------------------------------------------------------------- client side


class TritonLLVM:
    """A resident worker running Triton's assembler and linker. Calls are serialised (one worker per
    process); a worker that dies is replaced on the next call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self.info = self._start()

    def _start(self) -> WorkerInfo:
        root = str(Path(__file__).resolve().parents[1])
        code = f"import sys; sys.path.insert(0, {root!r}); from asmevo.triton_llvm import serve; serve()"
        try:
            proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise ToolchainError(f"cannot start Triton's LLVM worker: {exc.strerror}") from None
        try:
            status, detail = _recv(proc.stdout)
        except EOFError:
            status, detail = "unusable", _death(proc)
        if status != "ready":
            _stop(proc)
            raise ToolchainError(f"Triton's LLVM is not usable: {detail}")
        self._proc = proc
        return detail

    def _call(self, what: str, request: tuple) -> tuple[object, str, str | None]:
        with self._lock:
            if self._proc is None:
                self._start()
            proc = self._proc
            try:
                _send(proc.stdin, request)
                return _recv(proc.stdout)
            except (EOFError, OSError):
                self._proc = None
                raise ToolchainError(f"Triton's LLVM {what} crashed ({_death(proc)}); the call was not "
                                     f"completed, the next one starts a new worker") from None

    def assemble(self, source: str, processor: str, features: str) -> tuple[bytes | None, str]:
        """(relocatable object, or None when the assembler rejected the source; LLVM's diagnostics,
        `triton-amdgpu-assembler:LINE:COL: error: ...`)."""
        obj, diagnostics, error = self._call("assembler", ("assemble", source, processor, features))
        if obj is None and "error:" not in diagnostics:
            raise ToolchainError(f"Triton's assembler failed: {error}")
        return obj, diagnostics

    def link(self, obj: bytes, args: list[str]) -> bytes:
        """The shared code object lld links from `obj` with the extra `args`; a failure names lld's
        first error. The worker is replaced after a failed link (lld may not be rerunnable then)."""
        data, diagnostics, error = self._call("linker", ("link", obj, args))
        if data is None:
            self.close()
            text = f"{error or ''}\n{diagnostics}"
            m = re.search(r"ld\.lld: error: [^\n]*", text)
            raise ToolchainError(f"Triton's linker failed: {m.group(0) if m else text.strip().splitlines()[0]}")
        return data

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                _stop(self._proc)
                self._proc = None


def _death(proc: subprocess.Popen) -> str:
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return "worker stopped answering"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def _stop(proc: subprocess.Popen) -> None:
    for stream in (proc.stdin, proc.stdout):
        try:
            stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def installed() -> bool:
    """Whether Triton is installed (its LLVM is only started when needed)."""
    return importlib.util.find_spec("triton") is not None
