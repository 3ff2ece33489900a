"""Reference for 49_Max_reduction_over_a_dimension: max over dim 1."""
import numpy as np


def reference(inputs, scalars):
    return {"y": inputs["x"].max(axis=1)}
