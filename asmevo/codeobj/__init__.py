"""Code-object model: ELF, kernel descriptors, metadata, target id."""
from .descriptor import KernelDescriptor
from .elf import CodeObject, Kernel, TargetId, parsed

__all__ = ["CodeObject", "Kernel", "KernelDescriptor", "TargetId", "parsed"]
