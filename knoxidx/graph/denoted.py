"""What a reference's path denotes, its lookup going the way the resolver chose for its head
(the module scope, a class's scopes, the walk from a scope), kept by where that lookup goes
so that the paths read from one scope share it; and the class a qualified path's qualifier
names (``pkey.PKey`` in ``pkey.PKey.from_type_string()``), a reference of its own.
:class:`Denoted` is a base of :class:`knoxidx.graph.resolve.Resolver`.
"""

from __future__ import annotations

from typing import Any

from knoxidx.core.facts import BASE_KINDS, ITEMS_HEAD, NamePath, RefKind
from knoxidx.core.symbols import DEFINITION_TAG, Symbol
from knoxidx.graph.edges import REFERENCES, USES, Edges
from knoxidx.parse.file_index import MODULE, TYPE, TYPE_KINDS, FileIndex

# what a qualifier (`PKey` in `PKey.from_type_string()`) must denote to be a reference of its
# own: a name a rename of it would have to change, not a value whose type is only inferred
QUALIFIER_KINDS = TYPE_KINDS | {MODULE}


def lookup_key(path: NamePath, called: bool, typed: bool) -> NamePath:
    """``path`` as the resolver's caches key it: a bare name called, or one looked up among
    types only, apart from the same name read."""
    if called:
        return (path[0] + "()",)
    return (path[0] + ":type",) if typed else path


class Denoted(Edges):
    """The resolver's lookups of a reference's path (see the module's head)."""

    def _denoted(self, fi: FileIndex, head: str, path: NamePath, scope: int, shared: Any,
                 via: int, cls: int, heads: dict[tuple[str, Any], tuple[list[Symbol], bool]],
                 resolved: dict[tuple[NamePath, Any], tuple[list[Symbol], str]],
                 called: bool = False, typed: bool = False, site: int = 0
                 ) -> tuple[list[Symbol], str]:
        """What ``path`` (whose first name, less its call, is ``head``) denotes and with what
        confidence, its lookup going ``via`` the way :meth:`_outcome` chose for the head; kept
        in ``resolved`` by (path, ``shared``). ``called``: the path is a bare name called;
        ``typed``: a bare name in a type position, looked up among types only; ``site``:
        where a head bound several ways is read (``shared`` tells such reads apart)."""
        if via == 1:
            answer = self._follow(path, self.memo(("module-scope", fi.path, head, typed),
                                                  self._module_scope, fi, head, typed),
                                  False, path[0].endswith("()"), fi)
        elif via == 2:
            answer = self._follow(path, self._class_scopes_memo(fi, cls, head, typed),
                                  False, path[0].endswith("()"), fi, cls)
        elif head == "?" or head == ITEMS_HEAD:
            answer = self.resolve_path(fi, path, scope)
        else:
            # a called name, a typed one and the same name read may denote different things
            # (see lookup)
            key = (lookup_key((head,), called, typed)[0], shared if site else scope)
            got = heads.get(key)
            if got is None:
                got = heads[key] = (self._walk(fi, head, scope, typed, called, site)
                                    if via == 3 else
                                    self._head(fi, head, scope, typed, called, site))
            answer = self._follow(path, got[0], got[1], path[0].endswith("()"), fi, scope,
                                  site)
        resolved[(lookup_key(path, called, typed), shared)] = answer
        return answer

    def _names_a_map_type(self, fi: FileIndex, written: NamePath, scope: int) -> bool:
        """Whether the type written ``written`` is one of the index declared a map (`type M
        map[K]V`, `type M[K comparable] map[K]int`)."""
        found = self.resolve_path(fi, written, scope, want_type=True)[0]
        if len(found) != 1 or found[0][0] != DEFINITION_TAG:
            return False
        d = self.definition(found[0])
        if d is None or d.kind != TYPE:
            return False
        declared = d.signature[len(d.name):]
        if declared[:1] == "[":  # type parameters
            declared = declared.partition("]")[2]
        return declared.lstrip().startswith("map[")

    def _qualifier_targets(self, fi: FileIndex, kind: str, head: str, path: NamePath,
                           scope: int, shared: Any, via: int, cls: int,
                           heads: dict[tuple[str, Any], tuple[list[Symbol], bool]],
                           resolved: dict[tuple[NamePath, Any], tuple[list[Symbol], str]],
                           site: int = 0) -> list[tuple[int, str, str]]:
        """The class (or inline module) the qualifier of ``path`` names, as an edge target:
        ``pkey.PKey`` in ``pkey.PKey.from_type_string()``, whose whole path resolved exactly
        (so no call's result is in the qualifier). Nothing for a qualifier that denotes
        several definitions."""
        qualifier = path[:-1]
        answer = resolved.get((qualifier, shared))
        if answer is None:
            answer = self._denoted(fi, head, qualifier, scope, shared, via, cls, heads,
                                   resolved, site=site)
        found, confidence = answer
        if len(found) != 1 or found[0][0] != DEFINITION_TAG:
            return []
        target_id, target_kind = self._target(found[0])
        if target_kind not in QUALIFIER_KINDS:
            return []
        in_a_type = kind == RefKind.TYPE or kind in BASE_KINDS  # `a.Outer.Inner` as a type
        return [(target_id, USES if in_a_type else REFERENCES, confidence)]
