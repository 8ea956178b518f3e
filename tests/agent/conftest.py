from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.support import make_repo


@pytest.fixture
def agent_repo(tmp_path: Path) -> Path:
    """The demo repository, indexed (graph and search data), one per test."""
    return make_repo(tmp_path / "repo")


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo repository, indexed, shared by a module's read-only tests."""
    return make_repo(tmp_path_factory.mktemp("shared") / "repo")
