"""The search agent: deterministic for a seed, improves a kernel with waits on its stores (timed on its
largest verify shape here: no timing launch given), and the final best is re-verified with the
held-out shape."""
from __future__ import annotations

from collections import Counter

import pytest

from asmevo.agent.optimize import optimize
from asmevo.suites import load_suite
from asmevo.launches import suite_launches


def _run(tmp_path, name: str, seed: int):
    p = load_suite("kernelbench").problem("20_LeakyReLU")
    launches = suite_launches(p)[:1]
    heldout = [vl for vl in suite_launches(p, heldout=True) if vl.label.endswith(":h_5x777")]
    return optimize(p.code_object, launches, heldout=heldout, outdir=tmp_path / name, budget=2, seed=seed)


def _trace(res):
    return [(c.parent, c.operator, c.diff, c.status, c.cycles) for c in res.lineage.candidates]


def test_deterministic_for_a_seed_and_improves(tmp_path):
    a, b = _run(tmp_path, "a", 3), _run(tmp_path, "b", 3)
    assert _trace(a) == _trace(b)
    assert a.improved and a.speedup > 1.05
    assert a.lineage.heldout["accepted"] == a.best.id
    assert a.lineage.heldout["attempts"][0]["kind"] == "equivalent"
    assert any(label.endswith(":h_5x777") for label in a.lineage.heldout["launches"])
    assert a.paths["code_object"].read_bytes() == a.best.data
    assert a.paths["diff"].read_text().startswith("--- a/kernel.s")
    assert sum(1 for c in a.lineage.candidates if c.verdict is not None) <= 2


def test_probe_launches_only_confirm_the_winner(tmp_path):
    p = load_suite("kernelbench").problem("20_LeakyReLU")
    verify_shape = suite_launches(p)[:1]
    probe = [vl for vl in suite_launches(p, probes=True) if vl.spec.probe]
    res = optimize(p.code_object, verify_shape + probe, outdir=tmp_path / "probe", budget=1, seed=3)
    assert res.lineage.config["launches"] == [verify_shape[0].label]  # never profiled or searched on
    assert res.lineage.heldout["launches"] == [verify_shape[0].label, probe[0].label]
    assert res.lineage.heldout["attempts"][0]["kind"] == "equivalent"


# A gfx950 kernel of CDNA4-only instructions (bf16 packs, lane-swap permutes) and a scaled fp4 MFMA kept as
# `.long` words (its prefix sets bits 0x6000, which no LLVM syntax sets); its `s_nop`s are more than its gfx950
# hazards need, so the search has something to find.
GFX950_BODY = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_cvt_f32_u32_e32 v2, v0
  v_mov_b32_e32 v140, 0x7f7f7f7f
  v_mov_b32_e32 v136, 0x80808080
  v_mov_b32_e32 v30, 0x9e3779b1
  v_mul_lo_u32 v72, v0, v30
  v_add_u32_e32 v73, 0x1234567, v72
  v_xor_b32_e32 v74, v72, v73
  v_add_u32_e32 v75, v74, v0
  v_mov_b32_e32 v31, 0x85ebca6b
  v_mul_lo_u32 v8, v0, v31
  v_xor_b32_e32 v9, 0x5555, v8
  v_add_u32_e32 v10, v9, v72
  v_xor_b32_e32 v11, v10, v74
  v_accvgpr_write_b32 a0, 0
  v_accvgpr_write_b32 a1, 0
  v_accvgpr_write_b32 a2, 0
  v_accvgpr_write_b32 a3, 0
  s_nop 1
  .long 0xd3ac6000, 0x0003118c, 0xd3ad8c00, 0x84021148
  v_add_f32_e32 v3, 1.0, v2
  v_mul_f32_e32 v4, v2, v2
  v_cvt_pk_bf16_f32 v16, v2, v3
  v_cvt_pk_bf16_f32 v18, v4, v2
  v_cvt_pk_bf16_f32 v17, v3, v4
  v_cvt_pk_bf16_f32 v19, v2, v2
  s_nop 1
  v_permlane16_swap_b32_e32 v16, v18
  s_nop 1
  v_permlane32_swap_b32_e32 v17, v19
  v_lshlrev_b32_e32 v1, 5, v0
  s_nop 7
  v_accvgpr_read_b32 v20, a0
  v_accvgpr_read_b32 v21, a1
  v_accvgpr_read_b32 v22, a2
  v_accvgpr_read_b32 v23, a3
  s_waitcnt lgkmcnt(0)
  global_store_dwordx4 v1, v[16:19], s[4:5]
  global_store_dwordx4 v1, v[20:23], s[4:5] offset:16
  s_endpgm"""


def test_a_gfx950_kernel_gets_verified_candidates(tmp_path):
    """The search reads a gfx950 kernel with gfx950's table, hazards and cost model (MI355X): proposals, each
    through every gate, the winner faster and still carrying the scaled MFMA's original words."""
    from cotools import gfx950_code_object
    from asmevo.launches import launch_from_dict
    co = gfx950_code_object(tmp_path / "k.co", GFX950_BODY)
    launch = launch_from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1],
                               "args": [{"buffer": "out", "dtype": "uint32", "shape": [512], "init": "zeros"}]},
                              label="k64")
    res = optimize(co, [launch], outdir=tmp_path / "out", budget=2, gpu_name="mi355x")
    tried = res.lineage.candidates[1:]
    assert tried and all(c.status == "verified" for c in tried)
    assert res.improved and res.lineage.unit == "model_us"
    assert ".long 0xd3ac6000, 0x0003118c, 0xd3ad8c00, 0x84021148" in res.best.source
    assert res.best.data.count(bytes.fromhex("0060acd38c110300008cadd348110284")) == 1  # the words, bits 0x6000 set


