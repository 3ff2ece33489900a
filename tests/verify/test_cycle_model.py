"""Cycle-model sanity: bandwidth and MFMA rooflines, monotonicity, occupancy, waitcnt stalls."""
import copy

import pytest

from asmevo.codeobj import CodeObject
from asmevo.cycle_model import (MI300X, CycleModelError, access_bytes, cost, estimate, mfma_passes, occupancy,
                                schedule_block)
from asmevo.isa.instruction import parse_instruction

from .fakes import RELU_CO

KERNEL = CodeObject.from_path(RELU_CO).kernels[0]


def kernel_with(vgprs: int = 8, lds: int = 0):
    k = copy.deepcopy(KERNEL)
    k.descriptor.fields["granulated_workitem_vgpr_count"] = vgprs // 8 - 1
    k.descriptor.group_segment_fixed_size = lds
    return k


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


STREAM = program("""
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32_e32 v0, 4, v0
s_waitcnt lgkmcnt(0)
v_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]
global_load_dwordx4 v[4:7], v[2:3], off
v_lshl_add_u64 v[2:3], s[6:7], 0, v[0:1]
s_waitcnt vmcnt(0)
v_max_f32_e32 v4, 0, v4
v_max_f32_e32 v5, 0, v5
v_max_f32_e32 v6, 0, v6
v_max_f32_e32 v7, 0, v7
global_store_dwordx4 v[2:3], v[4:7], off
s_endpgm
""")

GEMM = program("""
s_mov_b32 s2, 0
loop:
v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]
v_mfma_f32_32x32x8_f16 v[16:31], v[36:37], v[38:39], v[16:31]
v_mfma_f32_32x32x8_f16 v[0:15], v[40:41], v[42:43], v[0:15]
v_mfma_f32_32x32x8_f16 v[16:31], v[44:45], v[46:47], v[16:31]
s_add_u32 s2, s2, 1
s_cmp_lt_u32 s2, 1000
s_cbranch_scc1 loop
s_endpgm
""")


def counts_for(instructions, waves, per_block=None):
    per_block = per_block or {}
    return {i.address: waves * per_block.get(i.address, 1) for i in instructions}


def model(instructions, waves, grid, block=(256, 1, 1), kernel=None, footprint=0, counts=None):
    return estimate(instructions, kernel or kernel_with(), counts or counts_for(instructions, waves), waves=waves,
                    grid=grid, block=block, footprint_bytes=footprint)


def test_streaming_kernel_tracks_bytes_over_hbm_bandwidth():
    for grid in (65536, 131072):
        waves = grid * 4
        nbytes = waves * 64 * 16 * 2
        e = model(STREAM, waves, (grid, 1, 1), footprint=nbytes)
        ideal = nbytes / (MI300X.hbm_bytes_per_s / MI300X.clock_hz)
        assert e.bound == "hbm_bandwidth" and abs(e.model_cycles - ideal) / ideal < 0.01


def test_mfma_bound_kernel_tracks_flops_over_peak():
    grid = 304 * 8
    waves = grid * 4
    loop_pcs = {i.address for i in GEMM[1:8]}
    counts = {i.address: waves * (1000 if i.address in loop_pcs else 1) for i in GEMM}
    e = model(GEMM, waves, (grid, 1, 1), kernel=kernel_with(vgprs=64), counts=counts)
    flops = waves * 1000 * 4 * (2 * 32 * 32 * 8)
    peak_per_cycle = 1307.4e12 / MI300X.clock_hz
    assert e.bound == "simd_throughput"
    assert abs(e.model_cycles - flops / peak_per_cycle) / (flops / peak_per_cycle) < 0.02


def test_mfma_passes_match_the_isa_tables():
    assert mfma_passes("v_mfma_f32_32x32x8_f16") == 8
    assert mfma_passes("v_mfma_f32_16x16x16_f16") == 4
    assert mfma_passes("v_mfma_f32_32x32x2_f32") == 16
    assert mfma_passes("v_mfma_f64_16x16x4_f64") == 8
    assert mfma_passes("v_mfma_f32_16x16x32_fp8_fp8") == 4
    assert mfma_passes("v_mfma_f32_4x4x4_16b_f16") == 2
    assert mfma_passes("v_mfma_f32_32x32x4_2b_f16") == 16
    assert mfma_passes("v_mfma_f32_32x32x8f16") == 8  # gfx90a spelling


