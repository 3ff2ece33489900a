"""Benchmark suites: the format loader (see FORMAT.md); references are compared with
`asmevo.compare.compare_to_reference`."""
from .manifest import Problem, Shape, Suite, SuiteError, load_suite

__all__ = ["Problem", "Shape", "Suite", "SuiteError", "load_suite"]
