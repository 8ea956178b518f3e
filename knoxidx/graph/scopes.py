"""What a name or a dotted path denotes from a scope of a file.

The lexical scopes from the reference's outwards, then the module scope and the family's
fallbacks (package scope, wildcard imports, builtins); a path's further segments as members of
what it denotes so far (a class's own members, then its bases'; a module's names); and the
types values hold (``x = Foo()``, ``x: Foo``, a function's return type, an alias's target),
which members are then looked up in. Every read is recorded (:class:`~knoxidx.graph.lookups.
Lookups`); what differs per language comes from the family module's ``RULES``.

ScopeResolver reads paths; the rest are its bases, one module each: what they ask of one
another is declared in :mod:`~knoxidx.graph.scope_reads`, whose docstring lists them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.facts import ELEMENT_OF, ITEMS_HEAD, Binding, NamePath
from knoxidx.core.model import Confidence
from knoxidx.core.symbols import INSTANCE_TAG, Symbol
from knoxidx.graph.elements import indexes_elements
from knoxidx.graph.lookups import Workspace
from knoxidx.graph.scope_reads import MAX_DEPTH as MAX_DEPTH
from knoxidx.graph.scope_reads import dedupe
from knoxidx.graph.type_arguments import (
    UNWRITTEN,
    Written,
    binds_type_arguments,
    reads_base_arguments,
)
from knoxidx.graph.unions import TypeUnion
from knoxidx.graph.value_types import UNION as UNION
from knoxidx.graph.value_types import UNION_MAX as UNION_MAX
from knoxidx.graph.value_types import ValueTypes
from knoxidx.parse.file_index import FileIndex
from knoxidx.parse.name_paths import ELEMENT_SEGMENT, type_arguments, type_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from knoxidx.languages.protocol import ResolutionRules

EXACT = Confidence.EXACT.value  # plain strings, as file_index's kinds
INFERRED = Confidence.INFERRED.value


class ScopeResolver(ValueTypes):
    """What names and paths denote (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        # (path, class, base) -> the base's arguments in the class's `extends` clause: the
        # facts do not change for the resolver's life (one update), so the scan runs once
        self._base_arguments: dict[tuple[str, int, str], tuple[str, ...]] = {}

    def forget(self) -> None:
        super().forget()
        self._base_arguments.clear()

    def resolve_path(
        self, fi: FileIndex, path: NamePath, scope: int, want_type: bool = False,
        site: int = 0, held: bool = False
    ) -> tuple[list[Symbol], str]:
        """Symbols a dotted path denotes from ``scope`` and the confidence of the result.
        ``site``: where it is read (a ``point``; 0 where that does not matter), which picks
        among a local's bindings (see ``FileIndex.reaching``). ``held``: a last member
        declared of a type parameter of its class is read as what it holds (`l.head` of a
        `List<Type> l`: a Type), not as the member.

        A segment ending in "()" is a call: the path continues from what it returns.
        """
        items_only = bool(path) and path[0] == ITEMS_HEAD  # the next name is no local's
        if items_only:
            path = path[1:]
        if not path:
            return [], EXACT
        head = path[0]
        inferred = False
        if head == "?":
            return [], EXACT
        called = head.endswith("()")
        if called:
            head = head[:-2]
        current, inferred = self._head(fi, head, scope,
                                       items_only or (want_type and len(path) == 1), called,
                                       site)
        return self._follow(path, current, inferred, called, fi, scope, site, held)

    def _through_element(self, fi: FileIndex, path: NamePath, scope: int
                         ) -> tuple[list[Symbol], str]:
        """A path through an element of a collection (`xs[i].run`: ("xs", "[]", "run")): the
        types of the last element read (see :meth:`_element_types`), then its members."""
        at = len(path) - 1 - path[::-1].index(ELEMENT_OF)
        elements = self.binding_type(fi, Binding(scope, "", path[:at + 1], False))
        return self._follow(path[at:], elements, True, False)

    def _head(self, fi: FileIndex, head: str, scope: int, want_type: bool = False,
              called: bool = False, site: int = 0) -> tuple[list[Symbol], bool]:
        """What a path's first name (without its call) denotes from ``scope``, and whether
        that went through an instance's type. ``called``: the head is called."""
        rules: ResolutionRules = fi.rules
        current = rules.special_head(self, fi, head, scope) if head in rules.special_heads \
            else None
        if current is not None:
            return current, head in rules.self_names or head == "super"
        return self.lookup(fi, head, scope, want_type, called, site)

    def _follow(self, path: NamePath, current: list[Symbol], inferred: bool,
                called: bool, fi: FileIndex | None = None, scope: int = -1, site: int = 0,
                held: bool = False) -> tuple[list[Symbol], str]:
        """The rest of :meth:`resolve_path` once its head denotes ``current``: the head's
        call, then each further segment as a member of what the path denotes so far. ``fi``,
        ``scope`` and ``site``: where the head was read (its type arguments, where a
        local's)."""
        if fi is not None and ELEMENT_SEGMENT in path and not indexes_elements(fi.family):
            return self._through_element(fi, path, scope)
        written: Written | None = None
        if fi is not None and len(path) > 1 and binds_type_arguments(fi.family):
            written = self._local_written(fi, path[0], scope, site) if not called else None
            if written is None:  # a field's or a method's: read as a member's is
                substituted, written = self._through_type_arguments(current, UNWRITTEN,
                                                                    called, (fi, scope))
                if substituted:
                    current, inferred, called = substituted, True, False
                written = written or UNWRITTEN
        # `this._def.innerType`: the member after `this` may hold a type argument of a base
        # (Java's `this` was read above, of no written arguments)
        reader = (fi, scope) if fi is not None and len(path) > 2 \
            and (written is None or written == UNWRITTEN) \
            and path[0] in fi.rules.self_names and reads_base_arguments(fi.family) else None
        if reader is not None:
            written = UNWRITTEN
        if called:
            current, inferred = self.call_results(current), True
        last = len(path) - 1
        union = isinstance(current, TypeUnion)
        split = False
        results = fi.rules.argument_results if fi is not None and written is not None else None
        for at in range(1, len(path)):
            segment = path[at]
            if not current:
                if fi is not None and fi.rules.outside_receivers_hold_elements \
                        and segment[-2:] == "()" and segment[:-2] in fi.rules.element_results:
                    current = self.binding_type(fi, Binding(scope, "", (*path[:at], ELEMENT_OF),
                                                            False))
                    if current:
                        inferred = True
                        continue
                held_argument = self._argument_result(results, written, segment)
                if held_argument is None:
                    break
                current, written = held_argument
                inferred = True
                continue
            if segment == ELEMENT_SEGMENT:
                current, inferred = self.elements(current), True
                continue
            called = segment.endswith("()")
            if called:
                segment = segment[:-2]
            nxt: list[Symbol] = []
            receivers = current
            if union:
                # the types' members, each its own where they differ: the read of a union's
                # member (once: what it gives is no union the index knows of)
                union = False
                nxt = self._union_members(current, segment, not called and at < last)
                split = at == last and len(set(nxt)) > 1
            else:
                for symbol in current[:4]:
                    members, via_instance = self.member(symbol, segment)
                    if via_instance and not called and at < last:
                        members = self._property_values(members)
                    nxt.extend(members)
                    inferred = inferred or via_instance
            if not nxt and fi is not None and segment in (
                    fi.rules.same_type_methods if called else fi.rules.same_type_fields):
                # `sem.clone().acquire()`: a clone the project does not write (a derive's, an
                # Arc's) is of the receiver's type; so is `f().await` where f's result is read
                kept = [s for s in current[:4] if s[0] == INSTANCE_TAG]
                # (a receiver of a type outside the index: maybe one of its elements, below)
                if kept or not called or segment not in fi.rules.element_results:
                    current, inferred = kept, True
                    continue
            if not nxt and results:
                held_argument = self._argument_result(results, written, path[at])
                if held_argument is not None:
                    current, written = held_argument
                    inferred = True
                    continue
            current = dedupe(nxt)
            if not current and called and fi is not None \
                    and segment in fi.rules.element_results:
                # `xs.find(..).run()`: a collection's own method, returning an element
                current = self.binding_type(fi, Binding(scope, "", (*path[:at], ELEMENT_OF),
                                                        False))
                inferred = True
                continue
            if written is not None and (at < last or called or held):
                substituted, written = self._through_type_arguments(
                    current, written, called, reader if at == 1 else None, receivers)
                if substituted:
                    current, inferred = substituted, True
                    continue
            if called:
                if at < last and path[at + 1] != "await" and fi is not None \
                        and fi.rules.async_results_awaited and self._async(current):
                    current = []  # `lock.write().map(..)`: the future's method, not the guard's
                    continue
                current, inferred = self.call_results(current), True
        conf = UNION if split and len(current) > 1 else INFERRED if inferred else EXACT
        return current, conf

    def _argument_result(self, results: Mapping[tuple[str, str], int] | None,
                         written: Written | None, segment: str
                         ) -> tuple[list[Symbol], Written] | None:
        """Where ``segment`` calls a method of a type outside the index that returns one of
        the type arguments the receiver is written with (``rules.argument_results``: a Java
        `Map.Entry<K, V> e`'s `e.getValue()`), the types of that argument and its written
        type; None where it does not."""
        if not results or not written or not written[1] or not segment.endswith("()"):
            return None
        argument = results.get((written[0], segment[:-2]), -1)
        if not 0 <= argument < len(written[1]):
            return None
        found, inner = self._argument_types(*written[1][argument])
        return found, inner or UNWRITTEN

    def _union_members(self, union: list[Symbol], name: str, read: bool) -> list[Symbol]:
        """The members ``name`` of each type of ``union`` (their values where ``read`` as a
        value the path goes on from); none where a type has none: a type checker has no such
        member of the union."""
        out: list[Symbol] = []
        for symbol in union:
            members, via_instance = self.member(symbol, name)
            if not members:
                return []
            out.extend(self._property_values(members) if via_instance and read else members)
        return out

    def base_arguments(self, fi: FileIndex, index: int, base: str) -> tuple[str, ...]:
        """:func:`_base_arguments`, kept per (file, class, base) for the resolver's life."""
        key = (fi.path, index, base)
        arguments = self._base_arguments.get(key)
        if arguments is None:
            arguments = self._base_arguments[key] = _base_arguments(fi, index, base)
        return arguments


def _base_arguments(fi: FileIndex, index: int, base: str) -> tuple[str, ...]:
    """The type arguments the `extends` clause of the class at ``index`` writes for its base
    named ``base`` (`class A<T> extends B<X, C<T>>`: X, C<T>), as written; none where it
    extends no such base or writes none."""
    signature = fi.facts.defs[index].signature
    depth = 0
    for i, char in enumerate(signature):
        depth += (char in "<([{") - (char in ">)]}")
        if depth == 0 and signature.startswith(" extends ", i):
            clause = signature[i + 9:]
            break
    else:
        return ()
    depth = 0
    for i, char in enumerate(clause):  # up to its `implements` clause or body, where written
        depth += (char in "<([{") - (char in ">)]}")
        if depth == 0 and (clause.startswith(" implements ", i) or char == "{"):
            clause = clause[:i]
            break
    clause = clause.strip()
    named = type_path(clause)
    return type_arguments(clause) if named and named[-1] == base else ()