@pytest.mark.slow
def test_aiter_gfx950_f4gemm_gets_verified_candidates(tmp_path, wheel):
    """AITer's gfx950 MXFP4 GEMM (scaled MFMAs, 508 of their words kept as `.long` lines, permlane swaps) gets
    proposals and a verified candidate, timed on its largest verify shape (MI355X), that keeps every raw word."""
    suite = load_suite("aiter_gfx950")
    suite.prepare()
    p = suite.problem("f4gemm")
    res = optimize(p.code_object, suite_launches(p), outdir=tmp_path / "f4gemm", budget=1, gpu_name="mi355x")
    k0, tried = res.lineage.candidates[0], res.lineage.candidates[1:]
    assert any(c.status == "verified" for c in tried)
    raw = Counter(line.split(";")[0].strip() for line in k0.source.splitlines() if line.strip().startswith(".long"))
    assert sum(raw.values()) == 508
    for cand in tried:  # moved or copied, never rewritten
        assert not raw - Counter(line.split(";")[0].strip() for line in cand.source.splitlines())


LDS_KERNEL = [
    "ds_read_b32 v20, v4", "ds_read_b32 v21, v4 offset:4", "ds_read_b128 v[24:27], v4 offset:16",
    "s_waitcnt lgkmcnt(0)", "v_add_f32_e32 v30, v20, v21", "v_add_f32_e32 v31, v24, v27", "s_endpgm"]


def _lds_heat(workgroups: int):
    """K0 of LDS_KERNEL as the search sees it: its body and its heat on a launch of `workgroups` x 4 waves."""
    from pathlib import Path

    from asmevo.agent.search import heat_of
    from asmevo.codeobj import CodeObject
    from asmevo.model import estimate
    from asmevo.profile import Profile
    from asmevo.target import gpu
    from agenttools import body_of
    from modeltools import program, traced

    kernel = CodeObject.from_path(Path(__file__).parents[2] / "benchmarks/kernelbench/19_ReLU/kernel.co").kernels[0]
    instrs = program("\n".join(LDS_KERNEL))
    e = estimate(instrs, kernel, traced(instrs, [[0]], (workgroups, 1, 1), weight=4 * workgroups), gpu("mi300x"))
    body = body_of(LDS_KERNEL)
    return body, e, heat_of(body, Profile("k", e, instrs, []), e.predicted_us)


