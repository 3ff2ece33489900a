"""Helpers for the ISA analysis tests: hand-written programs and instruction removal."""
from __future__ import annotations

import dataclasses

from asmevo.isa.instruction import Instruction, parse_instruction


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
