"""Reference for vllm_lora_expand: out[t] = bf16(out[t] + bf16(bf16(x[0, t]) @ lora_b[l(t)]^T)) for tokens
with a LoRA; others unchanged. Token groups as in vllm_lora_shrink."""
import importlib.util
from pathlib import Path

import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16

_spec = importlib.util.spec_from_file_location("lora_groups", Path(__file__).parents[1] / "vllm_lora_shrink" /
                                               "reference.py")
_shrink = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shrink)
generate = _shrink.generate
# The bench shape's control flow depends on these tables too: without them it ran with all-zero tables, no LoRA
# had a token and the kernel exited at once.
generate_bench = _shrink.generate_bench


def reference(inputs, scalars):
    x = bf16_to_f32(f32_to_bf16(inputs["x"][0])).astype(np.float64)   # [tokens, rank], cast like CAST_TYPE
    b = bf16_to_f32(inputs["lora_b"]).astype(np.float64)               # [loras, hidden, rank]
    out = bf16_to_f32(inputs["out"]).copy()
    for t, lid in enumerate(_shrink.token_loras(inputs)):
        if lid >= 0:
            prod = bf16_to_f32(f32_to_bf16((b[lid] @ x[t]).astype(np.float32)))
            out[t] = bf16_to_f32(f32_to_bf16(out[t] + prod))
    return {"out": f32_to_bf16(out)}
