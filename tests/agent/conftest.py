"""Shared fixture for the agent tests (helpers in agenttools.py)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from agenttools import evaluator  # noqa: E402
from asmevo.agent.gates import Evaluator  # noqa: E402


@pytest.fixture(scope="module")
def leaky() -> Evaluator:
    return evaluator("20_LeakyReLU")
