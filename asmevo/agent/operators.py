"""The rewrite operators the search agent applies, each legal by construction and re-checked
(static checks on the result here, then every gate in gates.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from ..errors import AsmEvoError
from .body import Body, loop_header
from .ops_branch import remove_skip_branch, remove_skip_branches
from .ops_broadcast import broadcast_move, propagate_broadcast, propagate_broadcasts
from .ops_canon import CANONICALIZES, remove_canonicalize, remove_canonicalizes
from .ops_chain import chain_all_masked_regions, chain_masked_regions
from .ops_coalesce import coalesce_copies, vector_copy
from .ops_copies import accumulator_copy, remove_redundant_copies
from .ops_default import default_move, hoist_masked_default, hoist_masked_defaults
from .ops_const import constant_key, fuse_constant_fma, hoist_constant, hoist_vector_constant, vector_constant_key
from .ops_cleanup import propagate_move, remove_dead_write
from .ops_elements import repack_elements
from .ops_interleave import pack_elements
from .ops_kernarg import hoist_kernarg_load
from .ops_ladder import ladder_head, version_guard_ladder
from .ops_layout import branch_pair, fall_through_branch, loop_latch, placeable, swap_branch_pair, unroll_loop
from .ops_lds import merge_lds, merge_lds_block, mergeable
from .ops_list import list_schedule, list_schedules
from .ops_mfma import interleave_mfma
from .ops_mul import fuse_signed_multiplies, fuse_signed_multiply, signed_multiply
from .ops_nop import fill_nop, fill_nops
from .ops_pack import PACKED, pack_f32, pack_f32_block, pack_f32_chains, pack_f32_renamed, packable
from .ops_pipeline import global_load, pipeline_loop, pipeline_loop_deep, pipeline_loop_deepest
from .ops_prefetch import prefetch_loop_loads
from .ops_range_selects import range_compare, version_range_selects
from .ops_range import fuse_range_check, fuse_range_checks, range_check
from .ops_regions import merge_masked_region, merge_masked_regions
from .ops_regs import compact_vgprs
from .ops_rename import rename_sgprs
from .ops_row_version import version_row_loop
from .ops_counted_loop import version_counted_loop
from .ops_select import (all_or_nothing, fold_vcc_branch, fuse_select_and, fuse_select_ands, remove_scc_roundtrip,
                         remove_scc_roundtrips, scc_roundtrip, vcc_mask_branch)
from .ops_sched import hoist_invariant, hoist_load, hoist_load_renamed, hoist_loads, hoist_past_wait, speculate_kernarg_load
from .ops_waitcnt import hoist_to_dominator, hoist_to_predecessors, relax, sink
from .ops_version import full_exec_head, version_full_exec
from .ops_widen import widen_all_loads, widen_loads, widen_stores
from .ops_exp_bounds import version_exp_bounds
from .ops_rebase import rebase_row_addresses, row_group
from .ops_quotient import quotient_key, version_uniform_quotients
from .ops_zero_select import version_zero_selects
from .ops_widen_buffer import NARROW, widen_buffer_loads

Apply = Callable[[Body, int], "Body | None"]


def _at_item(fn: Callable[[Body, int], "Body | None"]) -> Apply:
    """Adapt an operator taking an item position to one taking an instruction index."""
    return lambda body, i: fn(body, body.pos[i])


@dataclass(frozen=True)
class Operator:
    """`once_per(body, i)`, when set, names what the result depends on: sites with the same value give
    the same result, so the operator is applied at the first of them only."""

    name: str
    applies: Callable[[Body, int], bool]
    apply: Apply
    doc: str
    once_per: Callable[[Body, int], object] | None = None


def _is_wait(body: Body, i: int) -> bool:
    return body.instructions[i].mnemonic == "s_waitcnt"


def _is_mem(body: Body, i: int) -> bool:
    return body.infos[i].family in ("smem", "flat", "mubuf", "ds")


def _is_skip(body: Body, i: int) -> bool:
    return body.instructions[i].mnemonic == "s_cbranch_execz"


def _is_nop(body: Body, i: int) -> bool:
    return body.instructions[i].mnemonic == "s_nop"


def _block(body: Body, i: int) -> int:
    return body.cfg.block_of[i]


def _is_global_load(body: Body, i: int) -> bool:
    return global_load(body.instructions[i], body.processor)


def _in_packable_block(body: Body, i: int) -> bool:
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    return any(packable(body, k) for k in range(blk.start, blk.end))


def _in_block_with(mnemonic: str) -> Callable[[Body, int], bool]:
    """Whether instruction i's block holds a `mnemonic` (a block of eight exp2 expansions spreads its cycles so thin
    that no instruction of one need be among the hottest sites)."""
    def holds(body: Body, i: int) -> bool:
        blk = body.cfg.blocks[body.cfg.block_of[i]]
        return any(body.instructions[k].mnemonic == mnemonic for k in range(blk.start, blk.end))
    return holds


def _is_saveexec(body: Body, i: int) -> bool:
    return body.instructions[i].mnemonic == "s_and_saveexec_b64"


def _is_alu(body: Body, i: int) -> bool:
    return body.infos[i].family in ("salu", "valu", "vopc")


OPERATORS: tuple[Operator, ...] = (
    Operator("relax_waitcnt", _is_wait, _at_item(relax), "raise a wait's counts to the largest legal values"),
    Operator("sink_waitcnt", _is_wait, _at_item(sink), "move a wait to its first consumer, split per consumer"),
    Operator("hoist_wait_to_predecessors", _is_wait, _at_item(hoist_to_predecessors),
             "wait at the end of each incoming path; drop waits that became redundant (e.g. behind stores)"),
    Operator("hoist_wait_to_dominator", _is_wait, _at_item(hoist_to_dominator),
             "wait at the end of the dominating block; drop waits that became redundant"),
    Operator("hoist_load", _is_mem, hoist_load, "issue a load as early as its block allows"),
    Operator("hoist_load_renamed", _is_mem, hoist_load_renamed,
             "hoist_load after moving the loaded value to unused VGPRs (a tuple as a whole; earlier uses of its "
             "registers stop holding it)"),
    Operator("hoist_loads", _is_mem, hoist_loads, "hoist_load_renamed (else hoist_load) at every load of the block",
             once_per=_block),
    Operator("speculate_kernarg_load", _is_mem, speculate_kernarg_load,
             "issue a kernarg scalar load in the dominating block, before the branch"),
    Operator("hoist_kernarg_load", _is_mem, hoist_kernarg_load,
             "issue a late kernarg scalar load with the entry block's, into fresh SGPRs"),
    Operator("interleave_alu", _is_alu, hoist_past_wait, "move independent ALU work before a wait"),
    Operator("hoist_loop_invariant", _is_alu, hoist_invariant, "move loop-invariant scalar work to the preheader"),
    Operator("remove_skip_branch", _is_skip, remove_skip_branch,
             "drop an s_cbranch_execz over a few instructions that are harmless with EXEC = 0"),
    Operator("remove_skip_branches", _is_skip, remove_skip_branches,
             "remove_skip_branch at every s_cbranch_execz of the innermost loop (or the whole body)",
             once_per=loop_header),
    Operator("fall_through_branch", placeable, fall_through_branch,
             "lay out a branch's target code right after it (the branch inverted, or gone if unconditional), so the "
             "path the profile takes falls through instead of redirecting fetch"),
    Operator("swap_branch_pair", branch_pair, swap_branch_pair,
             "turn `s_cbranch_C L1; s_branch L2` into `s_cbranch_notC L2; s_branch L1`, so a latch that mostly loops "
             "issues one branch per iteration"),
    Operator("version_guard_ladder", ladder_head, version_guard_ladder,
             "test a ladder of uniform row guards (s_add_i32 t, B, k; s_cmp_ge_i32 t, L; s_cbranch_scc1) once for its "
             "largest row and run the guarded work unguarded when every row is in range, the ladder kept for the rest"),
    Operator("version_full_exec", full_exec_head, version_full_exec,
             "test once whether every lane is in every mask of the masked regions a wave runs from a save to its "
             "end, and run them as one block with no saves, restores or skip branches when it is, the regions kept "
             "for the rest"),
    Operator("unroll_loop", loop_latch, unroll_loop,
             "unroll a one-block loop twice: the first copy leaves through the inverted branch, the second branches "
             "back, so the back edge is taken every other iteration"),
    Operator("fill_nop", _is_nop, fill_nop, "move an independent ALU instruction into a hazard nop's gap, shrink the nop"),
    Operator("fill_nops", _is_nop, fill_nops, "fill_nop at every s_nop of the block", once_per=_block),
    Operator("rename_sgprs", _is_nop, rename_sgprs,
             "give each v_cmp lane mask of the block its own SGPR pair and each scalar temporary its own SGPR, "
             "then fill_nops", once_per=_block),
    Operator("hoist_constant", lambda body, i: constant_key(body, i) is not None, hoist_constant,
             "define a scalar constant materialised in several places once, in the nearest common dominator",
             once_per=constant_key),
    Operator("hoist_vector_constant", lambda body, i: vector_constant_key(body, i) is not None,
             hoist_vector_constant, "write a vector constant written into VGPRs in several places (a move, or a v_not/v_bfrev "
             "of an inline constant) once, at the wave's start, into an unused VGPR its readers read", once_per=vector_constant_key),
    Operator("fuse_constant_fma", lambda body, i: body.instructions[i].mnemonic == "v_mov_b32_e32", fuse_constant_fma,
             "v_mov vD, K0 + v_fmac vD, K1, vX -> v_fmaak vD, K1, vX, K0 (a literal K1 from a VGPR set at the wave's start)"),
    Operator("pipeline_loop", _is_global_load, pipeline_loop,
             "issue a one-load loop's next load before waiting for the current one (unrolled twice, masked to the "
             "continuing lanes)"),
    Operator("prefetch_loop_loads", _is_global_load, prefetch_loop_loads,
             "issue a one-block K loop's global loads in the iteration before, right after the last read of the "
             "values they replace (offsets moved by the pointers' constant stride; no lanes in the last iteration; "
             "the first iteration's in the preheader)", once_per=loop_header),
    Operator("widen_loads", lambda body, i: body.instructions[i].mnemonic.startswith("global_load_dword"),
             widen_loads, "one dwordx2/x3/x4 load for the lanes that load all of K adjacent masked dwords (aligned, "
             "in bounds by construction); the narrow loads keep the other lanes (none when the K run one after "
             "another under one EXEC: the wide load replaces them)"),
    Operator("widen_all_loads", lambda body, i: body.instructions[i].mnemonic == "global_load_dword",
             widen_all_loads, "widen_loads at every dword load of the innermost loop", once_per=loop_header),
    Operator("widen_stores", lambda body, i: body.instructions[i].mnemonic.startswith("global_store_dword"),
             widen_stores, "one dwordx2/x3/x4 store for the lanes that store all of K adjacent masked dwords"),
    Operator("widen_buffer_loads", lambda body, i: body.instructions[i].mnemonic == NARROW, widen_buffer_loads,
             "one buffer_load_dword/x2/x4 for a run of 2/4/8 buffer_load_ushort of one lane's consecutive elements "
             "read as bf16 (v_lshlrev_b32 16), when every lane's offsets are consecutive, aligned and in range (checked "
             "at run time: else the narrow loads, their values packed)"),
    Operator("compact_vgprs", lambda body, i: any(k == "v" for k, _ in body.infos[i].defs), compact_vgprs,
             "re-allocate VGPR values below the next occupancy level (one more wave per SIMD)"),
    Operator("pipeline_loop_deep", _is_global_load, pipeline_loop_deep,
             "keep three of a loop's iterations' loads in flight: its loads, index, address and exit-mask updates "
             "run three iterations ahead for the lanes that will run them (unrolled four times)"),
    Operator("pipeline_loop_deepest", _is_global_load, pipeline_loop_deepest,
             "pipeline_loop_deep as deep as the free registers allow, up to eight iterations (seven ahead)"),
    Operator("version_row_loop", _is_global_load, version_row_loop,
             "test once per 16 (or 8) iterations of a row loop whether every active lane stays in it through them, and "
             "run all but the last without their index, compare, exit-mask and EXEC updates and back branch when so, "
             "every copy's loads issued first",
             once_per=loop_header),
    Operator("version_counted_loop", _is_saveexec, version_counted_loop,
             "test once per 4 iterations of a counted loop (a uniform counter to 0) with one masked region on a range "
             "of an index moving by a uniform step whether 4 remain and every lane's index stays in range through "
             "them, and run them without the mask, the EXEC save and restore and the counter update when so",
             once_per=_block),
    Operator("remove_dead_write", _is_alu, remove_dead_write, "delete an ALU write nobody reads"),
    Operator("propagate_move", _is_alu, propagate_move, "read the source of a move, delete the move"),
    Operator("propagate_broadcast", lambda body, i: broadcast_move(body, i) is not None, propagate_broadcast,
             "v_mov_b32 vA, sB: the block's reads of vA read sB (v_readlane vA lane 0 too), the move goes"),
    Operator("propagate_broadcasts", lambda body, i: broadcast_move(body, i) is not None, propagate_broadcasts,
             "propagate_broadcast at every such move of the innermost loop"),
    Operator("remove_canonicalize", lambda body, i: body.instructions[i].mnemonic in CANONICALIZES, remove_canonicalize,
             "delete a v_max_f32 vD, vS, vS (fcanonicalize) of a value no write can make a signalling NaN (or, "
             "flushing, a denormal)"),
    Operator("remove_canonicalizes", lambda body, i: body.instructions[i].mnemonic in CANONICALIZES,
             remove_canonicalizes, "remove_canonicalize at every canonicalize of the block", once_per=_block),
    Operator("pack_f32", packable, pack_f32,
             "two independent f32 adds, multiplies or FMAs (or moves) into an aligned VGPR pair -> one v_pk_*_f32 "
             "(v_pk_mov_b32; one issue slot for both)"),
    Operator("pack_f32s", packable, pack_f32_block, "pack_f32 at every instruction of the block", once_per=_block),
    Operator("pack_f32_renamed", packable, pack_f32_renamed,
             "pack_f32 for two isomorphic f32 ops whose results are no pair yet (the same computation on two "
             "elements): both results move into one free aligned VGPR pair, a shared literal into an SGPR"),
    Operator("pack_f32_chains", _in_packable_block, pack_f32_chains,
             "pack_f32_renamed at every instruction of the block", once_per=_block),
    Operator("pack_elements", lambda body, i: body.infos[i].base in PACKED, pack_elements,
             "interleave two copies of one computation in a block (the same code on two elements; the second's "
             "values renamed apart) pairwise, then pack_f32_chains the block", once_per=_block),
    Operator("repack_elements", _in_packable_block, repack_elements,
             "unpack the block's packed ops that compute one element's values, order the best-matching elements' "
             "chains pairwise, then pack_f32_chains the block (elements an earlier packing left unpaired)",
             once_per=_block),
    Operator("version_zero_selects", _in_block_with("v_exp_f32_e32"), version_zero_selects,
             "test once per block that no lane needs exp2's denormal range scaling (the compare each v_exp_f32's "
             "selects read is clear in every lane), then run the block with each expansion as one v_exp_f32; the "
             "block as it was otherwise", once_per=_block),
    Operator("version_exp_bounds", _in_block_with("v_exp_f32_e32"), version_exp_bounds,
             "test once per block that every lane's expf argument lies within its range guards (|x| <= 88.72: one "
             "compare per expf), then run the block with each guard's compares gone and selects as moves; the block "
             "as it was otherwise", once_per=_block),
    Operator("version_uniform_quotients", _in_block_with("v_mul_hi_u32"), version_uniform_quotients,
             "divisions by a uniform D of S | v (v below a power of two C): once per pass of the block dominating "
             "them, q = (S & -C) / D in scalar ALU, and when every lane's quotient is q each division is one "
             "v_mov_b32 of q; the blocks as they were otherwise", once_per=quotient_key),
    Operator("rebase_row_addresses", lambda body, i: row_group(body, i) is not None, rebase_row_addresses,
             "rows X + c of one matrix addressed by a 64-bit multiply each (v_mad_i64_i32, v_lshl_add_u64): test once "
             "that no X + c wraps (and X | c is X + c), then address each row from the one before by a uniform 64-bit "
             "delta; the rows as they were otherwise"),
    Operator("merge_lds", mergeable, merge_lds,
             "two ds_read/ds_write (b32 or b64) through one address VGPR -> one ds_read2/ds_write2 (st64 for far "
             "offsets; one issue slot and one lgkmcnt event fewer, the same LDS bytes)"),
    Operator("merge_lds_block", mergeable, merge_lds_block, "merge_lds at every LDS access of the block",
             once_per=_block),
    Operator("hoist_masked_default", lambda body, i: default_move(body, i) is not None, hoist_masked_default,
             "move the constant a masked load's masked-off lanes keep (v_mov_b32 vD, 0 before the masked region) "
             "out of its loop, when the mask is loop-invariant"),
    Operator("hoist_masked_defaults", lambda body, i: default_move(body, i) is not None, hoist_masked_defaults,
             "hoist_masked_default at every such constant of the loop"),
    Operator("merge_masked_region", _is_saveexec, merge_masked_region,
             "move the next masked region with the same lane mask into this one (its s_and_saveexec, skip branch "
             "and EXEC restore go) when nothing between depends on it"),
    Operator("merge_masked_regions", _is_saveexec, merge_masked_regions,
             "merge_masked_region at every masked region of the innermost loop"),
    Operator("chain_masked_regions", _is_saveexec, chain_masked_regions,
             "chain the masked regions that follow this one with only scalar work (or vector work that can run "
             "first) between: EXEC kept in one pair, each restore + s_and_saveexec becomes one s_and_b64 exec"),
    Operator("chain_all_masked_regions", _is_saveexec, chain_all_masked_regions,
             "chain_masked_regions from every masked region of the innermost loop", once_per=loop_header),
    Operator("remove_redundant_copies", lambda body, i: accumulator_copy(body, i) is not None,
             remove_redundant_copies, "delete a block's accumulator copies (v_accvgpr_read/write) whose destination "
             "already holds the source on every path (a loop's AGPR round trip), then the copies out left dead",
             once_per=_block),
    Operator("coalesce_copies", lambda body, i: vector_copy(body, i) is not None, coalesce_copies,
             "write each value a block copies (v_mov_b32 vA, vB, B dead after it) in B itself: its reads read B and "
             "the copy goes (a value in a register tuple moves with its tuple)", once_per=_block),
    Operator("version_range_selects", range_compare, version_range_selects,
             "test once whether every active lane is in every range mask (index vs uniform bound) the block's selects "
             "read, and run the rest of the block with each such select as a move of its true value (or none) when so, "
             "as it was for the rest", once_per=_block),
    Operator("fuse_select_and", lambda body, i: all_or_nothing(body, i) is not None, fuse_select_and,
             "s_cselect sX, -1, 0 + s_and sY, Z, sX -> s_cselect sY, Z, 0 (SCC and sX dead after the AND)"),
    Operator("fuse_select_ands", lambda body, i: all_or_nothing(body, i) is not None, fuse_select_ands,
             "fuse_select_and at every such select of the innermost loop"),
    Operator("fuse_signed_multiply", lambda body, i: signed_multiply(body, i) is not None, fuse_signed_multiply,
             "v_ashrrev + 2x v_mul_lo_u32 + v_mad_u64_u32 + v_add3_u32 (a 64-bit product of two sign-extended "
             "values) -> v_mad_i64_i32 (the high words proved sign extensions, the partial products read only there)"),
    Operator("fuse_signed_multiplies", lambda body, i: signed_multiply(body, i) is not None, fuse_signed_multiplies,
             "fuse_signed_multiply at every such multiply of the innermost loop"),
    Operator("fuse_range_check", lambda body, i: range_check(body, i) is not None, fuse_range_check,
             "v_cmp x >= 0 + v_cmp x < n + s_and_b64 -> v_cmp_gt_u32 max(n, 0), x (max set once where n is ready; "
             "the compares' masks and SCC dead after the AND)"),
    Operator("fuse_range_checks", lambda body, i: range_check(body, i) is not None, fuse_range_checks,
             "fuse_range_check at every range check of the innermost loop"),
    Operator("remove_scc_roundtrip", scc_roundtrip, remove_scc_roundtrip,
             "s_cselect_b32 sT, 1, 0 + s_cmp_lg_u32 sT, 1 + s_cbranch_scc1 -> s_cbranch_scc0 (sT dead after)"),
    Operator("remove_scc_roundtrips", scc_roundtrip, remove_scc_roundtrips,
             "remove_scc_roundtrip at every such branch of the innermost loop"),
    Operator("fold_vcc_branch", vcc_mask_branch, fold_vcc_branch,
             "s_and_b64 vcc, exec, sX + s_cbranch_vcc(n)z on an all-or-nothing sX (a select or a constant) under the "
             "wave's starting EXEC -> s_cbranch_scc0/1 on the select's SCC, s_branch or nothing (VCC dead after)"),
    Operator("list_schedule", lambda body, i: True, list_schedule,
             "reorder a block's instructions (registers, memory order, waits and fences kept) so independent work "
             "issues while a conversion's, transcendental's or MFMA's result is in flight", once_per=_block),
    Operator("list_schedules", lambda body, i: True, list_schedules, "list_schedule at every block of the body",
             once_per=lambda body, i: 0),
    Operator("interleave_mfma", lambda body, i: body.infos[i].family == "mfma", interleave_mfma,
             "sink a loop's MFMA chain past its exit branch (a copy on the exit path) and interleave it with the "
             "next tile's skip-branch-free address and load work", once_per=_block),
)
BY_NAME = {op.name: op for op in OPERATORS}


@dataclass(frozen=True)
class Proposal:
    """A rearranged body from applying `operator` at instruction `site` of the parent."""

    body: Body
    operator: str
    site: int
    note: str


def propose(body: Body, sites: list[int], operators: tuple[Operator, ...] = OPERATORS) -> Iterator[Proposal]:
    """Every operator applied at every site where it applies (results are legal for the waitcnt
    analysis by construction, and keep every raw-words instruction's bytes, `Body.keeps_raw`; callers
    run the full static checks, `Body.no_worse`, on the ones they keep)."""
    done: set[tuple[str, object]] = set()
    for i in sites:
        for op in operators:
            if not op.applies(body, i):
                continue
            if op.once_per is not None:
                key = (op.name, op.once_per(body, i))
                if key in done:
                    continue
                done.add(key)
            try:
                new = op.apply(body, i)
            except AsmEvoError:
                continue
            if new is not None and not new.same_code(body) and new.keeps_raw(body):
                yield Proposal(new, op.name, i, f"{op.name} at `{body.instructions[i].text()}` "
                                                f"(line {body.pos[i] + body.offset})")
