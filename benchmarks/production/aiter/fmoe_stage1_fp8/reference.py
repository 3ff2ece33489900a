"""Reference for AITer's MoE stage 1 (g1u1, per-token fp8): for every routed entry of moe_sorting's output (token t,
top-k slot s, expert e of its 32-entry block), out[t, s] = silu(gate) * up with gate / up the first / second `inter`
rows of x[t] . w1[e]^T, each scaled by x_scale[t] * w1_scale[e, row]; with `sorted_weights` passed (doweight), gate
and up are first multiplied by the routing weight (aiter/fused_moe.py torch_moe_stage1: act_input * topk_weight
before the activation). fp8 x [tokens, dim] and w1 [E, 2 inter, dim] (E4M3FNUZ, or the format `fp8` names, e.g.
gfx950's OCP E4M3), w1 stored as AITer's shuffle_weight(w1, layout=(16, 16)) leaves it: per expert, 16x32 tiles of
(row tile, k tile), each stored as two 16-column halves of 16 rows x 16 bytes. generate() draws the routing as
AITer's MoE tuner does (asmevo.calibrate.moe_routing) and quantises x per token and w1 per channel to the spec's x
dtype (fp8, or int8: the pertokenInt8 kernels). The block size is moe_sorting's: len(sorted_token_ids) = tokens *
topk + experts * block - topk."""
import numpy as np

from asmevo.calibrate.moe_routing import fused_topk, moe_sorting
from asmevo.device.dtypes import get_dtype
from asmevo.suites.refutil import f32_to_bf16, shuffle_weight, unshuffle_weight

FP8 = get_dtype("float8_e4m3fnuz")
QMAX = {"float8_e4m3fnuz": 240.0, "float8_e4m3fn": 448.0, "int8": 127.0}


def _quantise(x: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-row (last axis) codes and float32 scales, as aiter's per-token quant: scale = max|x| / dtype max."""
    scale = np.abs(x).max(axis=-1, keepdims=True) / QMAX[dtype]
    q = np.rint(x / scale).astype(np.int8) if dtype == "int8" else get_dtype(dtype).encode(x / scale)
    return q, scale.astype(np.float32)


def _values(codes: np.ndarray, fp8) -> np.ndarray:
    return codes.astype(np.float64) if codes.dtype == np.int8 else fp8.decode(codes).astype(np.float64)


def block_size(tokens: int, topk: int, experts: int, length: int) -> int:
    return (length - tokens * topk + topk) // experts


def generate(launch, rng):
    bufs = {f["buffer"]: f for f in launch["args"][0]["struct"] if "shape" in f}
    s = {name: f["shape"] for name, f in bufs.items()}
    tokens, topk, _ = s["out"]
    experts, two_inter, dim = s["w1"]
    x, x_scale = _quantise(rng.standard_normal((tokens, dim)), bufs["x"]["dtype"])
    w1, w1_scale = _quantise(rng.standard_normal((experts, two_inter, dim)) / np.sqrt(dim), bufs["w1"]["dtype"])
    weights, ids = fused_topk(rng.standard_normal((tokens, experts)), topk)
    r = moe_sorting(ids, weights, experts, block_size(tokens, topk, experts, s["sorted_token_ids"][0]))
    out = {"x": x, "x_scale": x_scale, "w1": shuffle_weight(w1, 16), "w1_scale": w1_scale,
           "sorted_token_ids": r.sorted_token_ids, "sorted_expert_ids": r.sorted_expert_ids,
           "num_valid_ids": r.num_valid_ids}
    if "sorted_weights" in s:
        out["sorted_weights"] = r.sorted_weights
    return out


def reference(inputs, scalars, fp8=FP8):
    out = np.zeros(inputs["out"].shape, np.float64)
    tokens, topk, inter = out.shape
    x = _values(inputs["x"], fp8) * inputs["x_scale"].astype(np.float64)
    w1 = _values(unshuffle_weight(inputs["w1"], 16), fp8) * inputs["w1_scale"].astype(np.float64)
    ids, experts = inputs["sorted_token_ids"].view(np.uint32), inputs["sorted_expert_ids"]
    block = block_size(tokens, topk, w1.shape[0], len(ids))
    weights = inputs.get("sorted_weights")
    for i in range(int(inputs["num_valid_ids"][0])):
        t, slot = int(ids[i] & 0xFFFFFF), int(ids[i] >> 24)
        if t >= tokens:
            continue
        h = w1[experts[i // block]] @ x[t]
        gate, up = h[:inter], h[inter:]
        if weights is not None:
            gate, up = gate * weights[i], up * weights[i]
        out[t, slot] = gate / (1 + np.exp(-gate)) * up
    return {"out": f32_to_bf16(out.astype(np.float32))}
