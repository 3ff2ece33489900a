"""Devices that run kernels (the CPU emulator, or real hardware through hip-python), the shared
kernarg packing, and launch specs."""
from __future__ import annotations

from .base import Buffer, Device, DeviceError, LaunchResult, Module
from .gpus import hardware_identity

DEVICES = ("emu", "hip")


def get_device(name: str = "emu", **options) -> Device:
    """A new device: `emu` (options: budget, checked, layout, faithful) or `hip` (option: device_id, default
    None: any free GPU of the pool)."""
    if name == "emu":
        try:
            from .emu import EmuDevice
        except ImportError as exc:
            raise DeviceError(f"emu device unavailable: the emulator cannot be imported ({exc})") from None
        return EmuDevice(**options)
    if name == "hip":
        from .hip import HipDevice
        return HipDevice(**options)
    raise DeviceError(f"unknown device {name!r} (valid: {', '.join(DEVICES)})")


__all__ = ["Buffer", "Device", "DeviceError", "LaunchResult", "Module", "get_device", "hardware_identity"]
