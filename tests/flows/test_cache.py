"""Stage tasks are cached by content: a re-run is a cache hit; changing an input byte, a config
value or the stage's code is a miss; AsmEvoErrors are cached as error artifacts that downstream
stages pass on; device/toolchain errors are not cached."""
from __future__ import annotations

import importlib
import sys

import pytest

STAGE_SOURCE = '''
from artifacts import default_store
from asmevo.device import DeviceError
from asmevo.errors import AsmEvoError
from tasks.policy import Output, stage


@stage("toy", ("toystage.core",))
def toy(data: str, config: dict) -> Output:
    if config.get("fail") == "input":
        raise AsmEvoError("bad input")
    if config.get("fail") == "device":
        raise DeviceError("no device")
    return Output("toy", default_store().get(data)[::-1] * config["repeat"])


@stage("toy-next", ("toystage.core",))
def toy_next(data: str, config: dict) -> Output:
    return Output("toy", default_store().get(data) + b"!")
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory, prefect_api):
    root = tmp_path_factory.mktemp("toy")
    (root / "toystage").mkdir()
    (root / "toystage" / "__init__.py").write_text("")
    (root / "toystage" / "core.py").write_text(STAGE_SOURCE)
    sys.path.insert(0, str(root))
    module = importlib.import_module("toystage.core")
    yield module, root / "toystage" / "core.py"
    sys.path.remove(str(root))


@pytest.fixture(scope="module")
def run(toy):
    from prefect import flow

    module, _ = toy

    @flow(persist_result=False)
    def toy_flow(data: str, config: dict, next_config: dict | None = None):
        first = module.toy.submit(data, config)
        futures = [first] + ([module.toy_next.submit(first, next_config)] if next_config is not None else [])
        for f in futures:
            f.wait()
        return [(f.state.name, f.state.result() if f.state.is_completed() else None) for f in futures]

    return toy_flow


def test_rerun_is_a_cache_hit(run):
    from artifacts import default_store

    data = default_store().put(b"abc")
    [(state, sha)] = run(data, {"repeat": 2})
    assert state == "Completed" and default_store().get(sha) == b"cbacba"
    assert run(data, {"repeat": 2}) == [("Cached", sha)]
    record = default_store().record(sha)
    assert (record.stage, record.inputs, record.config) == ("toy", {"data": data}, {"repeat": 2})


def test_input_byte_and_config_changes_miss(run):
    from artifacts import default_store

    data = default_store().put(b"abcd")
    [(_, base)] = run(data, {"repeat": 1})
    [(state, sha)] = run(default_store().put(b"abce"), {"repeat": 1})
    assert state == "Completed" and sha != base
    [(state, _)] = run(data, {"repeat": 3})
    assert state == "Completed"
    assert run(data, {"repeat": 1}) == [("Cached", base)]


def test_stage_code_change_misses(run, toy):
    from artifacts import default_store

    _, path = toy
    data = default_store().put(b"code")
    [(_, sha)] = run(data, {"repeat": 1})
    original = path.read_text()
    path.write_text(original + "\n# a change to the stage's code\n")
    try:
        assert run(data, {"repeat": 1}) == [("Completed", sha)]
    finally:
        path.write_text(original)
    assert run(data, {"repeat": 1}) == [("Cached", sha)]


def test_input_errors_are_cached_artifacts_passed_downstream(run):
    from artifacts import default_store

    data = default_store().put(b"err")
    [(state, err), (next_state, passed)] = run(data, {"repeat": 1, "fail": "input"}, {})
    assert state == "Completed" and passed == err
    assert default_store().record(err).kind == "error"
    assert default_store().get_json(err) == {"stage": "toy", "error": "AsmEvoError", "message": "bad input"}
    assert run(data, {"repeat": 1, "fail": "input"}, {}) == [("Cached", err), ("Cached", err)]


def test_device_errors_fail_and_are_not_cached(run):
    from artifacts import default_store

    data = default_store().put(b"dev")
    assert run(data, {"repeat": 1, "fail": "device"}) == [("Failed", None)]
    assert run(data, {"repeat": 1, "fail": "device"}) == [("Failed", None)]