def test_fewer_instructions_never_model_slower():
    waves, grid = 4096, (1024, 1, 1)
    base = model(STREAM, waves, grid).model_cycles
    for i in range(len(STREAM) - 1):
        fewer = STREAM[:i] + STREAM[i + 1:]
        assert model(fewer, waves, grid).model_cycles <= base, STREAM[i].text()


def test_more_vgprs_lower_occupancy_and_model_slower():
    waves, grid = 304 * 64 * 4, (304 * 64, 1, 1)
    fast = model(STREAM, waves, grid, kernel=kernel_with(vgprs=32))
    slow = model(STREAM, waves, grid, kernel=kernel_with(vgprs=128))
    assert fast.occupancy.waves_per_simd == 8 and slow.occupancy.waves_per_simd == 4
    assert slow.occupancy.limiter == "vgprs"
    assert slow.model_cycles > fast.model_cycles


def test_occupancy_limits():
    k = kernel_with(vgprs=512)
    assert occupancy(k, (256, 1, 1)).waves_per_simd == 1
    lds = occupancy(kernel_with(lds=40000), (256, 1, 1))
    assert lds.workgroups_per_cu == 1 and lds.limiter == "lds"
    one_wave = occupancy(kernel_with(), (64, 1, 1))
    assert one_wave.workgroups_per_cu == 32
    with pytest.raises(CycleModelError):
        occupancy(kernel_with(lds=70000), (256, 1, 1))


def test_waitcnt_stall_and_latency_hiding_by_independent_work():
    slots, _, length = schedule_block(STREAM)
    waits = [s for s in slots if s.stall]
    assert [s.cause for s in waits] == ["waitcnt smem", "waitcnt vmem_load"]
    assert waits[1].stall > MI300X.vmem_latency - 20
    hidden = program("""
global_load_dword v1, v[2:3], off
""" + "v_add_f32_e32 v4, v4, v4\n" * 50 + """
s_waitcnt vmcnt(0)
v_add_f32_e32 v1, v1, v1
""")
    exposed = [hidden[0], *hidden[-2:]]
    stall = lambda ins: sum(s.stall for s in schedule_block(ins)[0])
    assert stall(hidden) < stall(exposed)


def test_transcendental_dependency_latency():
    dep = program("v_exp_f32_e32 v1, v0\nv_add_f32_e32 v2, v1, v1")
    indep = program("v_exp_f32_e32 v1, v0\nv_add_f32_e32 v2, v3, v3")
    assert schedule_block(dep)[2] >= schedule_block(indep)[2]
    assert cost(dep[0]).cls == "trans" and cost(dep[0]).issue == 4 * cost(dep[1]).issue


def test_access_widths():
    assert access_bytes("global_load_dwordx4") == 16
    assert access_bytes("global_store_short") == 2
    assert access_bytes("ds_read2_b64") == 16
    assert access_bytes("buffer_load_ubyte") == 1
    assert access_bytes("s_load_dwordx8") == 32


def test_deterministic_and_json():
    a = model(STREAM, 4096, (1024, 1, 1)).to_json()
    b = model(STREAM, 4096, (1024, 1, 1)).to_json()
    assert a == b and a["unit"] == "model_cycles" and isinstance(a["model_cycles"], int)


def test_load_in_an_execz_skipped_block_stays_outstanding_after_it():
    """The merge after an `s_cbranch_execz` skip starts from the skipped block's end state when
    the skip was never taken (edge counts from block counts), so the load's latency shows."""
    skip = program("""
s_and_saveexec_b64 s[0:1], vcc
s_cbranch_execz merge
global_load_dword v1, v[2:3], off
merge:
s_or_b64 exec, exec, s[0:1]
s_waitcnt vmcnt(0)
v_add_f32_e32 v1, v1, v1
s_endpgm
""")
    est = model(skip, waves=4, grid=(1, 1, 1))
    wait = next(i for i in skip if i.mnemonic == "s_waitcnt")
    assert est.per_pc[wait.address].stall > MI300X.vmem_latency - 20
