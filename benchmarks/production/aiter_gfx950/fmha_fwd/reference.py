"""Reference for fmha_fwd on gfx950: the gfx942 suite's (the same attention, computed by CDNA4's own build)."""
import importlib.util
from pathlib import Path

_GFX942 = Path(__file__).resolve().parents[2] / "aiter" / "fmha_fwd" / "reference.py"
_spec = importlib.util.spec_from_file_location("aiter_fmha_fwd_reference", _GFX942)
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)
reference = _base.reference
