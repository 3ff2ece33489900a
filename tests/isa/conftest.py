"""Shared fixtures: the compiled corpus (built once per session, cached on disk)."""
from __future__ import annotations

import dataclasses
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import corpus  # noqa: E402

from asmevo.isa.instruction import Instruction, parse_instruction  # noqa: E402


@pytest.fixture(scope="session")
def corpus_kernels() -> dict[str, list[Instruction]]:
    """name -> instructions for every HIP and Triton corpus kernel."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    out = dict(corpus.kernels_of(corpus.build_hip()))
    for path in corpus.build_triton():
        out.update(corpus.kernels_of(path))
    return out


def program(text: str) -> tuple[list[Instruction], dict[str, int]]:
    """Parse assembly lines; `name:` lines define labels for branches (`s_branch name`)."""
    ins: list[Instruction] = []
    labels: dict[str, int] = {}
    for line in text.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.endswith(":"):
            labels[line[:-1]] = len(ins)
            continue
        i = parse_instruction(line)
        if i.is_branch:
            i.label = i.operands[0].text
        ins.append(i)
    return ins, labels


def remove(ins: list[Instruction], i: int) -> list[Instruction]:
    """Drop instruction i, retargeting branches that jumped to it onto its successor."""
    gone, nxt = ins[i].address, ins[i + 1].address
    return [dataclasses.replace(x, target=nxt) if x.target == gone else x for k, x in enumerate(ins) if k != i]
