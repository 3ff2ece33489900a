"""Each KernelBench reference on a tiny input whose output is known by hand (the derivation beside it).

These pin the references' semantics (the oracle behind `asmevo suite check kernelbench`) without PyTorch;
benchmarks/kernelbench/pytorch_oracle.py compares them with KernelBench's own modules at every shape.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from asmevo.suites import load_suite

SUITE = load_suite("kernelbench")
PHI_1 = 0.8413447460685429  # standard normal CDF at 1 (tables): exact GELU(1) = 1 * PHI(1)
LN3 = math.log(3.0)
R1, R4 = 1 / math.sqrt(1 + 1e-5), 1 / math.sqrt(4 + 1e-5)  # 1 / sqrt(variance + eps) for variances 1 and 4


def f32(rows) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


def f16(rows) -> np.ndarray:
    return np.array(rows, dtype=np.float16)


def bf16(rows) -> np.ndarray:
    """bfloat16 bits of values exact in bfloat16 (the top half of their float32 bits)."""
    return (np.array(rows, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def zeros(shape, dtype=np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


SLOPE = np.float32(0.01)  # LeakyReLU's slope as the kernel receives it (fp32)
# name: (buffers, scalars, expected output, exact?)
CASES = {
    # [[1,2],[3,4]] @ [[5,6],[7,8]] = [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]]
    "1_Square_matrix_multiplication_": (
        {"A": f32([[1, 2], [3, 4]]), "B": f32([[5, 6], [7, 8]]), "C": zeros((2, 2))}, [2],
        [[19, 22], [43, 50]], True),
    # rows of A dotted with the columns (1,0,1) and (0,1,1)
    "2_Standard_matrix_multiplication_": (
        {"A": f16([[1, 2, 3], [4, 5, 6]]), "B": f16([[1, 0], [0, 1], [1, 1]]), "C": zeros((2, 2), np.float16)},
        [2, 2, 3], [[4, 5], [10, 11]], True),
    # batch 0: A0 @ I = A0; batch 1: 2I @ ones = 2 * ones
    "3_Batched_matrix_multiplication": (
        {"A": bf16([[[1, 2], [3, 4]], [[2, 0], [0, 2]]]), "B": bf16([[[1, 0], [0, 1]], [[1, 1], [1, 1]]]),
         "C": zeros((2, 2, 2), np.uint16)}, [2, 2, 2], [[[1, 2], [3, 4]], [[2, 2], [2, 2]]], True),
    # (3 x 2) @ (2 x 4): column j of C is A @ B[:, j]
    "9_Tall_skinny_matrix_multiplication_": (
        {"A": f16([[1, 2], [3, 4], [5, 6]]), "B": f16([[1, 0, 1, 2], [0, 1, 1, -1]]), "C": zeros((3, 4), np.float16)},
        [3, 4, 2], [[1, 2, 3, 0], [3, 4, 7, 2], [5, 6, 11, 4]], True),
    # C = A @ B.T: row sums of A weighted by B's rows (1,0,0) and (1,1,1)
    "17_Matmul_with_transposed_B": (
        {"A": bf16([[1, 2, 3], [4, 5, 6]]), "B": bf16([[1, 0, 0], [1, 1, 1]]), "C": zeros((2, 2))},
        [2, 2, 3], [[1, 6], [4, 15]], True),
    "19_ReLU": ({"x": f32([[-2, 0.5], [3, -0.25]]), "y": zeros((2, 2))}, [4], [[0, 0.5], [3, 0]], True),
    # negative inputs are powers of two, so x * slope is exact in fp32
    "20_LeakyReLU": (
        {"x": f32([[-2, -0.5], [0.75, 4]]), "y": zeros((2, 2))}, [4, 0.01],
        [[-2 * SLOPE, -0.5 * SLOPE], [0.75, 4]], True),
    # sigmoid(ln 3) = 1 / (1 + 1/3) = 3/4; sigmoid(0) = 1/2; sigmoid(40) = 1 - 4e-18
    "21_Sigmoid": ({"x": f32([[0, LN3], [-LN3, 40]]), "y": zeros((2, 2))}, [4], [[0.5, 0.75], [0.25, 1.0]], False),
    # tanh(ln(3)/2) = (3 - 1) / (3 + 1) = 1/2
    "22_Tanh": ({"x": f32([[0, LN3 / 2], [-LN3 / 2, 20]]), "y": zeros((2, 2))}, [4], [[0, 0.5], [-0.5, 1.0]], False),
    # softmax(log(1, 2, 3, 4)) = (1, 2, 3, 4) / 10; a constant row is uniform
    "23_Softmax": (
        {"x": f32([np.log([1, 2, 3, 4]), [5, 5, 5, 5]]), "y": zeros((2, 4))}, [4],
        [[0.1, 0.2, 0.3, 0.4], [0.25] * 4], False),
    "24_LogSoftmax": (
        {"x": f32([np.log([1, 2, 3, 4]), [5, 5, 5, 5]]), "y": zeros((2, 4))}, [4],
        [np.log([0.1, 0.2, 0.3, 0.4]), [-math.log(4)] * 4], False),
    # exact GELU: x * PHI(x); PHI(-1) = 1 - PHI(1); 10 * PHI(10) = 10 to fp32
    "26_GELU_": ({"x": f32([[0, 1], [-1, 10]]), "y": zeros((2, 2))}, [4], [[0, PHI_1], [-(1 - PHI_1), 10]], False),
    # log(1 + e^0) = ln 2, log(1 + 3) = ln 4; above the threshold 20 softplus(x) = x; log1p(e^-30) = e^-30
    "29_Softplus": (
        {"x": f32([[0, LN3], [25, -30]]), "y": zeros((2, 2))}, [4],
        [[math.log(2), math.log(4)], [25, math.exp(-30)]], False),
    # alpha 2: x > 0 unchanged; 2 * (e^-ln2 - 1) = -1; 2 * (e^-50 - 1) = -2 to fp32
    "31_ELU": ({"x": f32([[1.5, 0], [-math.log(2), -50]]), "y": zeros((2, 2))}, [4, 2.0], [[1.5, 0], [-1, -2]], False),
    # channel 0: (x - 1) / sqrt(4) * 2 + 0.5; channel 1: (x - 2) / sqrt(16) * -1 (var + eps = 4, 16)
    "33_BatchNorm": (
        {"x": f32([[[[1, 3]], [[0, 4]]]]), "running_mean": f32([1, 2]), "running_var": f32([4 - 1e-5, 16 - 1e-5]),
         "weight": f32([2, -1]), "bias": f32([0.5, 0]), "y": zeros((1, 2, 1, 2))}, [2, 2, 1e-5],
        [[[[0.5, 2.5]], [[0.5, -0.5]]]], False),
    # 2 groups of 2 channels x 2 positions: (-1, 1, -1, 1) has mean 0, variance 1; (10, 14, 10, 14) mean 12,
    # variance 4; then per-channel weight (2, 3, 1, 1) and bias (0, 1, 0, -1)
    "35_GroupNorm_": (
        {"x": f32([[[[-1, 1]], [[-1, 1]], [[10, 14]], [[10, 14]]]]), "weight": f32([2, 3, 1, 1]),
         "bias": f32([0, 1, 0, -1]), "y": zeros((1, 4, 1, 2))}, [2, 2, 2, 1e-5],
        [[[[-2 * R1, 2 * R1]], [[1 - 3 * R1, 1 + 3 * R1]], [[-2 * R4, 2 * R4]], [[-1 - 2 * R4, -1 + 2 * R4]]]], False),
    # over the channels at each position: (3, 4) has mean square 12.5, (1, -1) has 1
    "36_RMSNorm_": (
        {"x": f32([[[[3, 1]], [[4, -1]]]]), "y": zeros((1, 2, 1, 2))}, [2, 2, 1e-5],
        [[[[3 / math.sqrt(12.5 + 1e-5), R1]], [[4 / math.sqrt(12.5 + 1e-5), -R1]]]], False),
    # per sample over (1, 1, 2): (-1, 1) normalises to (-1, 1) / sqrt(1 + eps); a constant sample to 0, leaving the bias
    "40_LayerNorm": (
        {"x": f32([[[[-1, 1]]], [[[5, 5]]]]), "weight": f32([[[2, 3]]]), "bias": f32([[[0.5, -0.5]]]),
         "y": zeros((2, 1, 1, 2))}, [2, 1e-5],
        [[[[0.5 - 2 * R1, -0.5 + 3 * R1]]], [[[0.5, -0.5]]]], False),
    # x = arange(16) as 4 x 4, kernel 2, stride 2, padding 1, dilation 2: output (i, j) reads rows and columns
    # {2i - 1, 2i + 1}, of which -1 and 4 are padding; so (0,0) = x[1,1] = 5, (0,1) = x[1,3] = 7,
    # (1,0) = x[3,1] = 13, (1,1) = x[3,3] = 15
    "42_Max_Pooling_2D": (
        {"x": np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4), "y": zeros((1, 1, 2, 2))},
        [4, 4, 2, 2, 2, 2, 1, 2, 4], [[[[5, 7], [13, 15]]]], True),
    "47_Sum_reduction_over_a_dimension": (
        {"x": f32([[[1, 2], [3, 4], [5, 6]]]), "y": zeros((1, 1, 2))}, [3, 2], [[[9, 12]]], True),
    "48_Mean_reduction_over_a_dimension": (
        {"x": f32([[[1, 2], [3, 4], [5, 6]]]), "y": zeros((1, 2))}, [3, 2], [[3, 4]], True),
    "49_Max_reduction_over_a_dimension": (
        {"x": f32([[[1, -2], [3, 4], [-5, 6]]]), "y": zeros((1, 2))}, [3, 2], [[3, 6]], True),
    "51_Argmax_over_a_dimension": (
        {"x": f32([[[1, -2], [3, 4], [-5, 6]]]), "y": zeros((1, 2), np.int64)}, [3, 2], [[1, 2]], True),
    # valid cross-correlation of (1, 2, 3, 4) with (1, 0, -1) and (1, 1, 1)
    "67_conv_standard_1D": (
        {"x": f32([[[1, 2, 3, 4]]]), "weight": f32([[[1, 0, -1]], [[1, 1, 1]]]), "y": zeros((1, 2, 2))},
        [1, 2, 4], [[[-2, -2], [6, 9]]], True),
    "89_cumsum": ({"x": f32([[1, 2, 3], [0.5, -0.5, 1]]), "y": zeros((2, 3))}, [3], [[1, 3, 6], [0.5, 0, 1]], True),
    # differences (1, 0, -2, 0): mean of squares 5/4
    "94_MSELoss": (
        {"predictions": f32([[1, 2], [3, 4]]), "targets": f32([[0, 2], [5, 4]]), "out": zeros(1)}, [4], [1.25], True),
    # row 0 uniform over 3 classes: ln 3; row 1 logits ln(1, 2, 5), target 2: ln 8 - ln 5; mean ln(3 * 1.6) / 2
    "95_CrossEntropyLoss": (
        {"predictions": f32([[0, 0, 0], np.log([1, 2, 5])]), "targets": np.array([1, 2], np.int64), "out": zeros(1)},
        [2, 3], [0.5 * math.log(4.8)], False),
    # z = x @ W.T + bias = [[1.5, 2], [3.5, 6]]; y = 0.5 z + z
    "40_Matmul_Scaling_ResidualAdd": (
        {"x": f16([[1, 2], [3, 4]]), "W": f16([[1, 0], [1, 1]]), "bias": f16([0.5, -1]),
         "y": zeros((2, 2), np.float16)}, [2, 2, 2, 0.5], [[2.25, 3], [5.25, 9]], True),
    # z = x @ W.T + bias = [[-1, -7], [1, -3]]
    "76_Gemm_Add_ReLU": (
        {"x": f16([[1, 2], [3, 4]]), "W": f16([[1, 0], [1, 1]]), "bias": f16([-2, -10]),
         "y": zeros((2, 2), np.float16)},
        [2, 2, 2], [[0, 0], [1, 0]], True),
    # z = (1 + 2 + 7, 0) / 10 = (1, 0); GELU(1) = PHI(1)
    "86_Matmul_Divide_GELU": (
        {"x": f32([[1, 2]]), "W": f32([[1, 1], [0, 0]]), "bias": f32([7, 0]), "y": zeros((1, 2))},
        [1, 2, 2, 10.0], [[PHI_1, 0]], False),
}


def test_every_problem_has_a_case():
    assert set(CASES) == {p.name for p in SUITE.problems}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_on_a_hand_computed_case(name):
    p = SUITE.problem(name)
    inputs, scalars, want, exact = CASES[name]
    (out,) = p.outputs
    got = p.reference_fn()({k: v.copy() for k, v in inputs.items()}, scalars)[out]
    assert got.dtype == inputs[out].dtype and got.shape == inputs[out].shape
    values = (got.astype(np.uint32) << 16).view(np.float32) if got.dtype == np.uint16 else got
    if exact:
        np.testing.assert_array_equal(values, np.asarray(want, dtype=values.dtype))
    else:
        np.testing.assert_allclose(values.astype(np.float64), np.asarray(want, np.float64), rtol=2e-6, atol=1e-7)
