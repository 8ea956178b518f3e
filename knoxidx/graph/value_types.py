"""The types values hold (:class:`ValueTypes`, a base of
:class:`~knoxidx.graph.scopes.ScopeResolver`): a binding's (``x = Foo()``, ``x: Foo``, ``x =
make()``, a callback's parameter, a clone of the receiver), a local's from its bindings (a
:class:`~knoxidx.graph.unions.TypeUnion` where those that may reach a use disagree), a
variable's or a field's from its declaration.
"""

from __future__ import annotations

from knoxidx.core.facts import (
    CALLBACK_OF,
    ELEMENT_OF,
    INJECTED,
    ITEMS_HEAD,
    PAYLOAD_OF,
    TYPES_JOINER,
    UNKNOWN_VALUE,
    Binding,
    NamePath,
)
from knoxidx.core.symbols import DEFINITION_TAG, FILE_TAG, INSTANCE_TAG, MODULE_TAG, Symbol
from knoxidx.graph.call_results import CallResults
from knoxidx.graph.elements import indexes_elements
from knoxidx.graph.scope_reads import MAX_DEPTH, dedupe
from knoxidx.graph.type_arguments import reads_base_arguments
from knoxidx.graph.unions import TypeUnion
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.definitions import declared_type
from knoxidx.parse.file_index import CONSTANT, FUNCTION, TYPE_KINDS, VARIABLE, FileIndex
from knoxidx.parse.name_paths import RESULT_SEGMENT_PREFIX

# a call on a local whose bindings disagree on its type, resolved in each type (see TypeUnion):
# its confidence until resolve.py reads it, inferred where the types are this many at most
UNION = "union"
UNION_MAX = 3


class ValueTypes(CallResults):
    """The types values hold (see the module docstring)."""

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
            if path[-1] == ELEMENT_OF and not indexes_elements(fi.family):
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
                                             and reads_base_arguments(fi.family))
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
        out = dedupe(out)
        # `y = x` of a local x of several types: y is of them all
        return TypeUnion(out) if isinstance(found, TypeUnion) and len(out) > 1 else out

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
        return dedupe(out)

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
        return dedupe(out)

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


def _is_result(binding: Binding) -> bool:
    """Whether ``binding`` holds one of a call's results taken apart (`_, b := f()`, Rust's
    `let (a, b) = f()`): its path ends in a result segment."""
    last = binding.type_path[-1]
    return binding.is_call and last.startswith(RESULT_SEGMENT_PREFIX) and last[1:].isdigit()


def _callback(binding: Binding) -> bool:
    """Whether ``binding`` is of a callback's parameter (see ``CALLBACK_OF``)."""
    return binding.type_path[-1][:1] == CALLBACK_OF


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
    union = dedupe([t[0] for t in found])
    return TypeUnion(union) if len(union) <= UNION_MAX else []
