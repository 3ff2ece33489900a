"""The launch model: rooflines from data-sheet numbers, per-edge schedules (the merge fix), store drain,
occupancy, waits and the instruction-level constants, on traces built by hand."""
import copy
from pathlib import Path

import pytest

from asmevo.codeobj import CodeObject
from asmevo.isa.cfg import build_cfg
from asmevo.isa.instruction import parse_instruction
from asmevo.model import DEFAULT_LATENCIES, ModelError, estimate, occupancy
from asmevo.model.launch import resident, static_cost
from asmevo.model.costs import cost
from asmevo.model.schedule import schedule_block
from asmevo.target import gpu

from modeltools import program, traced

ROOT = Path(__file__).resolve().parents[2]

KERNEL = CodeObject.from_path(ROOT / "benchmarks" / "kernelbench" / "19_ReLU" / "kernel.co").kernels[0]
MI300X = gpu("mi300x")


def kernel_with(vgprs: int = 8, lds: int = 0):
    k = copy.deepcopy(KERNEL)
    k.descriptor.fields["granulated_workitem_vgpr_count"] = vgprs // 8 - 1
    k.descriptor.group_segment_fixed_size = lds
    return k


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


def stream_launch(workgroups: int):
    """Every wave of `workgroups` x 4 streams 1 KiB in (buffer 0) and 1 KiB out (buffer 1)."""
    waves = workgroups * 4
    load, store = STREAM[4].address, STREAM[11].address
    memory = {load: (1024, 8, {0: 1024}), store: (1024, 8, {1: 1024})}
    return traced(STREAM, [[0]], (workgroups, 1, 1), memory=memory, buffers=(waves * 1024, waves * 1024),
                  weight=waves)


def test_streaming_kernel_tracks_bytes_over_achievable_hbm_bandwidth():
    for workgroups in (65536, 131072):
        e = estimate(STREAM, kernel_with(), stream_launch(workgroups), MI300X)
        nbytes = workgroups * 4 * 2048
        ideal_us = nbytes / 4.2e12 * 1e6  # STREAM on MI300X: 4.09-4.26 TB/s
        assert e.bound == "hbm_bandwidth"
        assert e.hbm_floor_us == pytest.approx(ideal_us, rel=1e-9)
        assert e.predicted_us == pytest.approx(ideal_us + MI300X.launch_us, rel=1e-9)


def test_mfma_bound_kernel_tracks_flops_over_peak():
    workgroups = 304 * 8
    waves = workgroups * 4
    run = traced(GEMM, [[0] + [1] * 1000 + [2]], (workgroups, 1, 1), weight=waves)
    e = estimate(GEMM, kernel_with(vgprs=64), run, MI300X)
    flops = waves * 1000 * 4 * (2 * 32 * 32 * 8)
    # MI300X dense FP16 matrix peak (data sheet: 1307.4 TFLOPS at the 2.1 GHz peak clock), at the model's
    # sustained clock
    peak_us = flops / (1307.4e12 * MI300X.clock_hz / 2.1e9) * 1e6
    assert e.bound == "simd_issue"
    assert e.compute_floor_us == pytest.approx(peak_us, rel=1e-3)
    assert e.predicted_us >= e.compute_floor_us and e.predicted_us >= e.hbm_floor_us


LOAD_LOOP = program("""
s_mov_b32 s2, 0
loop:
global_load_dword v1, v[2:3], off
s_add_u32 s2, s2, 1
s_cmp_lt_u32 s2, 10
s_cbranch_scc1 loop
s_endpgm
""")


def test_lines_per_execution_divide_a_loads_sampled_lines_by_its_sampled_executions():
    """Two sampled waves run the loop's load 10 and 3 times over 26 cache lines: 2 per execution,
    whatever number of grid waves the sample stands for (the search scales it by its own counts)."""
    load = LOAD_LOOP[1].address
    run = traced(LOAD_LOOP, [[0] + [1] * 10 + [2], [0] + [1] * 3 + [2]], (304, 1, 1),
                 memory={load: (13 * 256, 26, {0: 13 * 256})}, buffers=(13 * 256,), weight=50.0)
    e = estimate(LOAD_LOOP, kernel_with(), run, MI300X)
    assert e.lines_per_execution == {load: 2.0}


