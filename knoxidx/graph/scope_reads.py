"""What the parts of the scope resolver ask of one another.

:class:`~knoxidx.graph.scopes.ScopeResolver` is a chain of classes, one per kind of read, each
the base of the next: :class:`ScopeReads` (here), ``LexicalScopes`` (lexical: a bare name from
a scope), ``Members`` (members: a member of what a path denotes, through bases and aliases),
``TypeArguments`` (type_arguments: what a type parameter stands for), ``Elements`` (elements:
the elements of a collection), ``CallResults`` (call_results: what a call gives),
``ValueTypes`` (value_types: the types a binding holds), then ``ScopeResolver`` (scopes: what
a dotted path denotes). The reads recurse through one another (a member's type is a
binding's, a binding's is a path's): what a part asks of a later one is declared here and
answered there, as a method of the later class overrides it. Here too the guards every part
consults, under which an answer is partial and not kept.
"""

from __future__ import annotations

from knoxidx.core.facts import Binding, NamePath
from knoxidx.core.symbols import Symbol
from knoxidx.graph.lookups import Lookups, Workspace
from knoxidx.parse.file_index import FileIndex

MAX_DEPTH = 12


class ScopeReads(Lookups):
    """The reads the resolver's parts ask across its chain (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        # the bindings whose types are being worked out: `x = x.next()` reads its own
        self._typing: set[tuple[str, Binding]] = set()
        # the functions whose `return`s are being read: a property returning itself (`return
        # self.srs` in `srs`) read through _property_values past the bindings' own guard
        self._returning: set[tuple[str, int]] = set()

    def resolve_path(
        self, fi: FileIndex, path: NamePath, scope: int, want_type: bool = False,
        site: int = 0, held: bool = False
    ) -> tuple[list[Symbol], str]:
        """The symbols a dotted path denotes, and their confidence: ScopeResolver's (scopes)."""
        raise NotImplementedError

    def class_member(self, path: str, index: int, name: str, depth: int = 0) -> list[Symbol]:
        """A name in a class or, failing that, its bases: Members' (members)."""
        raise NotImplementedError

    def base_arguments(self, fi: FileIndex, index: int, base: str) -> tuple[str, ...]:
        """The type arguments a class's `extends` clause writes for a base: ScopeResolver's
        (scopes)."""
        raise NotImplementedError

    def returns(self, symbol: Symbol, depth: int = 0) -> list[Symbol]:
        """The instance types a call of a function gives: CallResults' (call_results)."""
        raise NotImplementedError

    def local_type(self, fi: FileIndex, first: Binding) -> list[Symbol]:
        """The instance types a function's local holds: ValueTypes' (value_types)."""
        raise NotImplementedError

    def reached_type(self, fi: FileIndex, reached: tuple[Binding, ...]) -> list[Symbol]:
        """The instance types a local holds where some of its bindings reach: ValueTypes'
        (value_types)."""
        raise NotImplementedError

    def binding_type(self, fi: FileIndex, binding: Binding, depth: int = 0) -> list[Symbol]:
        """The instance types a binding holds: ValueTypes' (value_types)."""
        raise NotImplementedError

    def value_type(self, symbol: Symbol) -> list[Symbol]:
        """The instance types a variable, a constant or a field holds: ValueTypes' (value_types)."""
        raise NotImplementedError


def dedupe(symbols: list[Symbol]) -> list[Symbol]:
    if len(symbols) < 2:
        return symbols
    return list(dict.fromkeys(symbols))
