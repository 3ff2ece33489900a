"""Atomic file writes: readers (and a later run after a crash) see the old file or the new one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, content: bytes) -> None:
    """Replace `path` with `content` through a fsynced temporary file and one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
