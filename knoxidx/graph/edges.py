"""The edges a file's resolution yields (:class:`FileResolution`) and the making of those that
are not a reference's lookup: the node and kind an edge points to, an edge's type by what
refers and what is referred to, the Imports edges of a file and the ImportsSymbol edges of
its named imports, the Implements edges of its impls, and the Calls edges of
``super(...)``/``this(...)``/``new T(...)`` to the constructors they run. :class:`Edges` is a
base of :class:`knoxidx.graph.resolve.Resolver`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from knoxidx.core.facts import RefKind
from knoxidx.core.model import Confidence, EdgeType, external_module_id, module_node_id, node_id
from knoxidx.core.symbols import (
    DEFINITION_TAG,
    EXTERNAL_TAG,
    FILE_TAG,
    INSTANCE_TAG,
    MODULE_TAG,
    Symbol,
)
from knoxidx.graph.lookups import Workspace
from knoxidx.graph.outside import Outside
from knoxidx.graph.scopes import EXACT, MAX_DEPTH
from knoxidx.parse.file_index import CLASS, CONSTANT, FUNCTION, INTERFACE, VARIABLE, FileIndex

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolutionRules

NAME = Confidence.NAME.value  # plain strings, as file_index's kinds
INFERRED = Confidence.INFERRED.value
CALLS = EdgeType.CALLS.value
IMPORTS = EdgeType.IMPORTS.value
IMPORTS_SYMBOL = EdgeType.IMPORTS_SYMBOL.value
EXTENDS = EdgeType.EXTENDS.value
IMPLEMENTS = EdgeType.IMPLEMENTS.value
USES = EdgeType.USES.value
REFERENCES = EdgeType.REFERENCES.value


class ResolvedEdge(NamedTuple):
    source: int
    target: int
    type: str
    confidence: str
    line: int


class Unresolved(NamedTuple):
    source: int
    kind: str
    name: str
    line: int
    reason: str  # "external", "unknown", "ambiguous"
    candidates: int


@dataclass(slots=True)
class FileResolution:
    path: str
    edges: list[ResolvedEdge] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    externals: dict[int, tuple[str, str]] = field(default_factory=dict)  # id -> (family, name)
    keys: set[str] = field(default_factory=set)
    error: str = ""
    # its rows written to a spool by a resolver child (knoxidx.graph.spool): only its Imports
    # edges kept here, what the parent reads besides
    spooled: bool = False


class Edges(Outside):
    """The resolver's edges other than a reference's lookup (see the module's head)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._targets: dict[Symbol, tuple[int, str]] = {}  # see _target

    def _target(self, symbol: Symbol) -> tuple[int, str]:
        """Node id and kind of the definition an edge points to. Kept for the resolver's life
        (a definition is the target of many references; its file's index may be dropped), and
        the file is recorded as consulted on every use, as reading its index would."""
        info = self._targets.get(symbol)
        if info is None:
            fi = self.defining(symbol[1])
            info = self._targets[symbol] = (fi.ids[symbol[2]], fi.facts.defs[symbol[2]].kind)
        else:
            self.keys.add(self._file_keys[symbol[1]])  # made when the file was first indexed
        return info

    def _import_edge(self, result: FileResolution, file_id: int, target: Symbol, line: int) -> None:
        if target[0] == EXTERNAL_TAG:
            ext_id = external_module_id(target[1], target[2])
            result.externals[ext_id] = (target[1], target[2])
            result.edges.append(
                ResolvedEdge(file_id, ext_id, IMPORTS, EXACT, line)
            )
        elif target[0] == MODULE_TAG:
            result.edges.append(ResolvedEdge(
                file_id, module_node_id(target[1], target[2]), IMPORTS,
                EXACT, line,
            ))
        elif target[0] == FILE_TAG and target[1] != result.path:
            # (a file's own inline module importing it, Rust's `mod tests { use super::*; }`,
            # is no dependency)
            result.edges.append(
                ResolvedEdge(file_id, node_id("file", target[1]), IMPORTS,
                             EXACT, line)
            )

    def _impl_edges(self, fi: FileIndex, impl: Any, result: FileResolution) -> None:
        if not impl.trait_path:
            return
        types, _ = self.resolve_path(fi, impl.type_path, -1)
        traits, _ = self.resolve_path(fi, impl.trait_path, -1)
        for t in types:
            for tr in traits:
                if t[0] == DEFINITION_TAG and tr[0] == DEFINITION_TAG:
                    result.edges.append(ResolvedEdge(
                        self.defining(t[1]).ids[t[2]], self.defining(tr[1]).ids[tr[2]],
                        IMPLEMENTS, EXACT, impl.line,
                    ))

    @staticmethod
    def _edge_type(kind: str, scope_def: Any, tkind: str) -> str | None:
        if kind in (RefKind.CALL, RefKind.NEW):
            if tkind == FUNCTION or tkind == CLASS:
                return CALLS
            return REFERENCES
        if kind == RefKind.EXTENDS:
            if scope_def is not None and scope_def.kind == CLASS and tkind == INTERFACE:
                return IMPLEMENTS
            return EXTENDS
        if kind == RefKind.IMPLEMENTS:
            return IMPLEMENTS
        if kind == RefKind.TYPE:
            return USES
        # values: reading a constant/variable is a use; naming a function or class a reference
        if tkind in (CONSTANT, VARIABLE):
            return USES
        return REFERENCES

    def _imported_symbol_edges(self, fi: FileIndex, imp: Any, file_id: int,
                               result: FileResolution) -> None:
        """An edge from the importing file (or the definition the import sits in) to each
        definition a named import binds (`from m import X`, `import {X} from`, `use a::X`,
        `import a.b.X`), at the import's line: where a rename of X must reach too."""
        source = fi.ids[imp.scope] if imp.scope >= 0 else file_id
        for symbol in self._bind_imports(fi, [imp]):
            if symbol[0] == DEFINITION_TAG:
                result.edges.append(ResolvedEdge(source, self._target(symbol)[0],
                                                 IMPORTS_SYMBOL, EXACT, imp.line))

    def _classes(self, instances: list[Symbol]) -> list[Symbol]:
        """The classes of these instances: what ``super(...)`` in a constructor calls (the
        base class, not an interface the class implements, which the bases also list), or
        whose constructor ``this(...)`` calls."""
        out: list[Symbol] = []
        for instance in instances:
            if instance[0] == INSTANCE_TAG:
                symbol: Symbol = (DEFINITION_TAG, instance[1], instance[2])
                d = self.definition(symbol)
                if d is not None and d.kind == CLASS:
                    out.append(symbol)
        return out

    def _constructor_edges(self, fi: FileIndex, scope: int, classes: list[Symbol],
                           arguments: tuple[int, tuple[str, ...]], rules: ResolutionRules
                           ) -> list[tuple[int, str, str]]:
        """The Calls edges of ``super(...)``/``this(...)``/``new T(...)`` to the constructors
        of ``classes`` (their members named ``rules.constructor_name``, or as the class) that
        take its arguments, picked among overloads as any call's are; for a class that
        declares none (its implicit one), its base's where ``rules.constructors_inherited``,
        else none."""
        arity, argument_types = arguments
        edges: list[tuple[int, str, str]] = []
        for cls in classes:
            declared = self._declared_constructors(cls, rules)
            d = self.definition(cls)
            if not declared or d is None:
                continue
            name = rules.constructor_name or d.name  # an inherited one: JavaScript's `constructor`
            fitting = self._fitting(declared, name, arity, rules) if arity >= 0 else declared
            if len(fitting) > 1 and argument_types:
                fitting = self._by_argument_types(fi, scope, fitting, argument_types, rules)
            # several left: never silently pick one
            confidence = INFERRED if len(fitting) == 1 else NAME
            edges.extend((self._target(c)[0], CALLS, confidence) for c in fitting)
        return edges

    def _declared_constructors(self, cls: Symbol, rules: ResolutionRules,
                               depth: int = 0) -> list[Symbol]:
        """The constructors the class ``cls`` declares, or where it declares none and
        ``rules.constructors_inherited``, the nearest base class's."""
        d = self.definition(cls)
        cls_fi = self.index(cls[1])
        if d is None or cls_fi is None or depth > MAX_DEPTH:
            return []
        name = rules.constructor_name or d.name
        declared: list[Symbol] = [(DEFINITION_TAG, cls[1], i)
                                  for i in self.child(cls_fi, cls[2], name) or ()
                                  if cls_fi.facts.defs[i].kind == FUNCTION]
        if declared or not rules.constructors_inherited:
            return declared
        for base in self.bases_of(cls[1], cls[2]):
            if self._is_class(base):
                return self._declared_constructors(base, rules, depth + 1)
        return []

    def _is_class(self, symbol: Symbol) -> bool:
        if symbol[0] != DEFINITION_TAG:
            return False
        d = self.definition(symbol)
        return d is not None and d.kind == CLASS
