"""Known strictness findings of the wheel's one-stage fused-MoE objects without a suite problem
(`fmoe_bf16_pertokenFp8_g1u1_vs_{silu,gelu}_1tg[_ps]_32xN.co`, run by MI355X's tuned_fmoe.csv rows).

Every gfx950 build is its gfx942 twin's text but for the two `v_mov_b32` that load the fp8 maximum of the
intermediate's re-quantisation (0x43700000 = 240.0, FNUZ E4M3, becomes 0x43e00000 = 448.0, OCP E4M3), so
the addresses below hold for both. The static checks (asmevo.isa.waitcnt, asmevo.isa.hazards, on gfx950)
find exactly these (tests/calibrate/test_fmoe_findings.py); they are missing waits in the shipped code,
not emulator artefacts:

- LDS reads retired by no wait (every non-persistent object): the down projection's epilogue reads its
  packed bf16 partial sums back from LDS (`ds_read_b32 v64` ... `v79`) and adds them into `out` with 16
  `global_atomic_pk_add_bf16` whose data operands are those registers, with only `s_waitcnt vmcnt`
  between. A DS read counts on lgkmcnt alone (gfx9/gfx950 have no separate DS counter), and LLVM's
  SIInsertWaitcnts waits on it before any VGPR operand that reads it (`determineWait(DS_CNT)` for
  every VGPR operand; "RAW always needs an s_waitcnt"). The persistent (`_ps`) builds of the same
  kernels have `s_waitcnt lgkmcnt(0)` between those reads and their atomics.
- A dead load raced by scratch use (the 32x192 objects): `buffer_load_dword v44` of a per-channel
  scale at lane offset v11 (= v10 + 1024 bytes), a value no instruction reads (the 32x256 build loads
  it into v45, which is never read), is still outstanding when the LDS address set-up uses v44 as
  scratch (`v_lshrrev_b32` / `v_and_b32` write it, `v_mul_i32_i24` read it); the first wait retiring it
  comes after. A VALU write over a pending VMEM load needs a wait (SIInsertWaitcnts: "WAW needs an
  s_waitcnt unless the previous write and this write are the same type of VMEM instruction").
- Wait states (`hazard`, LLVM's gfx950 GCNHazardRecognizer): salu-m0 (`s_add_u32 m0` right before
  `buffer_load_dword ... lds`), valu-sgpr-valu (`v_cmp_u_f32_e64` SGPR masks read by
  `v_cndmask_b32_e64` one instruction later) and, in the `_ps` builds, soft-clause
  (`s_load_dword s50, s[50:51]` at 0x3058 follows `s_load_dword s66, s[50:51]` in one SMEM clause and
  overwrites the base both read: XNACK replay; the objects' target leaves XNACK unspecified, which LLVM
  treats as enabled).

The emulator computes each program-order result, which is the intended one.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Shipped:
    """Where one object's findings are. `epilogues`: (ds_read_b32 v64, the first of its 16 atomics) of
    each epilogue copy; `dead_load`: (buffer_load_dword v44, the first and last scratch use of v44, the
    first s_waitcnt retiring the load); `soft_clause`: a `_ps` build (its SMEM clause at 0x3058)."""

    epilogues: tuple[tuple[int, int], ...] = ()
    dead_load: tuple[int, int, int, int] | None = None
    soft_clause: bool = False


SOFT_CLAUSE_PC = 0x3058
ATOMICS_PER_EPILOGUE = 16

SHIPPED: dict[str, Shipped] = {
    "fmoe_bf16_pertokenFp8_g1u1_vs_gelu_1tg_32x192.co": Shipped(
        ((0x4cc8, 0x553c), (0x565c, 0x5ed0), (0x7630, 0x7e94), (0x7fc4, 0x8828)), (0x3444, 0x3608, 0x3630, 0x3648)),
    "fmoe_bf16_pertokenFp8_g1u1_vs_gelu_1tg_32x256.co": Shipped(
        ((0x52b8, 0x5bd8), (0x5cf8, 0x6618), (0x8304, 0x8c14), (0x8d44, 0x9654))),
    "fmoe_bf16_pertokenFp8_g1u1_vs_gelu_1tg_32x384.co": Shipped(
        ((0x5e98, 0x6910), (0x6a30, 0x74a8), (0x9cac, 0xa714), (0xa844, 0xb2ac))),
    "fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_32x192.co": Shipped(
        ((0x4b48, 0x53bc), (0x54dc, 0x5d50), (0x7330, 0x7b94), (0x7cc4, 0x8528)), (0x3444, 0x3608, 0x3630, 0x3648)),
    "fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_32x384.co": Shipped(
        ((0x5b98, 0x6610), (0x6730, 0x71a8), (0x96ac, 0xa114), (0xa244, 0xacac))),
    "fmoe_bf16_pertokenFp8_g1u1_vs_gelu_1tg_ps_32x192.co": Shipped(
        dead_load=(0x3590, 0x3754, 0x377c, 0x3794), soft_clause=True),
    "fmoe_bf16_pertokenFp8_g1u1_vs_gelu_1tg_ps_32x256.co": Shipped(soft_clause=True),
    "fmoe_bf16_pertokenFp8_g1u1_vs_gelu_1tg_ps_32x512.co": Shipped(soft_clause=True),
    "fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_ps_32x128.co": Shipped(soft_clause=True),
    "fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_ps_32x256.co": Shipped(soft_clause=True),
    "fmoe_bf16_pertokenFp8_g1u1_vs_silu_1tg_ps_32x512.co": Shipped(soft_clause=True),
}


def _hex(addrs) -> str:
    return ", ".join(f"0x{a:x}" for a in addrs)


def reasons(s: Shipped) -> dict[str, str]:
    """{finding kind: why the shipped code triggers it} for one object's `Shipped`."""
    rules = "salu-m0: s_add_u32 m0 right before buffer_load_dword ... lds; valu-sgpr-valu: v_cmp_u_f32_e64 SGPR " \
            "masks read by v_cndmask_b32_e64 one instruction later"
    if s.soft_clause:
        rules += (f"; soft-clause: s_load_dword s50, s[50:51] at 0x{SOFT_CLAUSE_PC:x} follows s_load_dword s66, "
                  f"s[50:51] in one SMEM clause and overwrites the base both read (XNACK replay)")
    out = {"hazard": f"the shipped assembly lacks wait states LLVM's gfx950 hazard recognizer requires ({rules}); "
                     f"the emulator computes the architecturally intended result"}
    waits = []
    if s.epilogues:
        reads, atomics = zip(*s.epilogues)
        waits.append(
            f"the down projection's epilogue reads its packed bf16 partial sums from LDS (ds_read_b32 v64 ... v79 "
            f"from {_hex(reads)}) and adds them into out with global_atomic_pk_add_bf16 (data v64 ... v79, "
            f"{ATOMICS_PER_EPILOGUE} from each of {_hex(atomics)}) with only s_waitcnt vmcnt between: DS reads "
            f"count on lgkmcnt, which LLVM's SIInsertWaitcnts waits on before any VGPR read (the _ps builds wait "
            f"lgkmcnt(0) there); correct only if the reads have returned by timing")
    if s.dead_load:
        load, first, last, wait = s.dead_load
        waits.append(
            f"buffer_load_dword v44 at 0x{load:x} (a scale at lane offset v11 that nothing reads) is outstanding "
            f"while the LDS address set-up uses v44 as scratch (0x{first:x}-0x{last:x}: v_lshrrev_b32 / v_and_b32 "
            f"write it, v_mul_i32_i24 read it) until s_waitcnt vmcnt at 0x{wait:x} (SIInsertWaitcnts: a VALU "
            f"write over a pending VMEM load needs a wait); correct only if the load does not return in between")
    if waits:
        out["waitcnt"] = "; ".join(waits)
    return out


FINDINGS: dict[str, dict[str, str]] = {name: reasons(s) for name, s in SHIPPED.items()}
