"""What a type parameter stands for where a member declared of it is read
(:class:`TypeArguments`, a base of :class:`~knoxidx.graph.scopes.ScopeResolver`): the type
argument the value it is read on is written with (``TYPE_ARGUMENTS`` bindings: `List<Type>
l`'s `l.head` holds a Type), the argument a subclass's `extends` clause writes for it, else
the parameter's bound (`T extends Symbol`); and the written type of what it holds, for the
next segment of a path.
"""

from __future__ import annotations

import functools

from knoxidx.core.facts import CALLBACK_OF, TYPE_ARGUMENTS, Binding, Definition, NamePath
from knoxidx.core.symbols import DEFINITION_TAG, INSTANCE_TAG, Symbol
from knoxidx.graph.members import Members
from knoxidx.graph.scope_reads import MAX_DEPTH
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.file_index import CONSTANT, FUNCTION, TYPE_KINDS, VARIABLE, FileIndex
from knoxidx.parse.name_paths import type_arguments, type_path

# A written type with its type arguments: its name, and each argument as written with where
# (file, scope) it is written (`List<Type>` read on a `List<A> tail` field of a value written
# `List<Type>`: the argument as the value's declaration writes it).
Written = tuple[str, tuple[tuple[FileIndex, int, str], ...]]
UNWRITTEN: Written = ("", ())  # a value whose type arguments are not known
# a declaration's written type (see TypeArguments._declared_arguments)
_Declared = tuple[str, str, tuple[tuple[str, int], ...]]


class TypeArguments(Members):
    """What type parameters stand for (see the module docstring)."""

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
                        return UNWRITTEN
                    plain = reached[0]
                    bound = fi.placed_arguments.get((s, head, plain.at))
                if bound is None or plain.type_path[-1][:1] == CALLBACK_OF:
                    return UNWRITTEN
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
            if written[1][at][2] or not binds_type_arguments(declaring.family):
                return self._argument_types(*written[1][at])
            # a wildcard (`Context<?> c`, `<? super X>`): c.tree is of the parameter's bound
            wildcard = _parameter_bound(cls, at)
            return (self.binding_type(declaring, Binding(d.parent, "", wildcard, False))
                    if wildcard else [], None)
        if not written[1] and reader is not None and reads_base_arguments(reader[0].family):
            # read inside a subclass whose `extends Base<X>` writes the parameter's argument
            subclass = _enclosing_class(reader[0], reader[1])
            arguments = self.base_arguments(reader[0], subclass, cls.name) \
                if subclass >= 0 else ()
            if at < len(arguments):
                return self._argument_types(reader[0], subclass, arguments[at])
        if not written[1] and receivers and len(receivers) == 1 \
                and receivers[0][0] == INSTANCE_TAG and reads_base_arguments(declaring.family):
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

    def _argument_types(self, where: FileIndex, scope: int, text: str
                        ) -> tuple[list[Symbol], Written | None]:
        """The types of the type argument ``text`` written in ``scope`` of ``where``, and its
        written type for the next segment; where it names a type parameter of a class around
        ``scope`` whose family reads bases' arguments (TypeScript's `T extends ZodTypeAny`),
        that parameter's bound."""
        typed = type_path(text) if text else ()
        if not typed:
            return [], None
        if len(typed) == 1 and reads_base_arguments(where.family):
            owner = _enclosing_class(where, scope)
            parameters = _type_parameters(where, owner) if owner >= 0 else []
            if typed[0] in parameters:
                bound = _parameter_bound(where.facts.defs[owner], parameters.index(typed[0]))
                return (self.binding_type(where, Binding(owner, "", bound, False))
                        if bound else [], None)
        inner = type_arguments(text)
        return (self.binding_type(where, Binding(scope, "", typed, False)),
                (typed[-1], tuple((where, scope, a) for a in inner)) if inner else None)

    def _receiver_argument(self, fi: FileIndex, receiver: str, scope: int,
                           declaring: FileIndex, cls: int, name: str) -> list[Symbol] | None:
        """The types of the type argument that the local ``receiver`` (read in ``scope``)
        is declared with for the type parameter ``name`` of the class at ``cls`` of
        ``declaring`` (`List<Tree> ts`: Tree for `List<A>`'s A); None where ``name`` is no
        type parameter of that class or the local writes no argument for it."""
        if not binds_type_arguments(fi.family):
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


@functools.cache
def reads_base_arguments(family: str) -> bool:
    """Whether the family's members declared of a class's type parameter are read, inside a
    subclass, as the argument its `extends` clause writes (see ``READS_BASE_ARGUMENTS``)."""
    return bool(getattr(family_plugin(family), "READS_BASE_ARGUMENTS", False))


@functools.cache
def binds_type_arguments(family: str) -> bool:
    """Whether the family's bindings say type arguments (see ``TYPE_ARGUMENTS``)."""
    return bool(getattr(family_plugin(family), "BINDS_TYPE_ARGUMENTS", False))
