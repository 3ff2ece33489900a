"""Reference for fmoe_stage1_fp8_doweight: fmoe_stage1_fp8's reference, which multiplies gate and up by the routing
weight when the spec passes `sorted_weights` (the doweight kernels' SW pointer)."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("fmoe_stage1_fp8_reference",
                                               Path(__file__).resolve().parents[1] / "fmoe_stage1_fp8" / "reference.py")
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)
generate, reference = _base.generate, _base.reference
