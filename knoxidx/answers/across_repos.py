"""Questions across the repositories of a shared (PostgreSQL) store.

Each repository is resolved on its own, so a call from ``payments`` into ``ledger``'s package
is, inside ``payments``, an unresolved call into an external module. The two are joined here
by name: the external module's name must be one of the module keys of the file defining the
target (or a parent package of one), and the call's last name part must be the target's name.
Such edges are a name-level guess, and are labelled so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from knoxidx.graph.protocol import SharedGraphReads


class SharedStore(Protocol):
    repo: str  # the repository the index was opened on


class SharedIndex(Protocol):
    """What these questions read of an index open on a shared store (:class:`knoxidx.Index`,
    a layer above, whose queries then answer across repositories)."""

    @property
    def store(self) -> SharedStore: ...
    @property
    def q(self) -> SharedGraphReads: ...


def _home(index: SharedIndex, node: dict) -> tuple[str, SharedGraphReads]:
    repo = node.get("repo") or index.store.repo
    return repo, index.q.scoped(repo)


def external_callers(index: SharedIndex, node: dict) -> list[dict]:
    """Calls to ``node`` from other repositories that import its module by name."""
    if not node.get("path") or node.get("kind") in ("File", "Module"):
        return []
    repo, q = _home(index, node)
    keys = q.module_keys_of_path(node["path"])
    if not keys:
        return []
    return index.q.external_callers(node["name"], keys, repo)


def external_importers(index: SharedIndex, node: dict) -> list[dict]:
    """Files of other repositories importing ``node`` (a file or module) by module name."""
    repo, q = _home(index, node)
    if node.get("path"):
        keys = q.module_keys_of_path(node["path"])
    else:
        keys = [node["qualified_name"]]
    if not keys:
        return []
    return index.q.external_importers(keys, repo)
