"""What a suite run shows while it works: on a terminal, a status block redrawn in place (one line per
stage running: kernel, stage, the agent's candidates evaluated against the budget, elapsed time)
under the lines of finished kernels; elsewhere (a log file, CI) one plain line per event."""
from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60:02d}:{seconds % 60:02d}"


class Display:
    """Receives progress events (`tasks.progress`) and finished-kernel lines; thread-safe."""

    def __init__(self, total: int, stream: TextIO | None = None, live: bool | None = None):
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.total = total
        self.started = time.time()
        self.done = 0
        self.running: dict[tuple[str, str, str], dict] = {}  # (kernel, stage, call) -> since, candidates
        self._drawn = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        if self.live:  # the clocks keep moving between events
            threading.Thread(target=self._tick, name="asmevo-display", daemon=True).start()

    def event(self, event: dict) -> None:
        """A stage started or finished, or an edit stage evaluated a candidate."""
        key = (event.get("label") or "?", event.get("stage", "?"), event.get("call", ""))
        with self._lock:
            kind = event["event"]
            if kind == "start":
                self.running[key] = {"since": event["time"]}
            elif kind == "finish":
                self.running.pop(key, None)
            elif kind == "candidate":
                self.running.setdefault(key, {"since": event["time"]}).update(
                    evaluated=event["evaluated"], budget=event["budget"], tried=event["tried"], best=event["best"])
            if self.live:
                self._redraw()
            else:
                self._write(self._plain(kind, key, event))

    def kernel_done(self, line: str) -> None:
        """A kernel's result line (stays on screen)."""
        with self._lock:
            self.done += 1
            if self.live:
                self._clear()
                self.stream.write(line + "\n")
                self._redraw()
            else:
                self._write(line)

    def close(self) -> None:
        """Stop the clock and erase the status block (unless the lock stays taken: a run stopping
        from a signal handler may have interrupted a write)."""
        self._closed.set()
        if self._lock.acquire(timeout=0.2):
            try:
                if self.live:
                    self._clear()
                    self.stream.flush()
            finally:
                self._lock.release()

    def _tick(self) -> None:
        while not self._closed.wait(1.0):
            with self._lock:
                if not self._closed.is_set():
                    self._redraw()

    # ---- rendering ------------------------------------------------------------------------------
    def _status(self, key: tuple[str, str, str], info: dict, now: float) -> str:
        kernel, stage, _ = key
        cands = f"  {info['evaluated']}/{info['budget']} evaluated ({info['tried']} tried), best x{info['best']:.3f}" \
            if "budget" in info else ""
        return f"  {kernel:<40} {stage:<7} {_clock(now - info['since'])}{cands}"

    def _plain(self, kind: str, key: tuple[str, str, str], event: dict) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(event["time"]))
        kernel, stage, _ = key
        if kind == "start":
            what = "started"
        elif kind == "finish":
            what = f"finished in {event['seconds']:.1f} s" + (" (error)" if event.get("error") else "")
        else:
            what = (f"candidate {event['tried']}: {event['status']}, {event['evaluated']}/{event['budget']} evaluated, "
                    f"best x{event['best']:.3f}")
        return f"{stamp} {kernel} {stage} {what}"

    def _redraw(self) -> None:
        self._clear()
        now = time.time()
        lines = [self._status(key, info, now) for key, info in sorted(self.running.items())]
        lines.append(f"  [{self.done}/{self.total} kernels done, {len(self.running)} stage(s) running, "
                     f"{_clock(now - self.started)} elapsed]")
        self.stream.write("\n".join(lines) + "\n")
        self.stream.flush()
        self._drawn = len(lines)

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write(f"\x1b[{self._drawn}F\x1b[J")  # to the block's first line, erase below
            self._drawn = 0

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()
