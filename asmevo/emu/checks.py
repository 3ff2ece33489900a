"""Per-instruction register checks shared by the scheduler and indexed (VGPR index mode) ops: reads or
overwrites of registers with an outstanding load (`waitcnt`), reads of never-written registers
(`uninitialized`)."""
from __future__ import annotations

import numpy as np

from .ops import Op
from .state import Group, Machine

KIND = {"vm": 1, "lds": 2, "smem": 3, "flat": 3}


def check_pending(m: Machine, g: Group, op: Op, regs: list, write: bool) -> None:
    sel = g.sel
    for key in regs:
        entry = m.pend.get(key)
        if entry is None:
            continue
        kind, seq = entry
        k = kind[sel]
        if not k.any():
            continue
        s = seq[sel]
        done = np.where(k == 1, s <= m.vm_retired[sel],
                        np.where(k == 2, s <= m.lds_retired[sel], s <= m.smem_retired[sel]))
        bad = (k != 0) & ~done
        if write and op.loads and op.counter in ("vm", "lds"):
            bad &= k != KIND[op.counter]  # in-order returns of the same counter keep WAW order
        if bad.any():
            file, idx = key
            what = "overwrites" if write else "reads"
            m.find("waitcnt", op.ins.address, g.waves[bad],
                   f"{op.ins.mnemonic} {what} {file}{idx} while a load into it is outstanding (missing s_waitcnt)",
                   each=True)
        kind[sel] = np.where(done, 0, k)


def check_init(m: Machine, g: Group, op: Op) -> None:
    """Reads of register lanes never written (checked mode). Written flags only ever turn on, so a
    register read without fault by every wave with every lane active is written everywhere for good
    (`m.written`) and not checked again."""
    mask, full, _ = g.exec_info(m)
    everywhere = len(g) == m.W
    for reg in op.reads:
        if reg in m.written:
            continue
        f, i = reg
        if f == "s":
            bad = ~m.s_init[g.sel, i]
            if bad.any():
                m.find("uninitialized", op.ins.address, g.waves[bad],
                       f"{op.ins.mnemonic} reads s{i} before any write", each=True)
            elif everywhere:
                m.written.add(reg)
        else:
            init = (m.v_init if f == "v" else m.a_init)[i][g.sel]
            bad = ~init & (mask if op.lanes is None else op.lanes(m, g, mask))
            if bad.any():
                m.find("uninitialized", op.ins.address, g.waves[bad.any(axis=1)],
                       f"{op.ins.mnemonic} reads {f}{i} in lanes never written", each=True)
            elif everywhere and full and op.lanes is None:
                m.written.add(reg)
