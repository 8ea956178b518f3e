"""``knoxidx.Index``: the product. The CLI, HTTP API and MCP server are thin faces over it and
return the shapes its methods return."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from knoxidx.core.errors import BadPathError, IndexNotFoundError
from knoxidx.graph.sqlite_schema import find_index_root
from knoxidx.graph.store import SQLiteStore
from knoxidx.index_answers import IndexAnswers
from knoxidx.index_writing import IndexWriting

if TYPE_CHECKING:
    from knoxidx.graph.protocol import GraphStore


class Index(IndexWriting, IndexAnswers):
    """The index of one repository: opening it (here), updating it
    (:class:`~knoxidx.index_writing.IndexWriting`), its graph questions
    (:class:`~knoxidx.answers.questions.GraphQuestions`), and search, context and the answers
    built on the graph (:class:`~knoxidx.index_answers.IndexAnswers`), each a call that
    returns plain JSON-ready shapes."""

    def __init__(self, root: Path, store: GraphStore) -> None:
        self.root = root
        self.store = store
        self.q = store.queries()

    @classmethod
    def open(cls, path: str | Path = ".", *, create: bool = False, store: str | None = None,
             repo: str | None = None) -> Index:
        """The index of the repository at ``path``: its ``.knoxidx`` database, or with a
        PostgreSQL ``store`` URL, repository ``repo`` (default: the directory's name) there."""
        if store:
            return cls._open_shared(path, store, repo, create=create, readonly=False)
        start = Path(path)
        if not start.exists():
            raise BadPathError(f"no such directory: {path}")
        if create:
            if not start.is_dir():
                raise BadPathError(f"not a directory: {path}")
            root = start.resolve()
        else:
            found = find_index_root(start if start.is_dir() else start.parent)
            if found is None:
                raise IndexNotFoundError(
                    f"no knoxidx index at or above {start.resolve()}; run `knoxidx index` there"
                )
            root = found
        return cls(root, SQLiteStore.open(root, create=create))

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- opening for reading -----------------------------------------------------------

    @classmethod
    def open_reader(cls, path: str | Path = ".") -> Index:
        """The index at or above ``path`` on a read-only connection: what the HTTP and MCP
        servers use, one per thread, while a watcher writes."""
        start = Path(path)
        found = find_index_root(start if start.is_dir() else start.parent)
        if found is None:
            raise IndexNotFoundError(
                f"no knoxidx index at or above {start.resolve()}; run `knoxidx index` there"
            )
        return cls(found, SQLiteStore.open(found, readonly=True))

    @classmethod
    def open_shared_reader(cls, url: str, repo: str | None, root: Path | None = None) -> Index:
        """Repository ``repo`` (None: every repository) of a PostgreSQL store, read-only.
        Its root (for reading source) is where it was indexed from, when that is on this
        machine, else ``root``."""
        from knoxidx.graph.pg_store import PgStore

        fallback = (root or Path.cwd()).resolve()
        store = PgStore.open(url, repo, create=False, readonly=True)
        return cls(store.recorded_root() or fallback, store)

    @classmethod
    def _open_shared(cls, path: str | Path, url: str, repo: str | None, *, create: bool,
                     readonly: bool) -> Index:
        from knoxidx.core.store_url import repo_id
        from knoxidx.graph.pg_store import PgStore

        root = Path(path).resolve()
        if create and not root.is_dir():
            raise BadPathError(f"not a directory: {path}")
        return cls(root, PgStore.open(url, repo_id(repo, root), create=create, readonly=readonly))