def _edited(body, drop: tuple[str, ...] = (), insert: dict[int, str] | None = None):
    """`body` (its own instruction objects, as an operator's result keeps them) without the lines containing any
    of `drop`, with `insert`'s lines placed before the given item positions."""
    from asmevo.agent.body import make_item
    items = []
    for k, it in enumerate(body.items):
        if k in (insert or {}):
            items.append(make_item(insert[k]))
        if not any(d in it.text for d in drop):
            items.append(it)
    return body.replace(items)


def test_an_lds_bound_prediction_follows_the_lds_bytes_an_edit_moves():
    """On an LDS-bound launch, dropping an LDS read (and its use) predicts less time and adding one more; merging
    the two b32 reads into one ds_read2_b32 moves the same bytes, so the LDS term, and the prediction, stay."""
    from asmevo.agent.search import predict
    body, e, heat = _lds_heat(304 * 64)
    assert e.bound == "lds"
    base = predict(body, heat)
    assert base == pytest.approx(e.predicted_us)
    fewer = _edited(body, drop=("v[24:27]", "v24"))
    more = _edited(body, insert={3: "ds_read_b128 v[32:35], v4 offset:32"})
    merged = _edited(body, drop=("v20, v4", "v21, v4"), insert={0: "ds_read2_b32 v[20:21], v4 offset1:1"})
    lds_us = e.predicted_us - e.overhead_cycles / e.model_cycles * e.predicted_us
    assert predict(fewer, heat) == pytest.approx(base - lds_us * 16 / 24)  # 8 of 24 bytes per lane left
    assert predict(more, heat) == pytest.approx(base + lds_us * 16 / 24)
    assert predict(merged, heat) == pytest.approx(base)


def test_a_latency_bound_prediction_ignores_the_lds_term(monkeypatch):
    """One workgroup: the latency term binds, and a prediction is what it would be with the LDS term left as it
    was (the prediction before the LDS term existed)."""
    from asmevo.agent.search import predict
    from asmevo.model import Estimate
    body, e, heat = _lds_heat(1)
    assert e.bound == "latency"
    edits = [_edited(body, drop=("v[24:27]", "v24")),
             _edited(body, drop=("v20, v4", "v21, v4"), insert={0: "ds_read2_b32 v[20:21], v4 offset1:1"})]
    with_lds = [predict(b, heat) for b in edits]
    rescaled = Estimate.rescaled
    monkeypatch.setattr(Estimate, "rescaled", lambda self, lat, iss, lines=1.0, vgprs=None, lds=1.0:
                        rescaled(self, lat, iss, lines, vgprs))
    assert with_lds == [predict(b, heat) for b in edits]
    assert all(p < e.predicted_us for p in with_lds)  # fewer issue slots on the critical path


def test_the_budget_goes_to_slower_branches_once_the_best_are_exhausted(monkeypatch):
    """Best-first: the next proposal comes from the fastest verified candidate that has one left (P1's child Q
    before K0's other first steps), and once the faster candidates have none, K0's remaining first steps are still
    tried - all five here, though four verified candidates are faster than K0 - until none is left."""
    from types import SimpleNamespace

    from asmevo.agent import search as search_mod

    class Code:
        def __init__(self, cycles: float):
            self.cycles = cycles

        def edit(self, parent, operator, note):
            return self

        def no_worse(self, parent):
            return True

    queues = {"K0": [f"P{k}" for k in range(1, 6)], "P1": ["Q"]}
    cycles = {"P1": 90.0, "P2": 91.0, "P3": 92.0, "P4": 93.0, "P5": 94.0, "Q": 85.0}
    k0 = SimpleNamespace(id=0, parent=None, verdict="equivalent", verified=True, cycles=100.0, source="k0", name="K0")
    lineage = SimpleNamespace(candidates=[k0], get=lambda cid: lineage.candidates[cid])

    def evaluate(parent, edit, window, agent, step):
        cand = SimpleNamespace(id=len(lineage.candidates), parent=parent, verdict="equivalent", verified=True,
                               cycles=edit.cycles, source="", name=edit.name)
        lineage.candidates.append(cand)
        return SimpleNamespace(summary=lambda: cand.name)

    ev = SimpleNamespace(lineage=lineage, release_padding=lambda *a, **k: None, seen=lambda source, edit: False,
                         source_of=lambda cid: SimpleNamespace(body=(0, 10)), evaluate=evaluate, best=k0)

    def expand(ev_, cid, config, rng):
        queue = []
        for name in queues.get(lineage.candidates[cid].name, []):
            code = Code(cycles[name])
            code.name = name
            queue.append((cycles[name], 0.0, SimpleNamespace(body=code, operator=name, note="")))
        return search_mod.Node(cid, None, None, None, queue)

    monkeypatch.setattr(search_mod, "expand", expand)
    search_mod.search(ev, search_mod.SearchConfig(budget=16, explore=0.0))
    tried = [(c.name, lineage.candidates[c.parent].name) for c in lineage.candidates[1:]]
    assert tried == [("P1", "K0"), ("Q", "P1"), ("P2", "K0"), ("P3", "K0"), ("P4", "K0"), ("P5", "K0")]


