"""The timing model: a launch's duration on a GPU, predicted from a traced emulation of a sample of
its workgroups (docs/cycle_model.md). Its unit is `model_us`, a prediction, never a measurement."""
from .costs import DEFAULT_LATENCIES, Latencies, cost
from .launch import Estimate, ModelError, Occupancy, PcCost, TracedLaunch, estimate, occupancy
from .sample import model_spec, trace_sample

UNIT = "model_us"

__all__ = ["DEFAULT_LATENCIES", "Estimate", "Latencies", "ModelError", "Occupancy", "PcCost", "TracedLaunch",
           "UNIT", "cost", "estimate", "model_spec", "occupancy", "trace_sample"]
