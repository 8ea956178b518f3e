"""What a call gives (:class:`CallResults`, a base of
:class:`~knoxidx.graph.scopes.ScopeResolver`): an instance of a class called, a function's
declared return type or what its `return`s hold, one of its results taken apart (Go's `(T,
error)`), what a fixture's function gives its users; and a property read as the value its
getter returns, and whether a call gives a future.
"""

from __future__ import annotations

import re

from knoxidx.core.facts import OWN_MEMBERS, RETURNED, YIELDED, Binding
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, INSTANCE_TAG, Symbol
from knoxidx.graph.elements import Elements
from knoxidx.graph.scope_reads import dedupe
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.file_index import FUNCTION, TYPE_KINDS, FileIndex
from knoxidx.parse.name_paths import result_types, type_path

_RETURNED = RETURNED[0]
_YIELDED = YIELDED[0]
# an `async fn`'s signature (Rust: `pub(crate) async unsafe fn f`)
_ASYNC_SIGNATURE = re.compile(r"\basync\s+(?:unsafe\s+)?(?:extern\s+\S+\s+)?fn\b")


class CallResults(Elements):
    """What calls give (see the module docstring)."""

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
        return dedupe(out)

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
        return dedupe(out)

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
