"""Calibration data: real-GPU measurements shipped with production kernels, turned into launches of them."""
