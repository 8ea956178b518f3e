from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import write_tree


@pytest.fixture
def repo(tmp_path: Path):
    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "repo"
        root.mkdir(exist_ok=True)
        return write_tree(root, files)

    return make