def test_a_wave_that_skips_a_load_is_not_charged_its_wait():
    """The merge after an `s_cbranch_execz` skip: each incoming edge is scheduled from its own
    predecessor, so only waves that issued the load wait for it (review finding #25)."""
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
    cfg = build_cfg(skip)
    entry, load, merge = (cfg.block_of[i] for i in (0, 2, 3))
    both = traced(skip, [[entry, merge], [entry, load, merge]], (1, 1, 1), block=(128, 1, 1))
    e = estimate(skip, kernel_with(), both, MI300X)
    wait = next(i for i in skip if i.mnemonic == "s_waitcnt")
    # Exactly one of the two waves stalls, for the load latency less what it issued since.
    assert e.per_pc[wait.address].stall == pytest.approx(DEFAULT_LATENCIES.hbm - 2 * 4, abs=8)
    assert e.max_wave_cycles - e.mean_wave_cycles > DEFAULT_LATENCIES.hbm / 2 - 20


def test_stores_drain_before_a_wave_ends():
    """A wave is done when its last store is acknowledged, whether or not it waits for it."""
    waited = program("global_store_dword v[2:3], v4, off\ns_waitcnt vmcnt(0)\ns_endpgm")
    unwaited = program("global_store_dword v[2:3], v4, off\ns_endpgm")
    lengths = [schedule_block(p, None, cost, ends_wave=True).length for p in (waited, unwaited)]
    assert lengths[1] == pytest.approx(DEFAULT_LATENCIES.store)
    assert lengths[0] >= lengths[1]


def test_dependent_mfma_chain_issues_back_to_back():
    """SrcC = the previous MFMA's vDst needs no wait states beyond the matrix core's passes (CDNA3
    hazard table; rocRoller XDLWrite94x): 8 passes = 32 cycles apart, not 4 * (8 + 4)."""
    chain = program("v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]\n"
                    "v_mfma_f32_32x32x8_f16 v[0:15], v[36:37], v[38:39], v[0:15]")
    slots = schedule_block(chain, None, cost).slots
    assert slots[1].stall == 32 - 4
    read = program("v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]\nv_add_f32_e32 v40, v0, v0")
    assert schedule_block(read, None, cost).slots[1].stall == 4 * (8 + 4) - 4  # a VALU read waits the result


@pytest.mark.parametrize("mfma, passes, held", [
    ("v_mfma_f32_32x32x2_f32 v[0:15], v32, v33, v[0:15]", 16, True),        # SGEMM: coexec false
    ("v_mfma_f64_16x16x4_f64 v[0:7], v[32:33], v[34:35], v[0:7]", 8, True),  # DGEMM: coexec false
    ("v_mfma_f32_32x32x4_xf32 v[0:15], v[32:33], v[34:35], v[0:15]", 8, False),
    ("v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]", 8, False),
])
def test_an_fp32_or_fp64_mfma_holds_independent_valu_work_for_its_passes_plus_two_slots(mfma, passes, held):
    """AMD Matrix Instruction Calculator (CDNA3: `coexec` false only for FP32/FP64 inputs) and LLVM PR
    #233721 (SGEMM and DGEMM hold every VALU until NumPasses + 2 slots): an independent VALU instruction
    waits; scalar work does not; an XDL MFMA lets it issue in the next slot."""
    slots = schedule_block(program(f"{mfma}\nv_add_f32_e32 v40, v41, v42\ns_add_u32 s2, s2, 1"), None, cost).slots
    assert slots[1].stall == (4 * (passes + 2) - 4 if held else 0)
    assert slots[2].stall == 0
    assert (slots[1].cause == "no VALU co-execution") == held


