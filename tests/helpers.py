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
