"""Shared test helpers: write a small repository, build its index."""

from __future__ import annotations

import textwrap
from pathlib import Path

from knoxidx.index import Index


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")
    return root


def build(root: Path, jobs: int = 1):
    with Index.open(root, create=True) as idx:
        return idx.update(jobs=jobs)


class Backend:
    """Where a test's index lives: the local SQLite file (``url`` None) or a repository of a
    PostgreSQL store; the same test runs against both (the ``backend`` fixture)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.name = "postgres" if url else "sqlite"

    def open(self, root: Path, *, create: bool = False) -> Index:
        return Index.open(root, create=create, store=self.url)

    def build(self, root: Path, jobs: int = 1):
        with self.open(root, create=True) as idx:
            return idx.update(jobs=jobs)
