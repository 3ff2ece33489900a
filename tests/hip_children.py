"""Functions the tests run in isolated children (`run_isolated("hip_children:...")`; tests/ is on the
children's PYTHONPATH)."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time


def double(x: int, *, progress) -> int:
    progress("doubling")
    return 2 * x


def crash(*, progress) -> None:
    progress("about to fault")
    print("Memory access fault by GPU node-2 (Agent handle: 0x1) on address 0x7f00. Reason: Page not present",
          file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)


def hang(*, progress) -> None:
    progress("waiting forever")
    time.sleep(3600)


def slow_but_alive(steps: int, pause: float, *, progress) -> int:
    for i in range(steps):
        progress(f"step {i}")
        time.sleep(pause)
    return steps


def raise_launch_spec_error(*, progress) -> None:
    from asmevo.errors import LaunchSpecError

    raise LaunchSpecError("grid too large")


def raise_bug(*, progress) -> None:
    raise ZeroDivisionError("oops")


def run_launch_on_gpu(device_id: int, code: bytes, spec_dict: dict, inputs: dict, *, progress) -> dict:
    """`run_launch` on the hip device; the outputs and the launch result's fields."""
    from asmevo.device import get_device
    from asmevo.device.launch import LaunchSpec, run_launch

    progress("launching")
    device = get_device("hip", device_id=device_id)
    try:
        outputs, result = run_launch(device, code, LaunchSpec.from_dict(spec_dict), inputs)
    finally:
        device.close()
    return {"outputs": outputs, "ok": result.ok, "findings": result.findings}


def load_from_another_thread(device_id: int, code: bytes, *, progress) -> None:
    """Load (and unload) `code` once from this thread and once from a second one."""
    from asmevo.device import get_device

    progress("loading")
    device = get_device("hip", device_id=device_id)
    device.unload(device.load(code))
    failure = []

    def other() -> None:
        try:
            device.unload(device.load(code))
        except Exception as exc:  # reported to the caller below
            failure.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    device.close()
    if failure:
        raise failure[0]


def naive_samples(device_id: int, code: bytes, spec_dict: dict, samples: int, *, progress) -> list[float]:
    """The pre-#17 protocol, for comparison: events around one launch on an idle stream, one
    synchronisation per sample, no cache flush."""
    from asmevo.device import get_device
    from asmevo.device.launch import LaunchSpec, launch_args, make_inputs

    progress("naive timing")
    spec = LaunchSpec.from_dict(spec_dict)
    device = get_device("hip", device_id=device_id)
    module = device.load(code)
    inputs = make_inputs(spec)
    buffers = {name: device.alloc(buf.nbytes, name) for name, buf in spec.buffers.items()}
    for name, buf in buffers.items():
        device.copy_in(buf, inputs[name])
    dispatch = device.dispatch(module, spec.kernel, spec.grid, spec.block, spec.dynamic_lds,
                               launch_args(spec, module.kernel(spec.kernel), buffers))
    start, stop = device.event(), device.event()
    out = []
    for _ in range(samples):
        device.record(start)
        dispatch.enqueue()
        device.record(stop)
        device.synchronize()
        out.append(device.elapsed_ms(start, stop))
    for e in (start, stop):
        device.destroy(e)
    for buf in buffers.values():
        device.free(buf)
    device.unload(module)
    device.close()
    return out

