"""The emulator's sort-based set operations agree with numpy's on the lane arrays they see."""
import numpy as np
import pytest

from asmevo.emu.arrays import distinct, distinct_counts

_CASES = [np.zeros(0, np.int64), np.array([7]), np.array([3, 3, 3]), np.repeat(np.arange(40) * 4096, 64),
          np.random.default_rng(1).integers(-5, 5, 1000), np.random.default_rng(2).integers(0, 1 << 40, 3000),
          np.tile(np.array([9, 1, 9, 1]), 50)]


@pytest.mark.parametrize("values", _CASES)
def test_distinct_is_numpys_unique(values):
    np.testing.assert_array_equal(distinct(values), np.unique(values))
    got, counts = distinct_counts(values)
    want, want_counts = np.unique(values, return_counts=True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(counts, want_counts)