def test_a_resumed_search_takes_its_expansions_from_the_store(tmp_path, monkeypatch):
    """The second search, with the first one's stored expansions, tries the same candidates in the same
    order without proposing anything; a store for other search code (another version) holds none of them."""
    from artifacts import Store
    from artifacts.expansions import ExpansionStore
    from asmevo.agent import search as search_mod

    p = load_suite("kernelbench").problem("20_LeakyReLU")
    store = Store(tmp_path / "store")

    def run(name: str, version: str):
        return optimize(p.code_object, suite_launches(p)[:1], outdir=tmp_path / name, budget=3, seed=1,
                        expansions=ExpansionStore(store, version))

    first = run("first", "v1")
    stored = sum(1 for name in store.refs.iterkeys() if name.startswith("search-expansion/"))
    assert stored >= 1
    assert {store.record(s).kind for s in store.records.iterkeys()} >= {"search_expansion", "search_expansion_request"}

    def no_proposals(*args, **kwargs):
        raise AssertionError("a stored expansion was proposed again")

    monkeypatch.setattr(search_mod, "propose", no_proposals)
    again = run("again", "v1")
    assert _trace(again) == _trace(first) and again.improved
    with pytest.raises(AssertionError, match="proposed again"):
        run("other", "v2")
    store.close()


def test_an_indexed_write_does_not_inflate_the_predicted_allocation():
    """M0-indexed operands may reach any VGPR, so the register facts widen them to the whole file; the
    rebuild allocates what the operands name (the declared count covers the rest), and so does a
    prediction: AITer topksoftmax's edits were all predicted at 256 VGPRs (one wave per SIMD) before."""
    from asmevo.agent.search import _vgpr_allocation
    from agenttools import body_of

    indexed = body_of(["s_set_gpr_idx_on s2, gpr_idx(DST)", "v_mov_b32_e32 v9, v0", "s_set_gpr_idx_off",
                       "global_store_dword v[0:1], v9, off", "s_endpgm"])
    assert ("v", 200) in indexed.infos[1].defs  # the register facts' widening
    assert _vgpr_allocation(indexed) == 16  # v0..v9 named, in granules of 8


def test_a_renamed_load_alone_in_its_block_keeps_its_predicted_lines_and_executions():
    """67_conv's K0: each masked load is alone in its block. Renaming its destination (as packing does) leaves
    its traffic and its executions, so the prediction's line and latency ratios stay 1 (a block with no
    instruction of the parent's counted 0 executions, a renamed load's block included)."""
    from agenttools import evaluator
    from asmevo.agent.ops_rename import free_vgprs
    from asmevo.agent.search import heat_of, ratios
    from asmevo.agent.webs import webs_of

    ev = evaluator("67_conv_standard_1D", gpu="mi308x")
    body = ev.body_of(0)
    heat = heat_of(body, ev.profile(0), ev.lineage.get(0).cycles)
    cfg, webs = body.cfg, webs_of(body)
    alone = [i for i, x in enumerate(body.instructions) if x.mnemonic == "global_load_dword"
             and cfg.blocks[cfg.block_of[i]].end - cfg.blocks[cfg.block_of[i]].start == 1
             and not webs.def_web[(i, body.infos[i].dst[0].index)].pinned]
    assert len(alone) >= 8
    moves = {id(webs.def_web[(i, body.infos[i].dst[0].index)]): v for i, v in zip(alone, free_vgprs(body, [1] * 8))}
    r = ratios(webs.renamed(moves), heat)
    assert r["lines"] == pytest.approx(1.0) and r["latency"] == pytest.approx(1.0, abs=1e-3)