def test_the_valu_issue_term_counts_the_cycles_fp32_mfmas_run():
    """A loop of one 16-pass SGEMM and 8 independent VALU instructions: the SIMD's VALU issues nothing for
    the SGEMM's 16 slots, then its 8 (they cannot overlap); the f16 MFMA of the same passes (16-pass
    32x32x4_2b) lets the VALU work overlap, so MFMA's 16 slots bind."""
    def issue_cycles(mfma: str) -> float:
        loop = program("s_mov_b32 s2, 0\nloop:\n" + mfma + "\n" +
                       "".join(f"v_add_f32_e32 v{40 + k}, v{60 + k}, v{60 + k}\n" for k in range(8)) +
                       "s_add_u32 s2, s2, 1\ns_cmp_lt_u32 s2, 100\ns_cbranch_scc1 loop\ns_endpgm")
        run = traced(loop, [[0] + [1] * 100 + [2]], (304 * 8, 1, 1), weight=304 * 8 * 4)
        e = estimate(loop, kernel_with(vgprs=128), run, MI300X)
        _, units, _ = static_cost(loop, {pc: c.count for pc, c in e.per_pc.items()})  # what the search predicts from
        assert units["valu"] == pytest.approx(e.unit_cycles["valu"] * 304 * 8 * 4)
        return e.terms["simd_issue"] * MI300X.cus * MI300X.simds_per_cu / (304 * 8 * 4 * 100)
    assert issue_cycles("v_mfma_f32_32x32x2_f32 v[0:15], v32, v33, v[0:15]") == pytest.approx(4 * (16 + 8), rel=1e-3)
    assert issue_cycles("v_mfma_f32_32x32x4_2b_f16 v[0:31], v[32:33], v[34:35], v[0:31]") == \
        pytest.approx(4 * 16, rel=1e-3)


def test_instruction_level_constants():
    assert cost(parse_instruction("s_nop 7")).issue == 4 * 8      # N+1 wait states of one slot each
    assert cost(parse_instruction("s_nop 0")).issue == 4
    exp, add = cost(parse_instruction("v_exp_f32_e32 v1, v0")), cost(parse_instruction("v_add_f32_e32 v2, v1, v1"))
    assert (exp.issue, exp.latency) == (4, 16) and (add.issue, add.latency) == (4, 4)  # LLVM gfx940: 1 and 4 slots
    assert cost(parse_instruction("v_mul_lo_u32 v1, v2, v3")).issue == 4  # full rate on gfx940
    dep = program("v_exp_f32_e32 v1, v0\nv_add_f32_e32 v2, v1, v1")
    indep = program("v_exp_f32_e32 v1, v0\nv_add_f32_e32 v2, v3, v3")
    assert schedule_block(dep, None, cost).length == 16 + 4
    assert schedule_block(indep, None, cost).length == 8


def test_waitcnt_stall_and_latency_hiding_by_independent_work():
    slots = schedule_block(STREAM, None, cost).slots
    waits = [s for s in slots if s.stall]
    assert [s.cause for s in waits] == ["waitcnt smem", "waitcnt vmem_load"]
    assert waits[1].stall == DEFAULT_LATENCIES.hbm - 8  # the load issued two slots before the wait
    hidden = program("global_load_dword v1, v[2:3], off\n" + "v_add_f32_e32 v4, v4, v4\n" * 50
                     + "s_waitcnt vmcnt(0)\nv_add_f32_e32 v1, v1, v1")
    exposed = [hidden[0], *hidden[-2:]]
    stall = lambda ins: sum(s.stall for s in schedule_block(ins, None, cost).slots)  # noqa: E731
    assert stall(hidden) == stall(exposed) - 50 * 4


def test_more_vgprs_lower_occupancy_and_model_slower():
    fast = estimate(STREAM, kernel_with(vgprs=32), stream_launch(304 * 64), MI300X)
    slow_kernel = kernel_with(vgprs=256)
    slow = estimate(STREAM, slow_kernel, stream_launch(304 * 64), MI300X)
    assert fast.occupancy.waves_per_simd == 8 and slow.occupancy.waves_per_simd == 2
    assert slow.occupancy.limiter == "vgprs" and slow.terms["latency"] > fast.terms["latency"]


