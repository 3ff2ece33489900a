"""Target descriptions: processors (ISA facts) and GPUs (machine numbers), each a record of data."""
from .gpus import DEFAULT_GPU, GPU, GPUS, gpu, gpus_of
from .processors import PROCESSORS, Processor, TargetId, UnsupportedTarget, processor

__all__ = ["DEFAULT_GPU", "GPU", "GPUS", "gpu", "gpus_of", "PROCESSORS", "Processor", "TargetId", "UnsupportedTarget",
           "processor"]
