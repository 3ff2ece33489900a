"""`asmevo optimize`: writes the best candidate, its diff and the lineage; bad input is one line, exit 2."""
from __future__ import annotations

import json

from asmevo.cli import main
from asmevo.suites import load_suite

P = load_suite("kernelbench").problem("20_LeakyReLU")


def test_optimize_writes_outputs(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["optimize", str(P.code_object), "--launch", str(P.shape("v_4x1024").launch_path),
               "--heldout", str(P.shape("h_5x777").launch_path), "--budget", "1", "-o", str(out), "-q"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "leaky_relu_kernel:" in text
    lineage = json.loads((out / "lineage.json").read_text())
    assert lineage["unit"] == "model_us" and lineage["candidates"][0]["status"] == "baseline"
    assert (out / "kernel.co").is_file() and (out / "kernel.diff").is_file()
    assert all({"parent", "diff", "verdict", "timing", "agent", "step"} <= set(c) for c in lineage["candidates"])


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    rc = main(["optimize", str(tmp_path / "missing.co"), "--launch", str(P.shape("v_4x1024").launch_path),
               "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error:")
    rc = main(["optimize", str(P.code_object), "--launch", str(tmp_path / "nope.json"), "-o", str(tmp_path / "o")])
    assert rc == 2


def test_llm_agent_through_cli_with_scripted_server(tmp_path, capsys, monkeypatch):
    from scripted_server import ScriptedServer, tool_call
    monkeypatch.setenv("ASMEVO_HOME", str(tmp_path / "home"))  # the replies' store
    monkeypatch.setenv("ASMEVO_API_KEY", "test")
    args = ["optimize", str(P.code_object), "--launch", str(P.shape("v_4x1024").launch_path), "--agent", "llm",
            "--model", "openai/scripted", "--budget", "5", "-q"]
    with ScriptedServer([tool_call("list_windows", {}), tool_call("finish", {"reason": "nothing to do"})]) as srv:
        rc = main(args + ["--api-base", srv.api_base, "-o", str(tmp_path / "llm")])
    assert rc == 0 and "no improvement found" in capsys.readouterr().out
    lineage = json.loads((tmp_path / "llm" / "lineage.json").read_text())
    assert lineage["config"]["model"] == "openai/scripted" and lineage["config"]["llm_usage"]["steps"] == 2
    # the server is gone: the same command replays both replies from the store
    rc = main(args + ["--api-base", srv.api_base, "-o", str(tmp_path / "again")])
    assert rc == 0 and "llm: 2 replies (2 from the cache)" in capsys.readouterr().out
    monkeypatch.setenv("ASMEVO_LLM_CACHE", "sometimes")
    rc = main(args + ["--api-base", srv.api_base, "-o", str(tmp_path / "x")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == ["error: unknown LLM cache mode 'sometimes' (valid: off, read, readwrite)"]