def test_occupancy_limits():
    assert occupancy(kernel_with(vgprs=512), (256, 1, 1), 0, MI300X).waves_per_simd == 1
    lds = occupancy(kernel_with(lds=40000), (256, 1, 1), 0, MI300X)
    assert lds.workgroups_per_cu == 1 and lds.limiter == "lds"
    assert occupancy(kernel_with(), (64, 1, 1), 0, MI300X).workgroups_per_cu == 32
    with pytest.raises(ModelError):
        occupancy(kernel_with(lds=70000), (256, 1, 1), 0, MI300X)


def test_one_wave_latency_is_hand_derived():
    """STREAM, one wave, every instruction one 4-cycle slot: s_load@0, v_lshlrev@4, s_waitcnt@8 until
    the scalar load's 20 cycles, issued 20-24; v_lshl_add@24, the vector load@28, v_lshl_add@32,
    s_waitcnt@36 until 28 + 650 = 678, issued 678-682; four v_max@682-698; the store@698, and the wave
    ends when it drains, 300 cycles later."""
    e = estimate(STREAM, kernel_with(), traced(STREAM, [[0]], (1, 1, 1), block=(64, 1, 1)), MI300X)
    assert e.max_wave_cycles == pytest.approx(698 + DEFAULT_LATENCIES.store)
    assert e.to_json()["unit"] == "model_us" and e.sampled_workgroups == 1


def test_estimate_round_trips_through_json_without_its_trace():
    import dataclasses
    import json

    from asmevo.launches import suite_launches
    from asmevo.model import Estimate, model_spec
    from asmevo.suites import load_suite

    problem = load_suite("kernelbench").problem("20_LeakyReLU")
    e = model_spec(CodeObject.from_path(problem.code_object), suite_launches(problem)[0].spec, MI300X)
    assert e.load_latency and e.per_pc and e.sample and e.lines_per_execution  # the fields a search reads
    text = json.dumps(e.to_dict(), sort_keys=True, allow_nan=False)
    back = Estimate.from_dict(json.loads(text))
    assert back == dataclasses.replace(e, traced=None)
    assert list(back.per_pc) == list(e.per_pc) and list(back.load_latency) == list(e.load_latency)
    assert back.rescaled(0.5, 0.9) == e.rescaled(0.5, 0.9)
def test_a_prediction_with_fewer_vgprs_recounts_the_rounds_of_resident_workgroups():
    waves = 304 * 64 * 4  # 64 workgroups per CU re-reading two small (L2-resident) buffers: latency-bound
    load, store = STREAM[4].address, STREAM[11].address
    launch = traced(STREAM, [[0]], (304 * 64, 1, 1), memory={load: (1024, 8, {0: 1024}), store: (1024, 8, {1: 1024})},
                    buffers=(1 << 16, 1 << 16), weight=waves)
    wide = estimate(STREAM, kernel_with(vgprs=256), launch, MI300X)     # 2 waves per SIMD: 32 rounds
    narrow = estimate(STREAM, kernel_with(vgprs=32), launch, MI300X)    # 8 waves per SIMD: 8 rounds
    assert wide.bound == "latency" and narrow.terms["latency"] == pytest.approx(wide.terms["latency"] / 4, rel=0.02)
    assert wide.rescaled(1.0, 1.0, vgprs=32) == pytest.approx(narrow.predicted_us, rel=0.02)
    assert wide.rescaled(1.0, 1.0) == pytest.approx(wide.predicted_us)
    assert wide.rescaled(1.0, 1.0, lines=4.0) > wide.predicted_us      # the cache-line terms follow `lines`


def test_resident_counts_match_occupancy():
    occ = occupancy(kernel_with(vgprs=80), (256, 1, 1), 0, MI300X)
    assert resident(80, occ.sgprs, occ.lds_bytes, 4, MI300X) == occ
    assert resident(72, occ.sgprs, occ.lds_bytes, 4, MI300X).waves_per_simd == 7


