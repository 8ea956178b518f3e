"""Search's order depends on the indexed files only, never on the history that wrote them:
chunk ids follow the order chunks were written (a file added later, or edited and edited
back, gets new ones), so results tied on score are ordered by what they are (path, lines).
Real indexes, the real local model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knoxidx.index import Index
from knoxidx.retrieval.store import ChunkStore

# the same function in two files: every source scores the two copies the same
RETRY = '''def retry_with_backoff(call, attempts=5):
    """Call again after a failure, waiting twice as long each time."""
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            pass
    raise RuntimeError("gave up")
'''
OTHER = '''def parse_settings(text):
    """Key = value lines into a dict."""
    return dict(line.split(" = ", 1) for line in text.splitlines())
'''
COPIES = ("alpha/net.py", "zeta/net.py")
QUERIES = ("retry after a failure", "retry_with_backoff", "waiting twice as long",
           "parse settings")


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def update(root: Path, files: dict[str, str], *, create: bool = False) -> None:
    write(root, files)
    with Index.open(root, create=create) as idx:
        idx.update(jobs=1)


def copy_added_later(root: Path) -> None:
    """The second copy (first by path) is written after the first: its chunk ids are higher."""
    update(root, {COPIES[1]: RETRY, "settings.py": OTHER}, create=True)
    update(root, {COPIES[0]: RETRY})


def copy_edited_back(root: Path) -> None:
    """Both copies written at once, then the first by path edited and edited back."""
    update(root, {COPIES[0]: RETRY, COPIES[1]: RETRY, "settings.py": OTHER}, create=True)
    update(root, {COPIES[0]: RETRY.replace("OSError", "ValueError")})
    update(root, {COPIES[0]: RETRY})


def clean(root: Path) -> None:
    update(root, {COPIES[0]: RETRY, COPIES[1]: RETRY, "settings.py": OTHER}, create=True)


def answers(root: Path, mode: str, embed: bool = False) -> list[Any]:
    with Index.open(root) as idx:
        if embed:
            idx.embed()
        return [(q, [(r["path"], r["start_line"], r["end_line"], r["score"], r["sources"])
                     for r in idx.search(q, k=5, mode=mode)["results"]])
                for q in QUERIES]


@pytest.mark.parametrize("history", [copy_added_later, copy_edited_back])
def test_tied_results_come_in_the_same_order_whatever_the_history(
    tmp_path: Path, history: Callable[[Path], None]
) -> None:
    walked, built = tmp_path / "walked", tmp_path / "built"
    history(walked)
    clean(built)
    with Index.open(walked) as a, Index.open(built) as b:
        ids_a = ChunkStore(a.store.conn).chunks_at(COPIES[0], 1)
        ids_b = ChunkStore(b.store.conn).chunks_at(COPIES[0], 1)
    assert ids_a != ids_b  # the histories did give the copies other ids
    lexical = answers(walked, "lexical")
    assert lexical == answers(built, "lexical")
    # the copies are tied: the first by path comes first
    assert [hit[0] for hit in lexical[0][1][:2]] == list(COPIES)


def test_tied_results_in_hybrid_search_with_vectors(tmp_path: Path) -> None:
    walked, built = tmp_path / "walked", tmp_path / "built"
    copy_added_later(walked)
    clean(built)
    hybrid = answers(walked, "hybrid", embed=True)
    assert hybrid == answers(built, "hybrid", embed=True)
    assert all("vector" in hit[4] for _, hits in hybrid for hit in hits[:1])
    assert [hit[0] for hit in hybrid[0][1][:2]] == list(COPIES)
