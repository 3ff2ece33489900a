"""Benchmark suites: format loader and tolerance checks (see FORMAT.md)."""
from .manifest import Problem, Shape, Suite, SuiteError, compare_to_reference, load_suite

__all__ = ["Problem", "Shape", "Suite", "SuiteError", "compare_to_reference", "load_suite"]
