"""Reference for paged_attention on gfx950: the gfx942 suite's (the gfx950 object's text is the gfx942 build's)."""
import importlib.util
from pathlib import Path

_GFX942 = Path(__file__).resolve().parents[2] / "aiter" / "paged_attention" / "reference.py"
_spec = importlib.util.spec_from_file_location("aiter_paged_attention_reference", _GFX942)
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)
generate, generate_bench, reference = _base.generate, _base.generate_bench, _base.reference
