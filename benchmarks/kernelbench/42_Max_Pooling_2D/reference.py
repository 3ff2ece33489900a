"""Reference for 42_Max_Pooling_2D: nn.MaxPool2d(k, stride, padding, dilation) with -inf padding."""
import numpy as np


def reference(inputs, scalars):
    H, W, Ho, Wo, k, s, p, d = (int(v) for v in scalars[:8])
    x = inputs["x"]
    xp = np.full(x.shape[:2] + (H + 2 * p, W + 2 * p), -np.inf, dtype=np.float32)
    xp[:, :, p:p + H, p:p + W] = x
    y = np.full(x.shape[:2] + (Ho, Wo), -np.inf, dtype=np.float32)
    for i in range(k):
        for j in range(k):
            win = xp[:, :, i * d: i * d + s * (Ho - 1) + 1: s, j * d: j * d + s * (Wo - 1) + 1: s]
            y = np.maximum(y, win)
    return {"y": y}
