"""Reference for fmoe_stage1_fp8 on gfx950: the gfx942 suite's MoE stage 1 with OCP E4M3 fp8 (gfx950's format: its
generate() quantises to the spec's x dtype, float8_e4m3fn, and the reference decodes those codes)."""
import importlib.util
from pathlib import Path

from asmevo.device.dtypes import get_dtype

_GFX942 = Path(__file__).resolve().parents[2] / "aiter" / "fmoe_stage1_fp8" / "reference.py"
_spec = importlib.util.spec_from_file_location("aiter_fmoe_stage1_fp8_reference", _GFX942)
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)
OCP_FP8 = get_dtype("float8_e4m3fn")
generate = _base.generate


def reference(inputs, scalars):
    return _base.reference(inputs, scalars, OCP_FP8)
