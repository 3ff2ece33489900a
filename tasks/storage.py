"""Prefect result/key storage that writes atomically (temp file, fsync, rename), so a process
killed mid-write, or two runs writing the same key at once, never leave a truncated record that a
later run would read as a cache hit."""
from __future__ import annotations

from prefect.filesystems import LocalFileSystem

from artifacts.files import write_atomic


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