def test_a_taken_branch_costs_the_fetch_redirect_and_a_fall_through_its_issue_slot():
    """The skip branch of the wave that falls through costs one slot (4 cycles); the wave that takes
    it waits LLVM's 8 branch slots (32 cycles) in all before the merge block's first instruction."""
    skip = program("""
s_and_saveexec_b64 s[0:1], vcc
s_cbranch_execz merge
v_add_f32_e32 v1, v1, v1
merge:
s_or_b64 exec, exec, s[0:1]
s_endpgm
""")
    cfg = build_cfg(skip)
    entry, body, merge = (cfg.block_of[i] for i in (0, 2, 3))
    through = estimate(skip, kernel_with(), traced(skip, [[entry, body, merge]], (1, 1, 1)), MI300X)
    taken = estimate(skip, kernel_with(), traced(skip, [[entry, merge]], (1, 1, 1)), MI300X)
    branch = next(i for i in skip if i.mnemonic == "s_cbranch_execz")
    merge_first = next(i for i in skip if i.mnemonic == "s_or_b64")
    assert through.per_pc[branch.address].cycles == 4 and taken.per_pc[branch.address].cycles == 4
    assert taken.per_pc[merge_first.address].stall == 28 and taken.per_pc[merge_first.address].cause == "taken branch"
    assert through.per_pc[merge_first.address].stall == 0
    # taking the branch skips the 4-cycle add but waits 28: 24 cycles more than falling through
    assert taken.max_wave_cycles == pytest.approx(through.max_wave_cycles + 24)


def test_branches_issue_on_their_own_unit_not_the_scalar_alu():
    """Deleting a branch leaves a scalar-ALU-bound kernel's issue term alone (LLVM: HWBranch vs HWSALU)."""
    salu = "\n".join(["s_add_u32 s4, s4, 1"] * 16)
    with_branch = program(f"{salu}\ns_cbranch_scc1 end\nend:\ns_endpgm\n")
    without = program(f"{salu}\ns_endpgm\n")
    launch = lambda p: traced(p, [list(range(len(build_cfg(p).blocks)))], (304 * 8, 1, 1))
    a = estimate(with_branch, kernel_with(), launch(with_branch), MI300X)
    b = estimate(without, kernel_with(), launch(without), MI300X)
    assert a.terms["simd_issue"] == pytest.approx(b.terms["simd_issue"])


def test_static_cost_reads_the_processors_table():
    """The search's trace-free cost of an edit reads the kernel's processor: the f64 16x16x4 DGEMM holds the
    matrix core 16 passes per execution on gfx950, 8 on gfx942 (SIDPGFX950FullSpeedModel / gfx940's), and a
    CDNA4-only MFMA is refused as gfx942 code."""
    from asmevo.errors import UnsupportedInstruction
    from asmevo.model.costs import SLOT
    from asmevo.model.launch import static_cost
    dgemm = program("v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[0:7]\ns_endpgm")
    assert static_cost(dgemm, {0x1000: 10.0})[1]["mfma"] == 10 * 8 * SLOT
    assert static_cost(dgemm, {0x1000: 10.0}, processor="gfx950")[1]["mfma"] == 10 * 16 * SLOT
    cdna4 = program("v_mfma_f32_32x32x16_bf16 v[0:15], v[16:19], v[20:23], v[0:15]\ns_endpgm")
    assert static_cost(cdna4, {0x1000: 1.0}, processor="gfx950")[1]["mfma"] > 0
    with pytest.raises(UnsupportedInstruction):
        static_cost(cdna4, {0x1000: 1.0})


