"""Hand-built inputs for the timing model's tests: instruction lists and traces."""
from __future__ import annotations

import numpy as np

from asmevo.isa.instruction import parse_instruction
from asmevo.model import TracedLaunch
from asmevo.model.schedule import ENTRY


def program(text: str, base: int = 0x1000):
    """Instructions with addresses; `label:` lines name branch targets."""
    out, labels, pending = [], {}, []
    for line in [ln.strip() for ln in text.strip().splitlines() if ln.strip()]:
        if line.endswith(":"):
            labels[line[:-1]] = base + 4 * len(out)
            continue
        ins = parse_instruction(line)
        ins.address = base + 4 * len(out)
        ins.encoding = b"\0" * 4
        if ins.is_branch:
            pending.append((ins, line.split()[1]))
        out.append(ins)
    for ins, label in pending:
        ins.target = labels[label]
        ins.label = label
    return out


def traced(instructions, paths, grid, block=(256, 1, 1), memory=None, buffers=(), weight=1.0):
    """A TracedLaunch whose sampled waves (one per path, a list of block indices) each stand for
    `weight` waves of the grid."""
    edges: dict[tuple[int, int], int] = {}
    rows = []
    for path in paths:
        row: dict[int, int] = {}
        for p, b in zip([ENTRY, *path[:-1]], path):
            col = edges.setdefault((p, b), len(edges))
            row[col] = row.get(col, 0) + 1
        rows.append(row)
    counts = np.zeros((len(paths), len(edges)), np.int64)
    for w, row in enumerate(rows):
        for col, n in row.items():
            counts[w, col] = n
    wpg = -(-block[0] * block[1] * block[2] // 64)
    return TracedLaunch(list(edges), counts, np.arange(len(paths)) // wpg, np.full(len(paths), float(weight)),
                        memory or {}, list(buffers), grid, block)
