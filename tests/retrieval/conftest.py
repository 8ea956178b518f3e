from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from knoxidx.retrieval.backends import LocalEmbedder
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import create_schema


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    create_schema(connection)
    yield connection
    connection.close()


@pytest.fixture
def store(conn: sqlite3.Connection) -> ChunkStore:
    return ChunkStore(conn)


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    embedder = LocalEmbedder()
    _ = embedder.model  # load once for the whole session
    return embedder