def test_static_cost_charges_every_execution_of_a_block():
    """The search's block counts are guesses for new blocks: with its exit guessed to run as often as the loop,
    the edge rules leave the loop entered once, not ten times. The rest goes on an edge into it (the back edge,
    the predecessor with executions left), so no prediction loses a loop's iterations (a layout edit of
    vllm_scaled_mm_int8's K loop was predicted 1.8x faster so, and verified no faster)."""
    loop = program("s_mov_b32 s0, 0\nhead:\ns_add_u32 s0, s0, 1\ns_cmp_lt_u32 s0, 10\ns_cbranch_scc1 head\n"
                   "s_endpgm")
    counts = lambda exits: {0x1000: 1.0, 0x1004: 10.0, 0x1010: exits}
    consistent, guessed = static_cost(loop, counts(1.0))[0], static_cost(loop, counts(10.0))[0]
    assert guessed >= consistent > static_cost(loop, {0x1000: 1.0, 0x1004: 1.0, 0x1010: 1.0})[0]


@pytest.mark.parametrize("workgroups", [64, 131072])  # latency-bound and HBM-bound
def test_an_estimate_at_another_clock_bandwidth_and_launch_cost_equals_a_fresh_one(workgroups):
    import dataclasses

    run = stream_launch(workgroups)
    e = estimate(STREAM, kernel_with(), run, MI300X)
    for ghz, tbps, launch in ((1.2, 2.6, 6.0), (2.1, 4.2, 2.0), (1.6, 3.5, 4.0)):
        g = dataclasses.replace(MI300X, clock_hz=ghz * 1e9, hbm_bytes_per_s=tbps * 1e12, launch_us=launch)
        fresh = estimate(STREAM, kernel_with(), run, g)
        assert e.at(ghz * 1e9, tbps * 1e12, launch) == pytest.approx(fresh.predicted_us, rel=1e-12)


LDS_READS = program("""
ds_read_b128 v[4:7], v0
ds_read_b128 v[8:11], v0 offset:16
s_waitcnt lgkmcnt(0)
v_add_f32_e32 v12, v4, v8
s_endpgm
""")


def test_the_static_lds_volume_at_a_launchs_own_counts_is_its_lds_term():
    """64 workgroups of 4 waves per CU, each wave reading 2 x 64 lanes x 16 B: 16 LDS cycles per wave at
    128 B per cycle, 4096 per CU, far above the rest; the search's trace-free LDS bytes at the estimate's own
    counts give that term, and `rescaled` scales it."""
    from asmevo.model.costs import LDS_BYTES_PER_CYCLE
    from asmevo.model.launch import static_cost
    waves = 304 * 64 * 4
    e = estimate(LDS_READS, kernel_with(), traced(LDS_READS, [[0]], (304 * 64, 1, 1), weight=waves), MI300X)
    assert e.bound == "lds" and e.terms["lds"] == pytest.approx(64 * 4 * 2 * 64 * 16 / 128)
    counts = {pc: c.count for pc, c in e.per_pc.items()}
    assert static_cost(LDS_READS, counts)[2] / (LDS_BYTES_PER_CYCLE * MI300X.cus) == pytest.approx(e.terms["lds"])
    assert e.rescaled(1.0, 1.0) == pytest.approx(e.predicted_us)
    assert e.rescaled(1.0, 1.0, lds=0.5) < e.predicted_us < e.rescaled(1.0, 1.0, lds=1.5)


def test_predicted_edge_counts_never_exceed_either_blocks_count():
    """A prediction has block counts only: a branch taken 9 times in 10 over a block run once gives the skipped
    block's edge its one execution (not the branch block's 10) and the taken edge the other 9."""
    from asmevo.model.launch import _edge_counts
    p = program("s_cmp_eq_u32 s0, 0\ns_cbranch_scc1 hot\ns_add_u32 s4, s4, 1\nhot:\ns_add_u32 s5, s5, 1\ns_endpgm\n")
    cfg = build_cfg(p)
    assert [(b.start, b.end) for b in cfg.blocks] == [(0, 2), (2, 3), (3, 5)]
    edges = _edge_counts(cfg, [10.0, 1.0, 10.0])
    assert (edges[(0, 1)], edges[(0, 2)], edges[(1, 2)]) == (1.0, 9.0, 1.0)
