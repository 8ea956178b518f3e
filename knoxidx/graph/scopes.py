"""What a name or a dotted path denotes from a scope of a file.

The lexical scopes from the reference's outwards, then the module scope and the family's
fallbacks (package scope, wildcard imports, builtins); a path's further segments as members of
what it denotes so far (a class's own members, then its bases'; a module's names); and the
types values hold (``x = Foo()``, ``x: Foo``, a function's return type, an alias's target),
which members are then looked up in. Every read is recorded (:class:`~knoxidx.graph.lookups.
Lookups`); what differs per language comes from the family module's ``RULES``.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from knoxidx.core.facts import (
    CALLBACK_OF,
    ELEMENT_OF,
    INJECTED,
    ITEMS_HEAD,
    OWN_MEMBERS,
    PAYLOAD_OF,
    RETURNED,
    TYPE_ARGUMENTS,
    TYPES_JOINER,
    UNKNOWN_VALUE,
    YIELDED,
    Binding,
    Definition,
    Import,
    NamePath,
)
from knoxidx.core.model import Confidence
from knoxidx.core.symbols import (
    DEFINITION_TAG,
    EXTERNAL_TAG,
    FILE_TAG,
    INSTANCE_TAG,
    MODULE_TAG,
    Symbol,
)
from knoxidx.graph.lookups import Lookups, Workspace
from knoxidx.graph.unions import TypeUnion
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.definitions import declared_type, is_anonymous
from knoxidx.parse.file_index import (
    ASSIGNED_MEMBER,
    CLASS,
    CONSTANT,
    FUNCTION,
    MODULE,
    TYPE,
    TYPE_KINDS,
    VARIABLE,
    FileIndex,
)
from knoxidx.parse.name_paths import (
    ELEMENT_SEGMENT,
    RESULT_SEGMENT_PREFIX,
    result_types,
    type_arguments,
    type_path,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from knoxidx.languages.protocol import ResolutionRules

# what a Go container's type starts with (`[]T`, `[4]T`, `map[K]T`, `chan T`, `<-chan T`)
_CONTAINER_STARTS = ("[", "map", "chan", "<-")

EXACT = Confidence.EXACT.value  # plain strings, as file_index's kinds
INFERRED = Confidence.INFERRED.value
MAX_DEPTH = 12
_RETURNED = RETURNED[0]
_YIELDED = YIELDED[0]
# a call on a local whose bindings disagree on its type, resolved in each type (see TypeUnion):
# its confidence until resolve.py reads it, inferred where the types are this many at most
UNION = "union"
UNION_MAX = 3


class ScopeResolver(Lookups):
    """What names and paths denote (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._bases_cache: dict[tuple[str, int], tuple[list[Symbol], frozenset[str]]] = {}
        # (path, class, base) -> the base's arguments in the class's `extends` clause: the
        # facts do not change for the resolver's life (one update), so the scan runs once
        self._base_arguments: dict[tuple[str, int, str], tuple[str, ...]] = {}
        self._typing: set[tuple[str, Binding]] = set()
        # the functions whose `return`s are being read: a property returning itself (`return
        # self.srs` in `srs`) read through _property_values past the bindings' own guard
        self._returning: set[tuple[str, int]] = set()

    def forget(self) -> None:
        super().forget()
        self._bases_cache.clear()
        self._base_arguments.clear()

    # ---- paths -------------------------------------------------------------------------

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
        if fi is not None and ELEMENT_SEGMENT in path and not _indexes_elements(fi.family):
            return self._through_element(fi, path, scope)
        written: Written | None = None
        if fi is not None and len(path) > 1 and _binds_type_arguments(fi.family):
            written = self._local_written(fi, path[0], scope, site) if not called else None
            if written is None:  # a field's or a method's: read as a member's is
                substituted, written = self._through_type_arguments(current, _UNWRITTEN,
                                                                    called, (fi, scope))
                if substituted:
                    current, inferred, called = substituted, True, False
                written = written or _UNWRITTEN
        # `this._def.innerType`: the member after `this` may hold a type argument of a base
        # (Java's `this` was read above, of no written arguments)
        reader = (fi, scope) if fi is not None and len(path) > 2 \
            and (written is None or written == _UNWRITTEN) \
            and path[0] in fi.rules.self_names and _reads_base_arguments(fi.family) else None
        if reader is not None:
            written = _UNWRITTEN
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
            current = _dedupe(nxt)
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
        return found, inner or _UNWRITTEN

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

    # ---- type arguments (TYPE_ARGUMENTS) ----------------------------------------------

    def _local_written(self, fi: FileIndex, head: str, scope: int, site: int = 0
                       ) -> Written | None:
        """The written type arguments of the local or parameter ``head`` read in ``scope``
        at ``site`` (the TYPE_ARGUMENTS binding of the declaration that reaches it, see
        ``FileIndex.reaching``; without a site, or where it is not known, the first's; none
        known where it has none); None where ``head`` is no local of a function around
        ``scope``."""
        defs = fi.facts.defs
        s = scope
        while s >= 0 and defs[s].kind == FUNCTION:
            plain = fi.bindings.get((s, head))
            if plain is not None:
                bound = fi.bindings.get((s, head + TYPE_ARGUMENTS))
                if site and (s, head) in fi.ordered:
                    reached = fi.reaching(s, head, scope, site)
                    if not reached or len(reached) != 1:
                        return _UNWRITTEN
                    plain = reached[0]
                    bound = fi.placed_arguments.get((s, head, plain.at))
                if bound is None or plain.type_path[-1][:1] == CALLBACK_OF:
                    return _UNWRITTEN
                return plain.type_path[-1], tuple((fi, s, a) for a in bound.type_path)
            s = defs[s].parent
        return None

    def _written_of(self, symbol: Symbol, called: bool, outer: Written | None
                    ) -> Written | None:
        """The written type of the field ``symbol`` (or, ``called``, of the method's result)
        when it has type arguments; those naming a type parameter of its class are read as
        ``outer`` (the written type of what the member was read on) gives them."""
        declared: _Declared | None = self.memo(("written", symbol, called),
                                               self._declared_arguments, symbol, called)
        if declared is None:
            return None
        base, holder, arguments = declared
        declaring = self.defining(symbol[1])
        scope = self.definition(symbol).parent
        mapped: list[tuple[FileIndex, int, str]] = []
        for text, at in arguments:
            if outer is not None and 0 <= at < len(outer[1]) and outer[0] == holder:
                mapped.append(outer[1][at])
            else:
                mapped.append((declaring, scope, text))
        return base, tuple(mapped)

    def _declared_arguments(self, symbol: Symbol, called: bool) -> _Declared | None:
        """What :meth:`_written_of` reads of the declaration: the written type's name, the
        name of the class declaring the member, and each type argument as written with the
        position of the class's type parameter it names (-1: none)."""
        if symbol[0] != DEFINITION_TAG:
            return None
        d = self.definition(symbol)
        if d is None:
            return None
        declaring = self.defining(symbol[1])
        if d.kind == FUNCTION and called and len(d.signature_data) > 1:
            text = d.signature_data[1] or ""
        elif d.kind in (VARIABLE, CONSTANT) and not called:
            text = declaring.rules.written_type(d.signature, d.name)
        else:
            return None
        arguments = type_arguments(text) if "<" in text else ()
        base = type_path(text) if arguments else ()
        if not base:
            return None
        parameters = _type_parameters(declaring, d.parent)
        holder = declaring.facts.defs[d.parent].name if d.parent >= 0 else ""
        return base[-1], holder, tuple(
            (a, parameters.index(a) if a in parameters else -1) for a in arguments)

    def _through_type_arguments(self, members: list[Symbol], written: Written, called: bool,
                                reader: tuple[FileIndex, int] | None = None,
                                receivers: list[Symbol] | None = None
                                ) -> tuple[list[Symbol], Written | None]:
        """Where the one member a path segment denotes is declared of a type parameter of its
        class (`A head` in `List<A>`, `A get()`), the types of what it holds: the type
        argument the value it was read on is written with (`List<Type> l`: `l.head` holds a
        Type), else the parameter's bound (`T extends Symbol`) where the member is read by
        its name inside its class (``reader``: the file and scope; a subclass may bind the
        parameter, `extends Base<X>`); and the written type of what it holds, for the next
        segment."""
        if len(members) == 2:  # a field and a method of its name (`packages`, `packages()`)
            members = [m for m in members if m[0] == DEFINITION_TAG
                       and (d := self.definition(m)) is not None and (d.kind == FUNCTION) == called]
        if len(members) != 1 or members[0][0] != DEFINITION_TAG:
            return [], None
        member = members[0]
        d = self.definition(member)
        if d is None or (d.kind == FUNCTION) != called \
                or d.kind not in (FUNCTION, VARIABLE, CONSTANT) or len(d.type_hint) != 1:
            return [], self._written_of(member, called, written) if d is not None else None
        declaring = self.defining(member[1])
        parameters = _type_parameters(declaring, d.parent)
        name = d.type_hint[0]
        if name not in parameters or (d.kind == FUNCTION and len(d.signature_data) > 2 and any(
                p.split()[0] == name for p in d.signature_data[2] if p.split())):
            return [], self._written_of(member, called, written)
        at = parameters.index(name)
        cls = declaring.facts.defs[d.parent]
        if written[1] and written[0] == cls.name and at < len(written[1]):
            if written[1][at][2] or not _binds_type_arguments(declaring.family):
                return self._argument_types(*written[1][at])
            # a wildcard (`Context<?> c`, `<? super X>`): c.tree is of the parameter's bound
            wildcard = _parameter_bound(cls, at)
            return (self.binding_type(declaring, Binding(d.parent, "", wildcard, False))
                    if wildcard else [], None)
        if not written[1] and reader is not None and _reads_base_arguments(reader[0].family):
            # read inside a subclass whose `extends Base<X>` writes the parameter's argument
            subclass = _enclosing_class(reader[0], reader[1])
            arguments = self.base_arguments(reader[0], subclass, cls.name) \
                if subclass >= 0 else ()
            if at < len(arguments):
                return self._argument_types(reader[0], subclass, arguments[at])
        if not written[1] and receivers and len(receivers) == 1 \
                and receivers[0][0] == INSTANCE_TAG and _reads_base_arguments(declaring.family):
            # read on a subclass's instance: the argument its extends clauses write for it
            inherited = self._inherited_argument(
                (DEFINITION_TAG, receivers[0][1], receivers[0][2]),
                (DEFINITION_TAG, member[1], d.parent), at)
            if inherited is not None:
                return self._argument_types(*inherited)
        if written[1] or reader is None or reader[0].path != member[1] \
                or not _inside(reader[0], reader[1], d.parent):
            return [], None  # an inherited member: its parameter is not the value's
        bound = _parameter_bound(cls, at)
        if not bound:
            return [], None
        return self.binding_type(declaring, Binding(d.parent, "", bound, False)), None

    def _inherited_argument(self, sub: Symbol, base: Symbol, at: int
                            ) -> tuple[FileIndex, int, str] | None:
        """The type argument the class ``sub`` gives the type parameter at ``at`` of its
        base class ``base`` through the extends clauses between them (`Node extends
        TarjanNode<ListBuffer<Type>, Node>`, `TarjanNode<D, N> extends AbstractNode<D, N>`:
        AbstractNode's D is ListBuffer<Type>), with the file and class it is written in; None
        where ``sub`` is no proper subclass of ``base`` or leaves the parameter its own."""
        chain = self._base_chain(sub, base, 0)
        if not chain:
            return None
        for lower, upper in reversed(list(zip(chain, chain[1:], strict=False))):
            fi = self.index(lower[1])
            upper_fi = self.index(upper[1])
            if fi is None or upper_fi is None:
                return None
            arguments = self.base_arguments(fi, lower[2], upper_fi.facts.defs[upper[2]].name)
            if at >= len(arguments):
                return None
            text = arguments[at].strip()
            parameters = _type_parameters(fi, lower[2])
            if text not in parameters:
                return fi, lower[2], text
            at = parameters.index(text)  # the lower class's own parameter: further down
        return None

    def _base_chain(self, cls: Symbol, base: Symbol, depth: int) -> list[Symbol]:
        """The classes from ``cls`` up to its base ``base`` along extends clauses (both
        ends included), [] where ``base`` is none of its bases."""
        if depth > MAX_DEPTH:
            return []
        for parent in self.bases_of(cls[1], cls[2]):
            if parent == base:
                return [cls, base]
            rest = self._base_chain(parent, base, depth + 1)
            if rest:
                return [cls, *rest]
        return []

    def base_arguments(self, fi: FileIndex, index: int, base: str) -> tuple[str, ...]:
        """:func:`_base_arguments`, kept per (file, class, base) for the resolver's life."""
        key = (fi.path, index, base)
        arguments = self._base_arguments.get(key)
        if arguments is None:
            arguments = self._base_arguments[key] = _base_arguments(fi, index, base)
        return arguments

    def _argument_types(self, where: FileIndex, scope: int, text: str
                        ) -> tuple[list[Symbol], Written | None]:
        """The types of the type argument ``text`` written in ``scope`` of ``where``, and its
        written type for the next segment; where it names a type parameter of a class around
        ``scope`` whose family reads bases' arguments (TypeScript's `T extends ZodTypeAny`),
        that parameter's bound."""
        typed = type_path(text) if text else ()
        if not typed:
            return [], None
        if len(typed) == 1 and _reads_base_arguments(where.family):
            owner = _enclosing_class(where, scope)
            parameters = _type_parameters(where, owner) if owner >= 0 else []
            if typed[0] in parameters:
                bound = _parameter_bound(where.facts.defs[owner], parameters.index(typed[0]))
                return (self.binding_type(where, Binding(owner, "", bound, False))
                        if bound else [], None)
        inner = type_arguments(text)
        return (self.binding_type(where, Binding(scope, "", typed, False)),
                (typed[-1], tuple((where, scope, a) for a in inner)) if inner else None)

    def _async(self, symbols: list[Symbol]) -> bool:
        """Whether each of ``symbols`` is an `async` function (its call gives a future)."""
        if not symbols:
            return False
        for s in symbols[:4]:
            if s[0] != DEFINITION_TAG:
                return False
            d = self.definition(s)
            if d.kind != FUNCTION or _ASYNC_SIGNATURE.search(d.signature) is None:
                return False
        return True

    def call_results(self, symbols: list[Symbol]) -> list[Symbol]:
        """What calling each symbol yields: an instance of a class, a function's return type."""
        out: list[Symbol] = []
        for symbol in symbols[:4]:
            if symbol[0] != DEFINITION_TAG:
                continue
            d = self.definition(symbol)
            if d.kind in TYPE_KINDS:
                out.extend(self.instances_of(symbol))
            elif d.kind == FUNCTION and d.type_hint:
                out.extend(self.returns(symbol))
        return _dedupe(out)

    def _property_values(self, members: list[Symbol]) -> list[Symbol]:
        """The members with each method read as a value (a ``@property``, a JavaScript `get`)
        replaced by what it returns: ``self.compiler.process()`` is the compiler's method, not the property's."""
        out: list[Symbol] = []
        for member in members:
            d = self.definition(member) if member[0] == DEFINITION_TAG else None
            rules = self.defining(member[1]).rules if d is not None else None
            if d is not None and rules is not None and d.kind == FUNCTION and d.type_hint \
                    and (rules.getter_prefix and d.signature.startswith(rules.getter_prefix)
                         or len(d.signature_data) > 3
                         and rules.read_as_value(d.signature_data[3])
                         and (d.type_hint != RETURNED
                              or rules.returns_read(d.signature_data[3]))):
                out.extend(self.returns(member))
            else:
                out.append(member)
        return out

    def elements(self, symbols: list[Symbol]) -> list[Symbol]:
        """What indexing or ranging over each value yields (a path's ``[]`` segment, which Go
        bindings write): its own type's instance where that is a struct or interface, for Go
        reads a container's declared type as its element's (``[]*T`` as T: name_paths'
        _CONTAINER_PREFIX) and neither can be ranged over; nothing for a named type of
        another kind: see :meth:`_named_elements`."""
        out: list[Symbol] = []
        for symbol in symbols[:4]:
            if symbol[0] == DEFINITION_TAG and self.definition(symbol).kind in (VARIABLE,
                                                                                CONSTANT):
                out.extend(self.elements(self.value_type(symbol)))
            elif symbol[0] == INSTANCE_TAG:
                out.extend(self._named_elements(symbol)
                           if self.definition(symbol).kind == TYPE else [symbol])
        return _dedupe(out)

    def _named_elements(self, symbol: Symbol) -> list[Symbol]:
        """An element of a value of the named type ``symbol`` (not a struct or interface),
        where a container's declared type reads as its element's: `[]T` and `T` are both T. A
        value whose elements have no methods (`type RefSpec string`, `type Hash [20]byte`)
        cannot be what a member is read on, so the container was `[]T` and the element a T;
        a named container of a named type (`type byKind []*Item`) is indexed itself far more
        often than put in another one (`a[i]` in its sort methods): the element is an Item."""
        d = self.definition(symbol)
        if d.type_hint:  # an alias whose target is not the project's: nothing known of it
            return []
        underlying = d.signature[len(d.name):]
        if underlying.startswith("["):  # type parameters: `List[T any] []T`
            depth = 0
            for i, char in enumerate(underlying):
                depth += (char == "[") - (char == "]")
                if depth == 0:
                    underlying = underlying[i + 1:]
                    break
        underlying = underlying.strip()
        if underlying.startswith(_CONTAINER_STARTS):
            element = type_path(underlying, True)
            if element:
                fi = self.defining(symbol[1])
                found = self.binding_type(fi, Binding(d.parent, "", element, False))
                if found:
                    return found
        return [symbol]

    def lookup(
        self, fi: FileIndex, name: str, scope: int, want_type: bool = False,
        called: bool = False, site: int = 0
    ) -> tuple[list[Symbol], bool]:
        """Lexical lookup of a bare name: enclosing scopes, then the module, then the family's
        fallbacks (package scope, wildcard imports, builtins). ``want_type``: the name is in a
        type position, so values (fields, variables, locals) do not shadow it; ``called``: it
        is called, so in a family whose locals cannot be (Java) they do not shadow it;
        ``site``: where it is read (see resolve_path)."""
        if not fi.walk_needed(name, scope):
            # straight to the module scope, recording what the walk would have: the miss in
            # the reference's own scope when that is no function body
            if scope >= 0:
                self.missed(fi, scope, name)
            return self.memo(("module-scope", fi.path, name, want_type),
                             self._module_scope, fi, name, want_type), False
        rules: ResolutionRules = fi.rules
        if rules.class_members_visible and scope >= 0:
            cls = fi.class_entry(name, scope)
            if cls >= 0:
                return self._class_scopes_memo(fi, cls, name, want_type), False
        return self._walk(fi, name, scope, want_type, called, site)

    def _walk(self, fi: FileIndex, name: str, scope: int, want_type: bool,
              called: bool = False, site: int = 0) -> tuple[list[Symbol], bool]:
        """:meth:`lookup` where neither of its shortcuts applies: the scopes from ``scope``
        outwards, then the module scope."""
        defs = fi.facts.defs
        rules: ResolutionRules = fi.rules
        skip_bindings = want_type or (called and not rules.locals_callable)
        s = scope
        while s >= 0:
            d = defs[s]
            # an inline module (Rust `mod parsing { use ...; }`, a TypeScript namespace) binds
            # names for what it holds, as a function does
            if d.kind == FUNCTION or d.kind == MODULE or s == scope:
                binding = None if skip_bindings else fi.bindings.get((s, name))
                # (a variable's value binds a function literal's parameters: Go's extraction)
                if binding is not None and d.kind in (FUNCTION, VARIABLE, CONSTANT):
                    reached = fi.reaching(s, name, scope, site) if site else None
                    if reached is None:
                        typed = self.local_type(fi, binding)
                        return (typed, True) if typed else ([], False)
                    if reached:
                        typed = self.reached_type(fi, reached)
                        return (typed, True) if typed else ([], False)
                    # no binding of it in scope at the site: no local of this function there
                found = self._scope_entry(fi, s, name, want_type)
                if found is not None:
                    if s == scope and d.kind in TYPE_KINDS and name == d.name:
                        # a class's own name inside it is the class (as _class_scope has
                        # it), not the member named like it: a Java constructor
                        return [(DEFINITION_TAG, fi.path, s)], False
                    return found, False
                if d.kind == FUNCTION and name in rules.self_names and rules.self_binds_anywhere:
                    cls = fi.class_of(s)
                    if cls >= 0:
                        return [(INSTANCE_TAG, fi.path, cls)], True
            elif d.kind in TYPE_KINDS and rules.class_members_visible:
                if fi.outside_functions(s):
                    return self._class_scopes_memo(fi, s, name, want_type), False
                members = self._class_scope(fi, s, name, want_type)
                if members:
                    return members, False
            s = d.parent
        return self.memo(("module-scope", fi.path, name, want_type),
                         self._module_scope, fi, name, want_type), False

    def _class_scope(self, fi: FileIndex, s: int, name: str, want_type: bool) -> list[Symbol]:
        """``name`` as the class at ``s`` of ``fi`` sees it: itself, or one of its members."""
        if name == fi.facts.defs[s].name:  # a class's own name inside it is the class
            return [(DEFINITION_TAG, fi.path, s)]
        # member()'s answer for a class, without its dispatch (it would read the class's
        # definition to learn its kind, and record this file, which class_member does)
        members = self.class_member(fi.path, s, name)
        if want_type:
            members = [m for m in members if self.definition(m).kind in TYPE_KINDS]
        return members

    def _class_scopes_memo(self, fi: FileIndex, s: int, name: str,
                           want_type: bool) -> list[Symbol]:
        """:meth:`_class_scopes`, once per (class, name): the walk from a class depends on
        neither the method the name is read in nor the reference."""
        return self.memo(("class-scope", fi.path, s, name, want_type),
                         self._class_scopes, fi, s, name, want_type)

    def _class_scopes(self, fi: FileIndex, s: int, name: str, want_type: bool) -> list[Symbol]:
        """The lexical walk from the class at ``s``, which no function encloses, up to the
        module scope (:meth:`lookup`'s, less the function scopes it cannot meet)."""
        defs = fi.facts.defs
        while s >= 0:
            d = defs[s]
            if d.kind in TYPE_KINDS:
                members = self._class_scope(fi, s, name, want_type)
                if members:
                    return members
            s = d.parent
        return self.memo(("module-scope", fi.path, name, want_type),
                         self._module_scope, fi, name, want_type)

    def _module_scope(self, fi: FileIndex, name: str, want_type: bool) -> list[Symbol]:
        found = self._scope_entry(fi, -1, name, want_type)
        if found is not None:
            return found
        return fi.rules.module_fallback(self, fi, name)

    def _scope_entry(
        self, fi: FileIndex, scope: int, name: str, want_type: bool
    ) -> list[Symbol] | None:
        """A definition or import binding ``name`` directly in ``scope``. An import wins over a
        variable of the same name (``const lib = require("./lib")`` is both)."""
        hit = fi.children.get((scope, name))
        imports = fi.imports.get((scope, name))
        if not hit and not imports:
            self.missed(fi, scope, name)
        if hit:
            if len(hit) > 1 and fi.rules.classes_block_scoped and sum(
                    fi.facts.defs[i].kind == CLASS for i in hit) > 1:
                return []  # same-named classes in blocks the index does not model: no guess
            kind = fi.facts.defs[hit[-1]].kind
            value = kind in (VARIABLE, CONSTANT) or kind == FUNCTION and want_type \
                and fi.rules.declared_types_name_items  # (Rust's `fmt::Formatter` in `fn fmt`)
            if not (value and (imports or want_type)):
                return [(DEFINITION_TAG, fi.path, hit[-1])]
        if imports:
            return self._bind_imports(fi, imports)
        return None

    def _bind_imports(self, fi: FileIndex, imports: list[Import]) -> list[Symbol]:
        imp = imports[-1]  # the last import of a name wins, as at run time
        return self.memo(("import", fi.path, imp),
                         lambda: _dedupe(fi.rules.import_binding(self, fi, imp)))

    # ---- members -----------------------------------------------------------------------

    def member(self, symbol: Symbol, name: str, depth: int = 0) -> tuple[list[Symbol], bool]:
        """What ``symbol.name`` denotes; the flag says it went through an instance's type."""
        tag = symbol[0]
        if tag == EXTERNAL_TAG:
            return [symbol], False  # a member of something external is external
        if tag == MODULE_TAG or tag == FILE_TAG:
            family = symbol[1] if tag == MODULE_TAG else self._family(symbol[1])
            fi_rules = family_plugin(family).RULES
            return fi_rules.module_member(self, symbol, name), False
        d = self.definition(symbol)
        if d is None:
            return [], False
        if tag == INSTANCE_TAG:
            found = self.class_member(symbol[1], symbol[2], name)
            if not found and d.kind == FUNCTION:
                found = self._result_member(symbol, name)
            return (found or self.attribute_types(symbol[1], symbol[2], name)), True
        kind = d.kind
        if kind in TYPE_KINDS:
            if kind == TYPE and d.type_hint:
                aliased = self.aliased(symbol)
                if aliased:  # `Alias::new()`: the aliased type's
                    return _dedupe([m for t in aliased
                                    for m in self.class_member(t[1], t[2], name)]), False
            return self.class_member(symbol[1], symbol[2], name), False
        if kind == MODULE:
            fi = self.index(symbol[1])
            hit = self.child(fi, symbol[2], name) if fi else None
            return ([(DEFINITION_TAG, symbol[1], hit[-1])] if hit else []), False
        if kind in (VARIABLE, CONSTANT) and depth < MAX_DEPTH:
            if self.defining(symbol[1]).rules.wrapper_method(d.signature, name):
                return [], True  # `self.boxed.clone()`: Box's clone, not the boxed type's
            typed = self.value_type(symbol)
            out: list[Symbol] = []
            for t in typed:
                members, _ = self.member(t, name, depth + 1)
                out.extend(members)
            if not out:
                # an object literal's own methods: `const Cache = { get(key) {..} }`
                fi = self.index(symbol[1])
                hit = self.child(fi, symbol[2], name) if fi else None
                if hit:
                    return [(DEFINITION_TAG, symbol[1], hit[-1])], False
            return out, True
        if kind == FUNCTION and depth < MAX_DEPTH and len(d.signature_data) > 3 \
                and d.signature_data[3]:
            # `cli.command` of a `cli` that `@click.group()` made a Group: that type's member
            out = []
            for t in self.decorated(symbol):
                out.extend(self.member(t, name, depth + 1)[0])
            return _dedupe(out), True
        return [], False

    def decorated(self, symbol: Symbol) -> list[Symbol]:
        """The instance types the name of the decorated function ``symbol`` holds where its
        decorators say (the family's ``decorated_types``), [] where it holds the function."""
        if self._typing or self._returning:  # (inside another's: a partial answer, not kept)
            return self._decorated(symbol)
        return self.memo(("decorated", symbol), self._decorated, symbol)

    def _decorated(self, symbol: Symbol) -> list[Symbol]:
        with self.entering(("decorated", symbol)) as fresh:
            if not fresh:  # `@f.x` over `def f`
                return []
            fi = self.defining(symbol[1])
            return fi.rules.decorated_types(self, fi, symbol[2])

    def _family(self, path: str) -> str:
        fi = self.index(path)
        return fi.family if fi else ""

    def class_member(self, path: str, index: int, name: str, depth: int = 0) -> list[Symbol]:
        """``name`` in the class at (path, index) or, failing that, its bases in order (MRO)."""
        if depth == 0:
            return self.memo(("member", path, index, name),
                             self._class_member, path, index, name, 0)
        return self._class_member(path, index, name, depth)

    def _class_member(self, path: str, index: int, name: str, depth: int) -> list[Symbol]:
        fi = self.index(path)
        if fi is None or depth > MAX_DEPTH:
            return []
        d = fi.facts.defs[index]
        # methods declared apart (Go receivers, Rust impls) before fields of the same name:
        # `x.len()` is the method even where a field `len` exists
        owned = [
            (p, i) for p, i, method in self.methods_of(fi.family, d.name)
            if method == name and fi.rules.owner_matches(self, fi, index, p, i)
        ] if fi.rules.out_of_line_methods else []
        hit = self.child(fi, index, name)
        if not hit and fi.assigns_members and d.kind == CLASS:
            hit = self._constructor_assigned(fi, index, name)
        if hit and depth and name == d.name:
            # a base's constructor (Java names it as its class) is no member a subclass
            # inherits: the name read there is the base class itself
            hit = [i for i in hit if fi.facts.defs[i].kind != FUNCTION]
        if owned:
            # and a field of the same name (a Rust getter: `fn title(&self) -> &str {
            # &self.title }`): both, and the reference picks (see Resolver._by_use)
            defs = fi.facts.defs
            return [(DEFINITION_TAG, p, i) for p, i in owned] + [
                (DEFINITION_TAG, path, i) for i in hit or () if defs[i].kind != FUNCTION]
        if hit:
            return [(DEFINITION_TAG, path, i) for i in hit]
        for base in self.bases_of(path, index):
            found = self._class_member(base[1], base[2], name, depth + 1)
            if found:
                return found
        return []

    def _constructor_assigned(self, fi: FileIndex, index: int, name: str) -> list[int]:
        """The functions the constructor of the class at ``index`` assigns to the receiver's
        member ``name`` (JavaScript's `this.clear = function () {..}`): defined inside the
        constructor, which they close over, they are members of the class all the same."""
        out: list[int] = []
        for constructor in self.child(fi, index, fi.rules.constructor_name) or ():
            out.extend(self.child(fi, constructor, ASSIGNED_MEMBER + name) or ())
        return out

    def _result_member(self, symbol: Symbol, name: str) -> list[Symbol]:
        """The types of the property ``name`` of the inline object type the function
        ``symbol`` declares as its result (`f(): { status: ParseStatus }`, see
        parse/returns.py's result_member_bindings)."""
        fi = self.index(symbol[1])
        binding = fi.bindings.get((symbol[2], f"{OWN_MEMBERS[0]}.{name}")) if fi else None
        return self.binding_type(fi, binding) if fi is not None and binding is not None else []

    def attribute_types(self, path: str, index: int, name: str, depth: int = 0) -> list[Symbol]:
        """Types of an attribute set on the receiver in a method (``self.x = Foo()``), in the
        class or its bases: the attribute itself is no definition, so the value's type is what
        a further member access continues from."""
        fi = self.index(path)
        if fi is None or depth > MAX_DEPTH:
            return []
        binding = fi.attribute_binding(index, name)
        if binding is not None:
            typed = self.binding_type(fi, binding)
            if typed:
                return typed
        if fi.rules.bases_are_fields:
            embedded = [base for base in self.bases_of(path, index)
                        if base[0] == DEFINITION_TAG and self.definition(base).name == name]
            if embedded:
                return [i for base in embedded for i in self.instances_of(base)]
        for base in self.bases_of(path, index):
            found = self.attribute_types(base[1], base[2], name, depth + 1)
            if found:
                return found
        return []

    def bases_of(self, path: str, index: int) -> list[Symbol]:
        """Resolved base classes/interfaces, cached with the lookup keys their resolution
        consulted so that a cache hit records the same dependencies as a miss."""
        key = (path, index)
        cached = self._bases_cache.get(key)
        if cached is not None:
            self.keys |= cached[1]
            return cached[0]
        self._bases_cache[key] = ([], frozenset())  # cycle guard
        outer_keys, self.keys = self.keys, set()
        fi = self.index(path)
        out: list[Symbol] = []
        if fi is not None:
            d = fi.facts.defs[index]
            found = [s for ref in fi.bases.get(index, ())
                     for s in self.resolve_path(fi, ref.path, d.parent)[0]]
            if is_anonymous(d):
                # an anonymous class (`new T() {..}`): the type its `new` names, a base with
                # no Extends edge (javac reports that relation as the `new`'s call of T)
                found.extend(self.resolve_path(fi, d.type_hint, d.parent, want_type=True)[0])
            out.extend(s for s in found
                       if s[0] == DEFINITION_TAG and s != (DEFINITION_TAG, path, index))
            out.extend(fi.rules.extra_bases(self, fi, index))
        out = _dedupe(out)
        consulted = frozenset(self.keys)
        self._bases_cache[key] = (out, consulted)
        outer_keys |= consulted  # in place, as in memo()
        self.keys = outer_keys
        return out

    # ---- types of values ---------------------------------------------------------------

    def local_type(self, fi: FileIndex, first: Binding) -> list[Symbol]:
        """The instance types a function's local holds, from its ``first`` binding; where the
        family's locals may change type on rebinding, or its bindings widen it, its other
        bindings' too (the order of the bindings, and so which one reaches a use, is not
        known): a :class:`TypeUnion` where they disagree; none where a rebinding's type is not
        known and the family's locals change type (it may be the one a use sees)."""
        if fi.rules.results_yield_to_rebindings and _is_result(first):
            rebound = fi.rebindings.get((first.scope, first.name))
            if rebound:  # its first other binding, as if this one were not read
                others = [b for b in rebound if not _is_result(b)]
                return self.binding_type(fi, others[0]) if others else []
        typed = self.binding_type(fi, first)
        rebound = fi.rebindings.get((first.scope, first.name)) if typed else None
        if not rebound:
            return typed
        # a callback is no scope of its own: which one a reference sits in is not known, and
        # each one's parameter is of its own type (no union: a reference sees one of them)
        changes = fi.rules.rebinding_changes_type
        if changes or _callback(first) or any(_callback(b) for b in rebound):
            agreed = set(typed)
            if any(set(self.binding_type(fi, b)) != agreed for b in rebound):
                if not changes or _callback(first) or any(_callback(b) for b in rebound):
                    return []
                types = [self.binding_type(fi, b) for b in rebound]
                return _union([typed, *types]) if all(types) else []
        if fi.rules.rebindings_widen_type:
            # (the first's alone where the others make no union: more types, or ambiguous)
            return _union([typed, *[self.binding_type(fi, b) for b in rebound]]) or typed
        return typed

    def reached_type(self, fi: FileIndex, reached: tuple[Binding, ...]) -> list[Symbol]:
        """The instance types a local holds where the bindings ``reached`` may reach
        (``FileIndex.reaching``): theirs where they all agree, else each one's (a
        :class:`TypeUnion`; none past ``UNION_MAX`` types). One of a value
        whose type is not read (``UNKNOWN_VALUE``: `for x in xs:`) adds no type, as one being
        worked out already does not (a loop's `x = x.next()`, whose value reads x): the
        types are the others'."""
        if len(reached) > 1:
            reached = tuple([b for b in reached if b.type_path != UNKNOWN_VALUE
                             and (fi.path, b) not in self._typing]) or reached
        if reached[0].type_path == UNKNOWN_VALUE:
            return []
        typed: list[Symbol] = []
        agreed: set[Symbol] = set()
        for b in reached:
            found = self.binding_type(fi, b)
            if not found:
                continue
            if not typed:
                typed, agreed = found, set(found)
            elif set(found) != agreed:
                return _union([self.binding_type(fi, b) for b in reached])
        return typed

    def binding_type(self, fi: FileIndex, binding: Binding, depth: int = 0) -> list[Symbol]:
        """The instance types a binding holds: ``x = Foo()`` -> Foo, ``x = make()`` -> make's
        return type, ``x: Foo`` -> Foo. Asked afresh (no other binding's type being worked
        out), the answer is kept for the resolver's life (see :meth:`memo`): a local is read
        again and again (`x.a()`, `x.b()`: two paths), each read asked its type."""
        if depth == 0 and not self._typing:
            return self.memo(("binding", fi.path, binding), self._binding_type, fi, binding, 0)
        return self._binding_type(fi, binding, depth)

    def _binding_type(self, fi: FileIndex, binding: Binding, depth: int) -> list[Symbol]:
        key = (fi.path, binding)
        if depth > MAX_DEPTH or key in self._typing:
            return []  # `x = x.next()` and other self-referential bindings
        self._typing.add(key)
        path, result = binding.type_path, 0
        last = path[-1]
        if binding.is_call and last.startswith(RESULT_SEGMENT_PREFIX) and last[1:].isdigit():
            # `_, b := f()`: f's second result (a name, JavaScript's `#make`, is no number)
            path, result = path[:-1], int(last[1:])
        try:
            if path[0] == INJECTED:  # a pytest fixture's value
                return self._injected_types(fi, binding, depth)
            if path[-1][:1] == CALLBACK_OF:
                return self._callback_types(fi, binding, depth)
            if path[-1][:1] == PAYLOAD_OF:  # `E::V(x) =>`: what V's payload holds there
                return fi.rules.payload_types(self, fi, binding, depth)
            if path[-1] == ELEMENT_OF and not _indexes_elements(fi.family):
                # Rust: an element of a collection, read from where the collection is declared
                return self._element_types(fi, binding, depth)
            if TYPES_JOINER in path:  # a value of several bounds' types
                found = [s for joined in _joined_paths(path)
                         for s in self.resolve_path(fi, joined, binding.scope, want_type=True)[0]]
            else:
                # Go's `[]` segments (an element of the value) are followed by resolve_path;
                # `frame := frame.New(root)` reads the package `frame`: a name declared by a
                # statement is not in scope in its own value. A placed binding's value reads
                # the bindings that reach it (`x = x.asc()`: the earlier x), the package's
                # where none does.
                own = binding.is_call and path[0].removesuffix("()") == binding.name \
                    and not binding.at
                written = (ITEMS_HEAD, *path) if not binding.is_call and len(path) > 1 \
                    and fi.rules.declared_types_name_items else path
                # `const k = this._def.keyType`: k holds what a base's type parameter stands for
                found, _ = self.resolve_path(fi, written, -1 if own else binding.scope,
                                             want_type=not binding.is_call,
                                             site=binding.at - 1 if binding.at else 0,
                                             held=not binding.is_call and len(path) > 2
                                             and path[0] in fi.rules.self_names
                                             and _reads_base_arguments(fi.family))
                if not found and binding.is_call and len(path) > 1 \
                        and path[-1] in fi.rules.same_type_methods:
                    # `let rt = rt.clone()` of a type whose clone the project does not write
                    # (a derive's): what the receiver holds
                    return self._receiver_types(fi, binding, path[:-1])
        finally:
            self._typing.discard(key)
        out: list[Symbol] = []
        for symbol in found[:4]:
            if symbol[0] == INSTANCE_TAG:  # `self.x = x` where x is a typed local: the same type
                out.append(symbol)
                continue
            if (symbol[0] == FILE_TAG or symbol[0] == MODULE_TAG) and not binding.is_call:
                out.append(symbol)  # a namespace spread into an object: its members are the value's
                continue
            if symbol[0] != DEFINITION_TAG:
                continue
            d = self.definition(symbol)
            if result:
                if d.kind == FUNCTION:
                    out.extend(self.nth_result(symbol, result, depth + 1))
            elif d.kind in TYPE_KINDS:
                out.extend(self.instances_of(symbol))
            elif d.kind == FUNCTION and binding.is_call and d.type_hint:
                out.extend(self.returns(symbol, depth + 1))
            elif d.kind == FUNCTION and len(path) > 1:  # `c = self.compiler`, a @property
                out.extend(s for s in self._property_values([symbol]) if s != symbol)
            elif d.kind in (VARIABLE, CONSTANT) and d.type_hint and not binding.is_call:
                # a member's declared type: `({ board }: Props)` binds board to Props.board
                out.extend(self.value_type(symbol))
        if not found and binding.is_call and len(path) > 1 \
                and path[-1] in fi.rules.element_results:
            # `const x = xs.find(..)`: one of the collection's elements (see _follow)
            return self.binding_type(
                fi, Binding(binding.scope, "", (*path[:-1], ELEMENT_OF), False), depth + 1)
        out = _dedupe(out)
        # `y = x` of a local x of several types: y is of them all
        return TypeUnion(out) if isinstance(found, TypeUnion) and len(out) > 1 else out

    def _injected_types(self, fi: FileIndex, binding: Binding, depth: int) -> list[Symbol]:
        """The types of a parameter passed by its name (see ``INJECTED``): what each function
        the family's rules find under the name gives (see :meth:`produced`), or what is
        outside the index where one comes from there (pytest's own fixtures)."""
        out: list[Symbol] = []
        for symbol in fi.rules.injected(self, fi, binding.scope, binding.type_path[1]):
            if symbol[0] == EXTERNAL_TAG:
                out.append(symbol)
            else:
                out.extend(self.produced(symbol, depth + 1))
        return _dedupe(out)

    def produced(self, symbol: Symbol, depth: int = 0) -> list[Symbol]:
        """What the function ``symbol`` gives a fixture's users: the type a generator declares
        or its `yield`s hold (see ``YIELDED``), else what it returns."""
        fi = self.defining(symbol[1])
        d = fi.facts.defs[symbol[2]]
        written = d.signature_data[1] if len(d.signature_data) > 1 else None
        yielded = fi.rules.yielded_type(written) if written else ""
        if yielded:
            typed = type_path(yielded, getattr(family_plugin(fi.family), "SQUARE_TYPE_ARGS",
                                                False))
            return self.binding_type(fi, Binding(d.parent, "", typed, False), depth) \
                if typed else []
        if d.type_hint:
            return self.returns(symbol, depth)
        if self._typing or self._returning:  # (inside another's: a partial answer, not kept)
            return self._returned(fi, symbol[2], depth, _YIELDED)
        return self.memo(("yielded", symbol), self._returned, fi, symbol[2], depth, _YIELDED)

    def _receiver_types(self, fi: FileIndex, binding: Binding, receiver: NamePath
                        ) -> list[Symbol]:
        """The instance types of what ``receiver`` (read where ``binding``'s value is) holds."""
        found, _ = self.resolve_path(fi, receiver, binding.scope,
                                     site=binding.at - 1 if binding.at else 0)
        out: list[Symbol] = []
        for symbol in found[:4]:
            if symbol[0] == INSTANCE_TAG:
                out.append(symbol)
            elif symbol[0] == DEFINITION_TAG and self.definition(symbol).kind in (VARIABLE,
                                                                                CONSTANT):
                out.extend(self.value_type(symbol))
        return _dedupe(out)

    def _callback_types(self, fi: FileIndex, binding: Binding, depth: int) -> list[Symbol]:
        """The types of the first parameter of a function passed to a call (see
        ``CALLBACK_OF``): the first parameter's of the function type the called function
        declares at that position; where the call is of a collection's own method that passes
        it each element (``rules.element_callbacks``, `xs.forEach((x) => ..)`, no
        definition in the index), an element of the receiver."""
        callee = binding.type_path[:-1]
        # `&1`: the argument at 1; `&1.2`: that function's parameter at 2 (Java's `(a, b) ->`)
        argument, _, nth = binding.type_path[-1][1:].partition(".")
        position, index = int(argument), int(nth or 0)
        site = binding.at - 1 if binding.at else 0
        found, _ = self.resolve_path(fi, callee, binding.scope, site=site)
        out: list[Symbol] = []
        for symbol in found[:4]:
            if symbol[0] != DEFINITION_TAG:
                continue
            d = self.definition(symbol)
            parameters = d.signature_data[0] if d.kind == FUNCTION and d.signature_data else ()
            written = parameters[position][1] if position < len(parameters) else None
            if not written:
                continue
            declaring = self.defining(symbol[1])
            typed = declaring.rules.callback_parameter(written, index)
            path = declared_type(family_plugin(declaring.family), typed) if typed else ()
            if path and len(path) == 1 and len(callee) == 2:
                # `Function<A, B>` of a `List<A>`: the receiver's type argument for A
                substituted = self._receiver_argument(fi, callee[0], binding.scope, declaring,
                                                      d.parent, path[0])
                if substituted is not None:
                    out.extend(substituted)
                    continue
            if path:
                out.extend(self.binding_type(declaring, Binding(d.parent, "", path, False),
                                             depth + 1))
        if not found and position == 0 and index == 0 and len(callee) > 1 \
                and callee[-1] in fi.rules.element_callbacks:
            receiver = self._collection(fi, callee[:-1], binding.scope)
            out = self._element_types(
                fi, Binding(binding.scope, binding.name, (*receiver, ELEMENT_OF), False), depth)
        return _dedupe(out)

    def _receiver_argument(self, fi: FileIndex, receiver: str, scope: int,
                           declaring: FileIndex, cls: int, name: str) -> list[Symbol] | None:
        """The types of the type argument that the local ``receiver`` (read in ``scope``)
        is declared with for the type parameter ``name`` of the class at ``cls`` of
        ``declaring`` (`List<Tree> ts`: Tree for `List<A>`'s A); None where ``name`` is no
        type parameter of that class or the local writes no argument for it."""
        if not _binds_type_arguments(fi.family):
            return None
        parameters = _type_parameters(declaring, cls)
        if name not in parameters:
            return None
        written = self._local_written(fi, receiver, scope)
        at = parameters.index(name)
        if written is None or written[0] != declaring.facts.defs[cls].name \
                or at >= len(written[1]):
            return None
        where, s, text = written[1][at]
        typed = type_path(text) if text else ()
        return self.binding_type(where, Binding(s, "", typed, False)) if typed else []

    def _collection(self, fi: FileIndex, path: NamePath, scope: int) -> NamePath:
        """The path to the collection whose elements ``path``'s are: past calls that keep the
        receiver's elements (``rules.elements_kept``, `xs.filter(..)`), and a local of the
        function holding a call's result to that call (`const xs = this.getAll()`)."""
        kept = fi.rules.elements_kept
        while len(path) > 1 and path[-1].endswith("()") and path[-1][:-2] in kept:
            path = path[:-1]
        if len(path) == 1 and scope >= 0:
            local = fi.bindings.get((scope, path[0]))
            if local is not None and local.is_call and local.type_path \
                    and local.type_path[-1][:1] != CALLBACK_OF:
                path = (*local.type_path[:-1], local.type_path[-1] + "()")
                while len(path) > 1 and path[-1][:-2] in kept:
                    path = path[:-1]
        return path

    def _element_types(self, fi: FileIndex, binding: Binding, depth: int) -> list[Symbol]:
        """The types of an element of the collection `binding.type_path[:-1]` denotes (see
        ``ELEMENT_OF``), read from its declared type as written: the parameter's of that name
        of the binding's function, else the field's it resolves to or, when it is called,
        the function's return type (the family's ``element_type`` reads the element)."""
        collection = binding.type_path[:-1]
        kept = fi.rules.elements_kept  # `xs.concat()`: xs's elements
        while len(collection) > 1 and collection[-1].endswith("()") \
                and collection[-1][:-2] in kept:
            collection = collection[:-1]
        called = collection[-1].endswith("()")
        if called:
            collection = (*collection[:-1], collection[-1][:-2])
        written: list[tuple[FileIndex, int, str]] = []  # (file, scope, declared type)
        function = fi.facts.defs[binding.scope] if binding.scope >= 0 else None
        if len(collection) == 1 and not called and function is not None \
                and function.kind == FUNCTION and function.signature_data:
            written.extend((fi, binding.scope, declared)
                           for name, declared, *_ in function.signature_data[0]
                           if name == collection[0] and declared)
        if not written and not called and len(collection) == 1 \
                and _binds_type_arguments(fi.family):
            # `List<Tree> ts = ..`: the type arguments its declaration writes
            local = self._local_written(fi, collection[0], binding.scope)
            if local is not None and local[1]:
                where, s, _ = local[1][0]
                arguments = ", ".join(text for _, _, text in local[1])
                written.append((where, s, f"{local[0]}<{arguments}>"))
        if not written and not called:
            held = self._held_elements(fi, collection, binding.scope, depth)
            if held:
                return held
        if not written:
            found, _ = self.resolve_path(fi, collection, binding.scope)
            for symbol in found[:4]:
                if symbol[0] != DEFINITION_TAG:
                    continue
                d = self.definition(symbol)
                if called and d.kind == FUNCTION and d.signature_data and d.signature_data[1]:
                    written.append((self.defining(symbol[1]), d.parent, d.signature_data[1]))
                elif not called and d.kind in (VARIABLE, CONSTANT):
                    written.append((self.defining(symbol[1]), d.parent, d.signature))
        out: list[Symbol] = []
        for declaring, scope, declared in written:
            element = declaring.rules.element_type(declared)
            if element:
                path = declared_type(family_plugin(declaring.family), element)
                if path:
                    out.extend(self.binding_type(declaring, Binding(scope, "", path, False),
                                                 depth + 1))
            else:  # an iterator type of the project's own
                for item in declaring.rules.iterator_items(self, declaring, scope, declared)[:4]:
                    out.extend(self.instances_of(item))
        return _dedupe(out)

    def _held_elements(self, fi: FileIndex, collection: NamePath, scope: int, depth: int
                       ) -> list[Symbol]:
        """The types of the elements of a local's or a field's collection where a binding
        named for it says them (see ``ELEMENT_OF``: `xs.push(new T())`), or of the path a
        local copies (`const xs = this.xs`)."""
        if len(collection) > 1:  # a field of what the path before it denotes
            out: list[Symbol] = []
            owners, _ = self.resolve_path(fi, collection[:-1], scope)
            for owner in owners[:4]:
                if owner[0] == INSTANCE_TAG:
                    out.extend(self._field_elements(owner[1], owner[2], collection[-1], depth))
            return _dedupe(out)
        name, defs, s = collection[0], fi.facts.defs, scope
        while True:
            # what a function stores in its local collection (`xs.push(new T())`) is not
            # known in the functions nested in it (TypeScript's evolving `[]` stays `any[]`)
            held = fi.bindings.get((s, name + ELEMENT_OF)) if s == scope or s < 0 else None
            if held is not None:
                return self._agreed_elements(fi, held, depth)
            local = fi.bindings.get((s, name))
            if local is not None:
                copied = local.type_path
                if local.is_call and len(copied) > 1 and copied[-1] in fi.rules.elements_kept:
                    copied = copied[:-1]  # `const xs = this.xs.concat()`: the same elements
                elif local.is_call and fi.rules.called_locals_hold_elements \
                        and _names_a_value(copied[-1]) and all(map(_names_a_value, copied)):
                    # `let w = f(); if let Some(w) = w`: the elements of f's result
                    return self._element_types(
                        fi, Binding(s, "", (*copied[:-1], copied[-1] + "()", ELEMENT_OF), False),
                        depth + 1)
                elif local.is_call:
                    return []
                if not all(map(_names_a_value, copied)):
                    return []
                return self.binding_type(fi, Binding(s, "", (*copied, ELEMENT_OF), False),
                                         depth + 1)
            if s < 0:
                return []
            d = defs[s]
            if d.kind == FUNCTION and d.signature_data and any(
                    p[0] == name for p in d.signature_data[0]):
                return []  # a parameter of no known elements hides what is outside
            s = d.parent

    def _field_elements(self, path: str, index: int, name: str, depth: int) -> list[Symbol]:
        """The types of the elements of the field ``name`` of the class at (path, index) or
        of its bases, where a binding says them (see :meth:`_held_elements`)."""
        fi = self.index(path)
        if fi is None or depth > MAX_DEPTH:
            return []
        held = fi.attribute_binding(index, name + ELEMENT_OF)
        if held is not None:
            return self._agreed_elements(fi, held, depth)
        for base in self.bases_of(path, index):
            found = self._field_elements(base[1], base[2], name, depth + 1)
            if found:
                return found
        return []

    def _agreed_elements(self, fi: FileIndex, held: Binding, depth: int) -> list[Symbol]:
        """The types ``held`` says a collection's elements are, none where the scope's other
        bindings of them say other types (objects of several classes pushed)."""
        typed = self.binding_type(fi, held, depth + 1)
        for other in fi.rebindings.get((held.scope, held.name), ()):
            if set(self.binding_type(fi, other, depth + 1)) != set(typed):
                return []
        return typed

    def instances_of(self, symbol: Symbol) -> list[Symbol]:
        """An instance of the type definition ``symbol``: of what it stands for when it is an
        alias (``input: ParseStream`` holds a ParseBuffer), else of itself."""
        aliased = self.aliased(symbol)
        if aliased:
            return [(INSTANCE_TAG, t[1], t[2]) for t in aliased]
        return [(INSTANCE_TAG, symbol[1], symbol[2])]

    def aliased(self, symbol: Symbol, depth: int = 0) -> list[Symbol]:
        """The classes, interfaces or other types a type alias stands for (through aliases of
        aliases), or [] when ``symbol`` is no alias of a named type (an object type, a union,
        something outside the repository)."""
        d = self.definition(symbol)
        if d is None or d.kind != TYPE or not d.type_hint or depth > MAX_DEPTH:
            return []
        fi = self.index(symbol[1])
        if fi is None:
            return []
        found, _ = self.resolve_path(fi, d.type_hint, d.parent, want_type=True)
        out: list[Symbol] = []
        for target in found[:4]:
            if target[0] != DEFINITION_TAG or target == symbol:
                continue
            t = self.definition(target)
            if t.kind == TYPE and t.type_hint:
                out.extend(self.aliased(target, depth + 1) or [target])
            elif t.kind in TYPE_KINDS:
                out.append(target)
        return _dedupe(out)

    def returns(self, symbol: Symbol, depth: int = 0) -> list[Symbol]:
        fi = self.defining(symbol[1])
        d = fi.facts.defs[symbol[2]]
        hint = d.type_hint
        if hint == OWN_MEMBERS:  # a factory's object: members defined in the function
            return [(INSTANCE_TAG, symbol[1], symbol[2])]
        if hint == RETURNED:  # no declared type: what its `return` statements hold
            if self._typing or self._returning:  # (inside another's: a partial answer, not kept)
                return self._returned(fi, symbol[2], depth)
            return self.memo(("returned", symbol), self._returned, fi, symbol[2], depth)
        if hint and hint[-1] in fi.rules.self_type_names:
            cls = fi.class_of(d.parent) if d.parent >= 0 else -1
            if cls >= 0:
                return [(INSTANCE_TAG, fi.path, cls)]
            if d.owner:
                found, _ = self.lookup(fi, d.owner, -1)
                return [(INSTANCE_TAG, s[1], s[2]) for s in found if s[0] == DEFINITION_TAG]
            return []
        return self.binding_type(fi, Binding(d.parent, "", hint, False), depth + 1)  # a type

    def _returned(self, fi: FileIndex, index: int, depth: int, named: str = _RETURNED
                  ) -> list[Symbol]:
        """The types the RETURNED bindings (or others ``named``: YIELDED's) of the function at
        ``index`` hold (see parse/returns.py): theirs where every one that says a type says
        the same, else none (`return Foo()` in one branch, `return Bar()` in the other:
        neither is sure)."""
        first = fi.bindings.get((index, named))
        key = (fi.path, index)
        if first is None or key in self._returning:
            return []
        self._returning.add(key)
        typed: list[Symbol] = []
        agreed: set[Symbol] = set()
        try:
            for b in (first, *fi.rebindings.get((index, named), ())):
                found = self.binding_type(fi, b, depth + 1)
                if not found:
                    continue
                if not typed:
                    typed, agreed = found, set(found)
                elif set(found) != agreed:
                    return []
        finally:
            self._returning.discard(key)
        return typed

    def nth_result(self, symbol: Symbol, result: int, depth: int = 0) -> list[Symbol]:
        """The instance types of the function ``symbol``'s result at ``result`` (from 0), as
        its signature writes its results (Go's `(T, error)`)."""
        fi = self.defining(symbol[1])
        d = fi.facts.defs[symbol[2]]
        written = d.signature_data[1] if len(d.signature_data) > 1 else None
        types = result_types(written) if written else []
        if result >= len(types):
            return []
        square_args = getattr(family_plugin(fi.family), "SQUARE_TYPE_ARGS", False)
        typed = type_path(types[result], square_args)
        if not typed:
            return []
        return self.binding_type(fi, Binding(d.parent, "", typed, False), depth)

    def value_type(self, symbol: Symbol) -> list[Symbol]:
        """Instance types of a variable/constant/field definition."""
        fi = self.defining(symbol[1])
        d = fi.facts.defs[symbol[2]]
        if d.type_hint:
            return self.binding_type(fi, Binding(d.parent, "", d.type_hint, False))
        binding = fi.bindings.get((d.parent, d.name))
        if binding is not None:
            return self.binding_type(fi, binding)
        # `self.x = Foo()` inside a method of the class that declares field x
        if d.parent >= 0:
            for (scope, name), b in fi.bindings.items():
                if name.endswith("." + d.name) and scope >= 0 and fi.facts.defs[scope].parent == d.parent:
                    return self.binding_type(fi, b)
        return []


# A written type with its type arguments: its name, and each argument as written with where
# (file, scope) it is written (`List<Type>` read on a `List<A> tail` field of a value written
# `List<Type>`: the argument as the value's declaration writes it).
Written = tuple[str, tuple[tuple[FileIndex, int, str], ...]]
_UNWRITTEN: Written = ("", ())  # a value whose type arguments are not known
# a declaration's written type (see ScopeResolver._declared_arguments)
_Declared = tuple[str, str, tuple[tuple[str, int], ...]]


def _type_parameters(fi: FileIndex, index: int) -> list[str]:
    """The names of the type parameters the class at ``index`` declares (`<T extends S, U>`:
    T, U); none where ``index`` is no class."""
    if index < 0:
        return []
    d = fi.facts.defs[index]
    if d.kind not in TYPE_KINDS or not d.signature_data:
        return []
    return [p.split()[0] for p in d.signature_data[0] if p.split()]


def _inside(fi: FileIndex, scope: int, index: int) -> bool:
    """Whether ``scope`` of ``fi`` is the definition at ``index`` or lies inside it."""
    defs = fi.facts.defs
    while scope >= 0 and scope != index:
        scope = defs[scope].parent
    return scope == index


def _parameter_bound(cls: Definition, at: int) -> NamePath:
    """The path of the bound of the class's type parameter at ``at`` (`T extends a.B<C> & D`:
    a.B), () for none."""
    written = cls.signature_data[0][at].split(None, 2) if cls.signature_data else []
    if len(written) < 3 or written[1] != "extends":
        return ()
    # (TypeScript's default after the bound: `T extends S = S`)
    return type_path(written[2].partition("=")[0].partition("&")[0].strip())


def _enclosing_class(fi: FileIndex, scope: int) -> int:
    """The index of the innermost class (or other type) around ``scope``, -1 for none."""
    defs = fi.facts.defs
    while scope >= 0 and defs[scope].kind not in TYPE_KINDS:
        scope = defs[scope].parent
    return scope


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


@functools.cache
def _reads_base_arguments(family: str) -> bool:
    """Whether the family's members declared of a class's type parameter are read, inside a
    subclass, as the argument its `extends` clause writes (see ``READS_BASE_ARGUMENTS``)."""
    return bool(getattr(family_plugin(family), "READS_BASE_ARGUMENTS", False))


@functools.cache
def _binds_type_arguments(family: str) -> bool:
    """Whether the family's bindings say type arguments (see ``TYPE_ARGUMENTS``)."""
    return bool(getattr(family_plugin(family), "BINDS_TYPE_ARGUMENTS", False))


def _is_result(binding: Binding) -> bool:
    """Whether ``binding`` holds one of a call's results taken apart (`_, b := f()`, Rust's
    `let (a, b) = f()`): its path ends in a result segment."""
    last = binding.type_path[-1]
    return binding.is_call and last.startswith(RESULT_SEGMENT_PREFIX) and last[1:].isdigit()


def _callback(binding: Binding) -> bool:
    """Whether ``binding`` is of a callback's parameter (see ``CALLBACK_OF``)."""
    return binding.type_path[-1][:1] == CALLBACK_OF


def _names_a_value(segment: str) -> bool:
    """Whether a binding's path segment names a value read (no call, element, joined type
    or callback's parameter): a copy's path (`const xs = this.xs`)."""
    return segment != ELEMENT_OF and segment != TYPES_JOINER and segment[-1:] != ")" \
        and segment[:1] != CALLBACK_OF


# an `async fn`'s signature (Rust: `pub(crate) async unsafe fn f`)
_ASYNC_SIGNATURE = re.compile(r"\basync\s+(?:unsafe\s+)?(?:extern\s+\S+\s+)?fn\b")


def _indexes_elements(family: str) -> bool:
    """Whether the family's paths carry ``[]`` segments that resolve_path follows (Go)."""
    return bool(getattr(family_plugin(family), "INDEXES_ELEMENTS", False))


def _joined_paths(joined: NamePath) -> list[NamePath]:
    """The paths a ``TYPES_JOINER``-joined type path joins."""
    paths: list[NamePath] = []
    start = 0
    for i, segment in enumerate(joined):
        if segment == TYPES_JOINER:
            paths.append(joined[start:i])
            start = i + 1
    paths.append(joined[start:])
    return [p for p in paths if p]


def _union(types: list[list[Symbol]]) -> list[Symbol]:
    """The types several bindings give a local (those giving none left out): theirs where they
    agree, else each one's as a :class:`TypeUnion`, and none where that is more than
    ``UNION_MAX`` types or a binding's value may be of several (an ambiguous name's)."""
    found = [t for t in types if t]
    if not found:
        return []
    first = found[0]
    agreed = set(first)
    if all(set(t) == agreed for t in found[1:]):
        return first
    if any(len(t) > 1 for t in found):
        return []
    union = _dedupe([t[0] for t in found])
    return TypeUnion(union) if len(union) <= UNION_MAX else []


def _dedupe(symbols: list[Symbol]) -> list[Symbol]:
    if len(symbols) < 2:
        return symbols
    return list(dict.fromkeys(symbols))
