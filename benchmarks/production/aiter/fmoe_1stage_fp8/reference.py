"""Reference for AITer's one-stage fused MoE (g1u1, per-token fp8, SiLU, sub_GU 256): for every routed entry of
moe_sorting's output (token t, top-k slot s, expert e of its 32-entry block, routing weight w),
a = silu(gate) * up with gate / up the first / second `inter` rows of x[t] . w1[e]^T (fp8 codes times x_scale[t]
and w1_scale[e, row]), then per 256-wide slice of a the kernel re-quantises a to fp8 e4m3fnuz as the asm does
(amax = max(|a|, 1e-6) over the slice, q = fp8(a * (240 / amax)), 240 being the format's largest finite value)
and out[t] += w * ((q . w2[e, :, slice]^T) * amax / 240 * w2_scale[e]) in bf16 (global_atomic_pk_add_bf16, so
each partial is rounded to bf16; the sums start from out's initial values, which aiter's asm_moe has zeroed by
moe_sorting: CK's moe_sorting_kernel.hpp fuses the clearing of moe_buf). x [tokens, dim], w1 [E, 2 inter, dim],
w2 [E, dim, inter], both weights stored as AITer's shuffle_weight(w, layout=(16, 16)) leaves them (per expert,
16x32 tiles of (row tile, k tile), each stored as two 16-column halves of 16 rows x 16 bytes). generate() draws
the routing as AITer's MoE tuner does (asmevo.calibrate.moe_routing) and quantises x per token and w1, w2 per
channel. The block size is moe_sorting's: len(sorted_token_ids) = tokens * topk + experts * block - topk.
Without the re-quantisation this is aiter's torch_moe (fused_moe_bf16_asm.py)."""
import numpy as np

from asmevo.calibrate.moe_routing import fused_topk, moe_sorting
from asmevo.device.dtypes import get_dtype
from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16, shuffle_weight, unshuffle_weight

FP8 = get_dtype("float8_e4m3fnuz")
FP8_MAX = 240.0
SUB_GU = 256  # inter columns per workgroup: the slice the intermediate is re-quantised over


def _quantise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row (last axis) fp8 codes and float32 scales, as aiter's per-token quant: scale = max|x| / 240."""
    scale = np.abs(x).max(axis=-1, keepdims=True) / FP8_MAX
    return FP8.encode(x / scale), scale.astype(np.float32)


def _values(codes: np.ndarray) -> np.ndarray:
    return FP8.decode(codes).astype(np.float64)


def block_size(tokens: int, topk: int, experts: int, length: int) -> int:
    return (length - tokens * topk + topk) // experts


def generate(launch, rng):
    s = {f["buffer"]: f["shape"] for f in launch["args"][0]["struct"] if "shape" in f}
    tokens, dim = s["x"]
    experts, two_inter, _ = s["w1"]
    x, x_scale = _quantise(rng.standard_normal((tokens, dim)))
    w1, w1_scale = _quantise(rng.standard_normal((experts, two_inter, dim)) / np.sqrt(dim))
    w2, w2_scale = _quantise(rng.standard_normal((experts, dim, two_inter // 2)) / np.sqrt(two_inter // 2))
    topk = next(int(f["scalar"]) for f in launch["args"][0]["struct"] if f.get("name") == "topk")
    weights, ids = fused_topk(rng.standard_normal((tokens, experts)), topk)
    r = moe_sorting(ids, weights, experts, block_size(tokens, topk, experts, s["sorted_token_ids"][0]))
    return {"x": x, "x_scale": x_scale, "w1": shuffle_weight(w1, 16), "w1_scale": w1_scale,
            "w2": shuffle_weight(w2, 16), "w2_scale": w2_scale,
            "sorted_token_ids": r.sorted_token_ids, "sorted_weights": r.sorted_weights,
            "sorted_expert_ids": r.sorted_expert_ids, "num_valid_ids": r.num_valid_ids}


def _requantised(a: np.ndarray) -> np.ndarray:
    """The kernel's fp8 round trip of one slice, in its float32 steps: rcp(amax), times 240, times a."""
    amax = np.float32(max(np.abs(a).max(), np.float32(1e-6)))
    scale = np.float32(np.float32(FP8_MAX) * np.float32(1.0 / np.float64(amax)))
    return _values(FP8.encode((a * scale).astype(np.float32))) / np.float64(scale)


def reference(inputs, scalars):
    tokens, dim = inputs["out"].shape
    x = _values(inputs["x"]) * inputs["x_scale"].astype(np.float64)
    w1 = _values(unshuffle_weight(inputs["w1"], 16)) * inputs["w1_scale"].astype(np.float64)
    w2 = _values(unshuffle_weight(inputs["w2"], 16))
    w2_scale = inputs["w2_scale"].astype(np.float64)[..., 0]
    inter = w2.shape[2]
    ids, experts = inputs["sorted_token_ids"].view(np.uint32), inputs["sorted_expert_ids"]
    block = block_size(tokens, int(scalars[0]["topk"]), w1.shape[0], len(ids))
    out = bf16_to_f32(inputs["out"]).astype(np.float64)
    for i in range(int(inputs["num_valid_ids"][0])):
        t = int(ids[i] & 0xFFFFFF)
        if t >= tokens:
            continue
        e = experts[i // block]
        h = w1[e] @ x[t]
        gate, up = h[:inter], h[inter:]
        a = (gate / (1 + np.exp(-gate)) * up).astype(np.float32)
        for lo in range(0, inter, SUB_GU):  # one workgroup's partial sum, added to out as bf16
            part = w2[e][:, lo:lo + SUB_GU] @ _requantised(a[lo:lo + SUB_GU])
            part *= w2_scale[e] * inputs["sorted_weights"][i]
            out[t] += bf16_to_f32(f32_to_bf16(part.astype(np.float32)))
    return {"out": f32_to_bf16(out.astype(np.float32))}