def test_a_widening_that_pays_only_after_packing_is_searched_with_the_packing():
    """67_conv at its bench shape on MI308X: once its masked regions merge, widening the three loads of two
    rows to one dwordx3 each changes no predicted time (the VALU binds) but cuts the cache lines that bind once its
    FMAs pack, and packing first pins the loaded values in pairs no dwordx3 can write (the search without that
    lookahead ends at 1.439x, packing alone). The search follows the widening greedily and tries it with the
    packing as one proposal (versioning its loop's regions, which the full search may also take, left out): with
    each load costed at its own latency the widening of one row's loads (`widen_loads`) ranks first, 1.572x."""
    from asmevo.agent.gates import Evaluator
    from asmevo.agent.operators import OPERATORS
    from asmevo.agent.search import SearchConfig, search
    from asmevo.launches import timing_launch

    p = load_suite("kernelbench").problem("67_conv_standard_1D")
    ev = Evaluator(p.code_object, suite_launches(p), timing=timing_launch(p)[0], gpu_name="mi308x")
    operators = tuple(op for op in OPERATORS if op.name != "version_full_exec")
    best = search(ev, SearchConfig(budget=4, operators=operators))
    assert best.operator.startswith(("widen_loads+pack_f32_chains", "widen_all_loads+pack_f32_chains"))
    assert best.speedup > 1.5
    assert "global_load_dwordx3" in best.source


def test_a_lookahead_schedules_a_versioned_copy_at_its_own_executions():
    """22_Tanh at its bench shape on MI308X: `version_full_exec` after widening the stores keeps both versions'
    instructions as the same objects, each version's described with its own executions; a schedule of the fast
    version, predicted from there in a lookahead, keeps those descriptions occurrence by occurrence. Matched by
    object alone, every copy took the slow version's few executions: 4033 predicted (the HBM floor) against 6915
    verified."""
    from agenttools import evaluated, evaluator
    from asmevo.agent.ops_list import list_schedule
    from asmevo.agent.ops_version import version_full_exec
    from asmevo.agent.ops_widen import widen_stores
    from asmevo.agent.search import _rebase, heat_of, predict

    ev = evaluator("22_Tanh", gpu="mi308x")
    body = ev.body_of(0)
    heat = heat_of(body, ev.profile(0), ev.lineage.get(0).cycles)
    widened = widen_stores(body, next(i for i, x in enumerate(body.instructions) if x.mnemonic == "global_store_dword"))
    versioned = next(v for i in range(len(widened.instructions)) if (v := version_full_exec(widened, i)) is not None)
    block = max(versioned.cfg.blocks, key=lambda b: b.end - b.start)
    scheduled = _rebase(list_schedule(versioned, block.start), versioned, heat)
    cand = evaluated(ev, body, scheduled, "widen_stores+version_full_exec+list_schedule")
    assert predict(scheduled, heat) == pytest.approx(cand.cycles, rel=0.002)


def test_a_gain_below_the_minimum_is_not_tried():
    """35_GroupNorm_ at its bench shape on MI308X: after its first step (`pack_f32_chains`, 3.8 %) what is left
    saves one cold instruction each, 0.0004-0.0012 % of the time. Those were tried one after another (15 of the 16
    candidates); below MIN_GAIN none is, and the second candidate is another first step of K0's."""
    from agenttools import evaluator
    from asmevo.agent.search import MIN_GAIN, SearchConfig, search

    ev = evaluator("35_GroupNorm_", gpu="mi308x")
    search(ev, SearchConfig(budget=2))
    first, second = ev.lineage.candidates[1:3]
    assert first.verified and (ev.baseline.cycles - first.cycles) / ev.baseline.cycles > MIN_GAIN
    assert second.parent == 0
