"""Assemble an embedded GGUF from its PyPI chunk packages, verified by SHA-256 before it is ever loaded.

The chunk packages are read as installed files through importlib.metadata; they are never imported
(one of them starts threads on import).
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
from dataclasses import dataclass
from pathlib import Path

from askchain.errors import ConfigError


@dataclass(frozen=True)
class EmbeddedWeights:
    file_name: str
    distribution: str  # chunk package name with {i} for the part number
    parts: int
    version: str
    size: int
    sha256: str
    extra: str  # the pip extra that installs the chunks

    def chunk_files(self) -> list[Path]:
        chunks = []
        for i in range(1, self.parts + 1):
            name = self.distribution.format(i=i)
            try:
                dist = md.distribution(name)
            except md.PackageNotFoundError as exc:
                raise ConfigError(
                    f"model package {name} is not installed; install the model with: pip install 'askchain[{self.extra}]'"
                ) from exc
            if dist.version != self.version:
                raise ConfigError(f"model package {name} is {dist.version}, expected {self.version}")
            found = [f for f in dist.files or [] if f.as_posix().endswith(f"data/part{i:02d}.bin")]
            if not found:
                raise ConfigError(f"model package {name} holds no data/part{i:02d}.bin")
            chunks.append(Path(dist.locate_file(found[0])))
        return chunks

    def assemble(self, cache_dir: Path) -> Path:
        """Return the path of the verified GGUF, joining the chunks into `cache_dir` on first use."""
        target = cache_dir / self.file_name
        marker = target.with_suffix(".verified")
        if target.is_file() and marker.is_file() and marker.read_text() == self.sha256 and target.stat().st_size == self.size:
            return target
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".partial.{os.getpid()}")
        digest = hashlib.sha256()
        with open(partial, "wb") as out:
            for chunk in self.chunk_files():
                with open(chunk, "rb") as src:
                    while block := src.read(16 << 20):
                        digest.update(block)
                        out.write(block)
        size = partial.stat().st_size
        if size != self.size or digest.hexdigest() != self.sha256:
            partial.unlink(missing_ok=True)
            raise ConfigError(
                f"{self.file_name}: assembled {size} bytes with SHA-256 {digest.hexdigest()[:12]}…, "
                f"expected {self.size} bytes and {self.sha256[:12]}…; reinstall 'askchain[{self.extra}]'"
            )
        partial.replace(target)
        marker.write_text(self.sha256)
        return target
