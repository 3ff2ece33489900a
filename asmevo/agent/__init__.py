"""Agents that edit hot windows of a recovered kernel: the offline search agent (rewrite operators
+ best-first search) and the LLM agent (litellm tool calls); `optimize` runs either through the gates."""
from .optimize import AGENTS, OptimizeResult, optimize

__all__ = ["AGENTS", "OptimizeResult", "optimize"]
