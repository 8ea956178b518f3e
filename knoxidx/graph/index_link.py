"""A ``.knoxidx`` that the repository itself commits as a symlink is refused.

A cloned repository is untrusted: a committed ``.knoxidx -> ../../.ssh`` would make every
index, lock and ledger file land wherever the repository chose. A user who links ``.knoxidx``
elsewhere to keep the index off the disk of the work tree does not commit the link, so only
a link that git tracks is refused; an untracked one, or one outside any git repository, works.
"""

from __future__ import annotations

from pathlib import Path

from knoxidx.core.errors import BadPathError
from knoxidx.graph.sqlite_schema import INDEX_DIR
from knoxidx.history.gitlog import GitUnavailableError, run_git


class CommittedIndexLinkError(BadPathError):
    """``.knoxidx`` is a symlink the repository commits: the repository, not the user, would
    choose where the index is written."""


def refuse_committed_index_link(root: Path) -> None:
    """Raise :class:`CommittedIndexLinkError` when ``root/.knoxidx`` is a symlink that git
    tracks. Only a symlink costs a git call (the same hook- and config-proof invocation the
    history reader uses); when git cannot answer (no git, not a repository) the link is the
    user's, as it was before git was asked."""
    index_dir = root / INDEX_DIR
    if not index_dir.is_symlink():
        return
    try:
        # ``ls-files`` reads git's index only: no filter, hook or fsmonitor runs
        tracked = run_git(root, "ls-files", "-z", "--", f":(literal){INDEX_DIR}").split("\0")
    except GitUnavailableError:
        return
    if INDEX_DIR in tracked:
        raise CommittedIndexLinkError(
            f"{index_dir} is a symlink committed to the repository, so the repository would "
            f"choose where knoxidx writes; remove the link (`rm {index_dir}`: knoxidx then "
            "makes its own folder) or keep the index in a shared store (--store postgresql://...)")
