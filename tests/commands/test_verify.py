"""`asmevo verify` exit codes and JSON verdicts (scripted device standing in for the emulator)."""
import json

import numpy as np
import pytest

import asmevo.cli as cli
import asmevo.commands.verify as verify_cmd
from asmevo.cli import main

from fakes import RELU_SPEC, ScriptedDevice, relu, variant


@pytest.fixture
def files(tmp_path, monkeypatch):
    k0, k1 = variant(0), variant(4)
    (tmp_path / "k0.co").write_bytes(k0.data)
    (tmp_path / "k1.co").write_bytes(k1.data)
    (tmp_path / "launch.json").write_text(json.dumps(RELU_SPEC))
    dev = ScriptedDevice()
    dev.script(k0, relu)
    monkeypatch.setattr(verify_cmd, "get_device", lambda name: dev)
    monkeypatch.setattr(cli, "COMMAND_MODULES", ["verify"])
    return tmp_path, dev, k1


def test_equivalent_exit_0_with_json(files, capsys):
    tmp, dev, k1 = files
    dev.script(k1, relu)
    out = tmp / "verdict.json"
    rc = main(["verify", str(tmp / "k0.co"), str(tmp / "k1.co"), "--launch", str(tmp / "launch.json"),
               "--launch", str(tmp / "launch.json"), "--trials", "2", "--json", str(out)])
    assert rc == 0 and "equivalent" in capsys.readouterr().out
    rec = json.loads(out.read_text())
    assert rec["kind"] == "equivalent" and rec["launches"] == 2 and rec["trials"] == 9


def test_different_exit_1_prints_reason(files, capsys):
    tmp, dev, k1 = files

    def wrong(b):
        relu(b)
        b["y"][5] = np.float32(42)
    dev.script(k1, wrong)
    rc = main(["verify", str(tmp / "k0.co"), str(tmp / "k1.co"), "--launch", str(tmp / "launch.json")])
    out = capsys.readouterr().out
    assert rc == 1 and "different" in out and "y[5]" in out


def test_bad_input_exit_2(files, capsys):
    tmp, _, _ = files
    rc = main(["verify", str(tmp / "k0.co"), str(tmp / "missing.co"), "--launch", str(tmp / "launch.json")])
    assert rc == 2 and capsys.readouterr().err.startswith("error: ")
    (tmp / "bad.json").write_text("{")
    assert main(["verify", str(tmp / "k0.co"), str(tmp / "k1.co"), "--launch", str(tmp / "bad.json")]) == 2


def test_profile_command_prints_an_annotated_listing(tmp_path, monkeypatch, capsys):
    from asmevo.suites import load_suite
    p = load_suite("kernelbench").problem("19_ReLU")
    monkeypatch.setattr(cli, "COMMAND_MODULES", ["profile"])
    out = tmp_path / "profile.json"
    rc = main(["profile", str(p.code_object), "--launch", str(p.shape("v_7x333").launch_path), "--top", "3",
               "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "hot windows:" in text and "model_us" in text and "0x00001600" in text
    rec = json.loads(out.read_text())
    assert rec["estimate"]["unit"] == "model_us" and len(rec["windows"]) <= 3
