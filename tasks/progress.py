"""Progress events of stage calls: which kernel's stage started or finished, and how far an edit
stage's agent got. `emit` hands an event to the sink a run installed (`set_sink`: the run's display
in the run's process, a queue to it in a worker process); without one, events are dropped.

An event is a dict: `event` (start, finish, candidate), `label` (the kernel the stage call belongs
to, from `LABEL`, which the flow sets around submitting a kernel's stages), `call` (the stage call,
from `CALL`), `time` (epoch seconds), and the event's own fields."""
from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Callable

LABEL: ContextVar[str] = ContextVar("asmevo_stage_label", default="")
CALL: ContextVar[str] = ContextVar("asmevo_stage_call", default="")  # one stage call's events share it
_sink: Callable[[dict], None] | None = None


def set_sink(sink: Callable[[dict], None] | None) -> None:
    """Where `emit` sends events from now on (None: nowhere)."""
    global _sink
    _sink = sink


def emit(event: str, **fields) -> None:
    deliver({"event": event, "label": LABEL.get(), "call": CALL.get(), "time": time.time(), **fields})


def deliver(event: dict) -> None:
    """Hand a formed event (one a worker process sent) to the sink."""
    sink = _sink
    if sink is not None:
        sink(event)
