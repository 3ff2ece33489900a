"""Prefect result/key storage that writes atomically (temp file, fsync, rename), so a process
killed mid-write, or two runs writing the same key at once, never leave a truncated record that a
later run would read as a cache hit."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from prefect.filesystems import LocalFileSystem


def write_atomic(path: Path, content: bytes) -> None:
    """Replace `path` with `content` in one rename; readers see the old file or the new one."""
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


class AtomicLocalFileSystem(LocalFileSystem):
    """A LocalFileSystem whose writes are atomic renames."""

    _block_type_name = "AsmEvo Atomic Local File System"

    async def awrite_path(self, path: str, content: bytes) -> str:
        return self.write_path(path, content)

    def write_path(self, path: str, content: bytes, _sync: bool | None = None) -> str:
        """Write `content` at `path` (`_sync` is Prefect's dispatch flag; writes are always sync)."""
        target = self._resolve_path(path)
        if target.exists() and not target.is_file():
            raise ValueError(f"Path {target} already exists and is not a file.")
        write_atomic(target, content)
        return str(target)
