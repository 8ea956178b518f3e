"""A ``.knoxidx`` that the repository itself commits, as a symlink or as files, is refused.

A cloned repository is untrusted: a committed ``.knoxidx -> ../../.ssh`` would make every
index, lock and ledger file land wherever the repository chose, and a committed
``.knoxidx/index.db`` would be the index knoxidx answers from, its facts kept by the next
update wherever the files' hashes match (a graph that hides a caller, chunks of code the files
do not hold). A user who links ``.knoxidx`` elsewhere to keep the index off the disk of the work
tree does not commit the link, and knoxidx's own ``.knoxidx/.gitignore`` keeps its files out of
git, so only what git tracks is refused; an untracked link or folder, or one outside any git
repository, works. A team shares an index through a store (``knoxidx push``/``pull``).
"""

from __future__ import annotations

from pathlib import Path
from threading import Lock

from knoxidx.core.errors import BadPathError
from knoxidx.graph.sqlite_schema import INDEX_DIR
from knoxidx.history.gitlog import GitUnavailableError, run_git


class CommittedIndexLinkError(BadPathError):
    """``.knoxidx`` is a symlink the repository commits: the repository, not the user, would
    choose where the index is written."""


class CommittedIndexError(CommittedIndexLinkError):
    """The repository commits files inside ``.knoxidx``: it, not the user's files, would supply
    the index knoxidx answers from."""


# the folders found untracked in this process: a server opens its index again and again
_UNTRACKED: set[tuple[str, int, int]] = set()
_UNTRACKED_LOCK = Lock()


def refuse_committed_index_link(root: Path) -> None:
    """Raise :class:`CommittedIndexLinkError` when ``root/.knoxidx`` is a symlink that git
    tracks, :class:`CommittedIndexError` when git tracks a file inside it. One git call per
    folder and process (the same hook- and config-proof invocation the history reader uses);
    when git cannot answer (no git, not a repository) the folder is the user's, as it was before
    git was asked."""
    index_dir = root / INDEX_DIR
    try:
        found = index_dir.lstat()
    except OSError:
        return  # none yet: the store makes its own
    key = (str(index_dir), found.st_dev, found.st_ino)
    if key in _UNTRACKED:
        return
    try:
        # ``ls-files`` reads git's index only: no filter, hook or fsmonitor runs
        tracked = [name for name in run_git(
            root, "ls-files", "-z", "--", f":(literal){INDEX_DIR}").split("\0") if name]
    except GitUnavailableError:
        tracked = []
    if not tracked:
        with _UNTRACKED_LOCK:
            _UNTRACKED.add(key)
        return
    if index_dir.is_symlink():
        raise CommittedIndexLinkError(
            f"{index_dir} is a symlink committed to the repository, so the repository would "
            f"choose where knoxidx writes; remove the link (`rm {index_dir}`: knoxidx then "
            "makes its own folder) or keep the index in a shared store (--store postgresql://...)")
    raise CommittedIndexError(
        f"{index_dir} is committed to the repository ({len(tracked)} file(s) git tracks inside "
        "it), so the repository would supply the index knoxidx answers from; take it out of git "
        f"and off the disk (`git rm -r -q --cached {INDEX_DIR} && rm -r {index_dir}`) and index "
        "again, or keep the index in a shared store (--store postgresql://...)")
