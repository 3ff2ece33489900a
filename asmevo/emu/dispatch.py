"""Launch setup: batches of workgroups, the initial SGPR/VGPR/EXEC state the kernel descriptor asks
for, the dispatch packet, kernarg segment and kernarg preloading."""
from __future__ import annotations

import struct

import numpy as np

from ..codeobj import Kernel
from ..target import processor
from .memory import Memory
from .state import EXEC, FLAT_SCRATCH, Machine

PRELOAD_SKIP = processor("gfx942").preload_preamble_bytes  # kernarg-preloading kernels start past the preamble
MAX_LDS = processor("gfx942").lds_bytes
BATCH_BYTES = 384 << 20


def waves_per_group(block: tuple[int, int, int]) -> int:
    return -(-(block[0] * block[1] * block[2]) // 64)


def work_items(block: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(v0 of each lane of a workgroup's waves, [waves, 64] uint32; the launch EXEC of each wave,
    uint64): wave k holds flat ids 64k .. 64k+63, v0 = x | y << 10 | z << 20, 0 past the last."""
    bx, by, bz = block
    t = np.arange(waves_per_group(block), dtype=np.uint32)[:, None] * 64 + np.arange(64, dtype=np.uint32)[None, :]
    live = t < bx * by * bz
    ids = np.where(live, (t % bx) | (((t // bx) % by) << 10) | ((t // (bx * by)) << 20), 0).astype(np.uint32)
    return ids, np.packbits(live, axis=1, bitorder="little").view(np.uint64).reshape(-1)


def batch_waves(kernel: Kernel, block, nvgpr: int, nagpr: int, checked: bool) -> int:
    """How many waves (whole workgroups) one batch holds within the memory budget."""
    wpg = waves_per_group(block)
    per_wave = (nvgpr + nagpr) * 256 * (2 if checked else 1) + 64 * kernel.descriptor.private_segment_fixed_size
    per_wave += 1024 + 16 * (nvgpr + nagpr)
    groups = max(1, BATCH_BYTES // max(per_wave * wpg, 1))
    return min(groups, max(1, 65536 // wpg)) * wpg


def host_buffers(memory: Memory, kernel: Kernel, kernarg: bytes, grid, block, lds: int) -> dict[str, int]:
    """Allocate and fill the kernarg segment, the AQL dispatch packet and a queue stub."""
    size = max(256, -(-len(kernarg) // 256) * 256 + 256)
    ka = memory.alloc(size, "__kernarg", 256)
    if kernarg:
        memory.write(ka, kernarg)
    pkt = memory.alloc(64, "__dispatch_packet", 64)
    dims = 3 if grid[2] * block[2] > 1 else 2 if grid[1] * block[1] > 1 else 1
    packet = struct.pack(
        "<HHHHHHIIIIIQQQQ", 2, dims, block[0], block[1], block[2], 0,
        grid[0] * block[0], grid[1] * block[1], grid[2] * block[2],
        kernel.descriptor.private_segment_fixed_size, lds, kernel.descriptor_address, ka, 0, 0)
    memory.write(pkt, packet)
    queue = memory.alloc(256, "__queue", 64)
    return {"kernarg": ka, "packet": pkt, "queue": queue}


def init_batch(m: Machine, kernel: Kernel, workgroups: np.ndarray, grid, block, addrs: dict[str, int],
               kernarg: bytes, first_wave: int = 0) -> None:
    """Initial state of the waves of `workgroups` (flat ids, one per batch workgroup), which are the
    batch's waves from `first_wave` on (a wide batch holds several launches one after another)."""
    d = kernel.descriptor
    f = d.fields
    wpg = m.wpg
    waves = slice(first_wave, first_wave + len(workgroups) * wpg)
    s = m.s[waves]
    values = {
        "enable_sgpr_private_segment_buffer": [0, 0, 0, 0],
        "enable_sgpr_dispatch_ptr": [addrs["packet"] & 0xFFFFFFFF, addrs["packet"] >> 32],
        "enable_sgpr_queue_ptr": [addrs["queue"] & 0xFFFFFFFF, addrs["queue"] >> 32],
        "enable_sgpr_kernarg_segment_ptr": [addrs["kernarg"] & 0xFFFFFFFF, addrs["kernarg"] >> 32],
        "enable_sgpr_dispatch_id": [0, 0],
        "enable_sgpr_flat_scratch_init": [0, 0],
        "enable_sgpr_private_segment_size": [d.private_segment_fixed_size],
    }
    written = []
    nuser = 0
    for name, first, count in d.user_sgpr_layout():
        s[:, first:first + count] = np.array(values[name], np.uint32)
        written += list(range(first, first + count))
        nuser = first + count
    plen, poff = f["kernarg_preload_spec_length"], f["kernarg_preload_spec_offset"]
    if plen:
        raw = (kernarg + b"\0" * (4 * (poff + plen)))[4 * poff:4 * (poff + plen)]
        s[:, nuser:nuser + plen] = np.frombuffer(raw, np.uint32)
        written += list(range(nuser, nuser + plen))
    wg = np.repeat(np.asarray(workgroups, np.int64), wpg)
    gx, gy = grid[0], grid[1]
    ids = {"x": wg % gx, "y": (wg // gx) % gy, "z": wg // (gx * gy)}
    r = f["user_sgpr_count"]
    for axis in "xyz":
        if f[f"enable_sgpr_workgroup_id_{axis}"]:
            s[:, r] = ids[axis]
            written.append(r)
            r += 1
    if f["enable_sgpr_workgroup_info"]:
        s[:, r] = 0
        written.append(r)
        r += 1
    s[:, FLAT_SCRATCH:FLAT_SCRATCH + 2] = 0
    ids, bits = work_items(block)
    m.v[0][waves].reshape(len(workgroups), wpg, 64)[:] = ids  # every workgroup has the same work-item layout
    m.s64[waves, EXEC // 2] = np.tile(bits, len(workgroups))
    m.exec_version += 1
    if m.checked:
        m.v_init[0][waves] = True
        m.s_init[waves, written + [EXEC, EXEC + 1, FLAT_SCRATCH, FLAT_SCRATCH + 1]] = True
