"""Cross-file name resolution: stored per-file facts -> edges.

Language-agnostic engine; what differs per language (import mapping, module scope, what
``self``/``this`` mean) comes from the family module's ``RULES``. Every fact consulted while
resolving a file is recorded as a lookup key (:mod:`knoxidx.graph.lookups`), so an incremental
update knows exactly which files' edges a change can affect (the stack-graphs idea: file-local
facts, stitched globally). What a name or path denotes is :mod:`knoxidx.graph.scopes`; this
module turns a file's references, imports and impls into edges, with their confidence, and
says why a call stays unresolved.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from knoxidx.core.errors import CorruptIndexError
from knoxidx.core.facts import (
    BASE_KINDS,
    CALLBACK_OF,
    ELEMENT_OF,
    ITEMS_HEAD,
    RECEIVER_ARGUMENT,
    UNKNOWN_VALUE,
    Binding,
    NamePath,
    RefKind,
    point,
)
from knoxidx.core.model import (
    Confidence,
    EdgeType,
    external_module_id,
    module_node_id,
    node_id,
)
from knoxidx.core.symbols import (
    DEFINITION_TAG,
    EXTERNAL_TAG,
    FILE_TAG,
    INSTANCE_TAG,
    MODULE_TAG,
    Symbol,
)
from knoxidx.graph.lookups import Workspace
from knoxidx.graph.scopes import EXACT, MAX_DEPTH, UNION, UNION_MAX, ScopeResolver
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.definitions import is_anonymous
from knoxidx.parse.file_index import (
    CLASS,
    CONSTANT,
    FUNCTION,
    INTERFACE,
    MODULE,
    TYPE,
    TYPE_KINDS,
    VARIABLE,
    FileIndex,
)
from knoxidx.parse.name_paths import RESULT_SEGMENT_PREFIX, result_types, type_path

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolutionRules

# what a reference yields whatever its line: source, [(target, edge type, confidence)], and
# (name, reason, candidates) when a call stays unresolved
_Outcome = tuple[int, list[tuple[int, str, str]], tuple[str, str, int] | None]
_new = tuple.__new__  # a NamedTuple record without its Python-level __new__

NAME = Confidence.NAME.value  # plain strings, as file_index's kinds
INFERRED = Confidence.INFERRED.value
CALLS = EdgeType.CALLS.value
IMPORTS = EdgeType.IMPORTS.value
IMPORTS_SYMBOL = EdgeType.IMPORTS_SYMBOL.value
EXTENDS = EdgeType.EXTENDS.value
IMPLEMENTS = EdgeType.IMPLEMENTS.value
USES = EdgeType.USES.value
REFERENCES = EdgeType.REFERENCES.value
CALL_LIKE = frozenset({RefKind.CALL, RefKind.NEW, RefKind.VALUE})  # see _outcome's source
TYPE_POSITIONS = frozenset({RefKind.NEW, RefKind.TYPE}) | BASE_KINDS  # see types_apart_from_values
_SUPER = ("super",)
_THIS = ("this",)
# what a qualifier (`PKey` in `PKey.from_type_string()`) must denote to be a reference of its
# own: a name a rename of it would have to change, not a value whose type is only inferred
QUALIFIER_KINDS = TYPE_KINDS | {MODULE}
# More definitions than this for one reference is no set of overloads (java.lang.StringBuilder
# has 13 `append`s): a mangled file that declares one name thousands of times, whose every
# reference would otherwise make an edge to each (4,438 x 4,536 edges in one fuzzed file, found
# by bench.fuzz: the update ran for minutes). Such a reference stays unresolved, "ambiguous".
MAX_CANDIDATES = 64


def _lookup_key(path: NamePath, called: bool, typed: bool) -> NamePath:
    """``path`` as the resolver's caches key it: a bare name called, or one looked up among
    types only, apart from the same name read."""
    if called:
        return (path[0] + "()",)
    return (path[0] + ":type",) if typed else path



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


class Resolver(ScopeResolver):
    """Resolves every reference and import of a file against a :class:`Workspace`."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._guesses: dict[tuple[str, str, bool], tuple[list[Symbol], int, frozenset[str]]] = {}
        self._targets: dict[Symbol, tuple[int, str]] = {}  # see _target
        # (least, most) arguments a function takes and its parameters' types, None where
        # unknown (see _fitting)
        self._parameters: dict[Symbol, tuple[int, int, tuple[str, ...]] | None] = {}

    def resolve_file(self, path: str) -> FileResolution:
        """Every edge whose site is in ``path``. A failure here (a bug, never bad input) is
        reported for this one file and costs the others nothing."""
        try:
            return self._resolve_file(path)
        except RecursionError:
            return FileResolution(path, error="resolution recursed too deep")
        except CorruptIndexError:  # stored facts that do not decode: the index, not this file
            raise
        except Exception as exc:  # noqa: BLE001 - isolate one file's failure
            return FileResolution(path, error=f"{type(exc).__name__}: {exc}")

    def _resolve_file(self, path: str) -> FileResolution:
        self.keys = set()
        result = FileResolution(path)
        fi = self.index(path)
        if fi is None:
            return result
        rules: ResolutionRules = fi.rules
        file_id = node_id("file", path)

        for imp in fi.facts.imports:
            for target in rules.import_targets(self, fi, imp):
                self._import_edge(result, file_id, target, imp.line)
            # (no module: a file's export of its own name, `export default X`, no import)
            if imp.module and imp.name and imp.name != "*":
                self._imported_symbol_edges(fi, imp, file_id, result)

        # A third of a file's references repeat one already resolved from the same scope
        # (`len(x)` twice in a function): resolved once, and what it yields (the source, the
        # targets with their edge types, or why it is unresolved) reused for every repeat.
        # Its lookup keys are this file's already, so a repeat records nothing new.
        resolved: dict[tuple[NamePath, Any], tuple[list[Symbol], str]] = {}
        # what a head denotes from a scope, for the paths that start with it (x.a(), x.b)
        heads: dict[tuple[str, Any], tuple[list[Symbol], bool]] = {}
        outcomes: dict[tuple[NamePath, Any, str, int, tuple[str, ...], Any], _Outcome] = {}
        # One edge per (source, target, type, line), the first one made, as they are made;
        # Imports edges (one per imported file, whatever the line) never equal another.
        result.edges = edges = _unique_edges(result.edges)
        seen: set[tuple[int, int, str, int]] = set()
        unresolved = result.unresolved
        # a local bound several ways is read where it is (see FileIndex.reaching): such a
        # reference's outcome is kept by which of its bindings reach it, not by scope alone
        placed = fi.placed_names
        block_functions = fi.block_functions
        for kind, name_path, scope, line, col, arity, argument_types in fi.reference_rows():
            site = 0
            where: Any = scope
            if placed and name_path and name_path[0] in placed:
                here = point(line, col)
                reach = fi.reach_key(name_path[0], scope, here)
                if reach is not None:
                    site, where = here, (scope, reach)
            receiver_site = 0
            receiver_reach = None
            if argument_types and argument_types[0][:1] == RECEIVER_ARGUMENT and placed:
                # `Trait::m(x, ..)`: which of x's bindings reaches the call tells its outcome
                receiver_head = argument_types[0][1:].partition(".")[0].removesuffix("()")
                if receiver_head in placed:
                    receiver_reach = fi.reach_key(receiver_head, scope, point(line, col))
                    if receiver_reach is not None:
                        receiver_site = point(line, col)
            if placed and argument_types:
                argument_types = _placed_arguments(fi, argument_types, scope, point(line, col))
            key = (name_path, where, kind, arity, argument_types, receiver_reach)
            outcome = outcomes.get(key)
            if outcome is None:
                outcome = outcomes[key] = self._outcome(fi, kind, name_path, scope,
                                                        (arity, argument_types), file_id,
                                                        resolved, heads, site, where,
                                                        receiver_site)
            source, targets, missing = outcome
            if block_functions and len(name_path) == 1 and targets \
                    and name_path[0] in block_functions:
                targets = _nearest_declared(fi, block_functions[name_path[0]], targets, line)
            if missing is not None:
                name, reason, candidates = missing
                unresolved.append(_new(Unresolved, (source, kind, name, line, reason,
                                                    candidates)))
            for target_id, edge_type, confidence in targets:
                edge_key = (source, target_id, edge_type, line)
                if edge_key not in seen:
                    seen.add(edge_key)
                    edges.append(_new(ResolvedEdge,
                                      (source, target_id, edge_type, confidence, line)))
        made = len(edges)
        for impl in fi.facts.impls:
            self._impl_edges(fi, impl, result)  # appends to edges
        implemented = edges[made:]
        del edges[made:]
        for edge in implemented:
            edge_key = (edge[0], edge[1], edge[2], edge[4])
            if edge_key not in seen:
                seen.add(edge_key)
                edges.append(edge)
        result.keys = self.keys
        return result

    def _outcome(self, fi: FileIndex, kind: str, path: NamePath, ref_scope: int,
                 arguments: tuple[int, tuple[str, ...]], file_id: int,
                 resolved: dict[tuple[NamePath, Any], tuple[list[Symbol], str]],
                 heads: dict[tuple[str, Any], tuple[list[Symbol], bool]], site: int = 0,
                 where: Any = None, receiver_site: int = 0) -> _Outcome:
        """What a reference yields, whatever its line: (source node, [(target node, edge type,
        confidence)], None or (name, reason, candidates) when a call stays unresolved).
        ``arguments``: how many a call passes (-1 unknown) and their static types where
        certain (Reference's), which pick among overloads.
        ``resolved``: what a path denotes, by where its lookup goes; ``heads``: what a head
        denotes from a scope the walk starts at (the file's lookup keys have it already).
        ``site``: where a head bound several ways is read (a ``point``; else 0), ``where``
        the key that tells such reads apart (``FileIndex.reach_key``, with the scope);
        ``receiver_site``: the same for the receiver a call's first argument is, where it is
        bound several ways."""
        defs = fi.facts.defs
        scope = ref_scope
        # the source: calls come from the enclosing function (or class), other edges from any
        # definition
        if scope < 0:
            source = file_id
        else:
            s = fi.caller(scope) if kind in CALL_LIKE else scope
            source = fi.ids[s] if s >= 0 else file_id
        if kind in BASE_KINDS:
            scope = defs[scope].parent if scope >= 0 else -1
            site = 0
        head = path[0].removesuffix("()") if path else "?"
        rules: ResolutionRules = fi.rules
        # Where the head's lookup goes, learned here once per outcome rather than again by
        # lookup() (whose tests these are, in its order): 0 resolve_path's way (no head, or
        # one the family answers), 1 the module scope, 2 the class at ``cls``, 3 the walk
        # from ``scope``.
        cls = -1
        shared: Any
        if head == "?" or head == ITEMS_HEAD or head in rules.special_heads:
            shared = where if site else scope
            via = 0
        elif not fi.walk_needed(head, scope):
            # The head resolves in the module scope from wherever it is read, and so does the
            # rest of the path: resolved once per file, with what the lookup from this scope
            # records (see lookup)
            if scope >= 0:
                self.missed(fi, scope, head)
            scope = shared = -1
            via = 1
        elif scope >= 0 and rules.class_members_visible \
                and (cls := fi.class_entry(head, scope)) >= 0:
            # read from a method, resolved as from its class (see FileIndex.class_entry):
            # once per class in the file, not once per method
            shared = -2 - cls
            via = 2
        else:
            shared = where if site else scope
            via = 3
        # a bare name called, where a local of that name would not be (see lookup), and one
        # in a type position where values do not hide types: each kept apart from the same
        # name read
        called = kind == RefKind.CALL and len(path) == 1 and not rules.locals_callable
        typed = kind in TYPE_POSITIONS and len(path) == 1 and rules.types_apart_from_values
        answer = resolved.get((_lookup_key(path, called, typed), shared))
        if answer is None:
            answer = self._denoted(fi, head, path, scope, shared, via, cls, heads, resolved,
                                   called, typed, site)
        found, confidence = answer
        if not found and kind == RefKind.VALUE and rules.literal_keys_of_maps \
                and len(path) > 1 and path[-2][-2:] == "()" \
                and self._names_a_map_type(fi, (*path[:-2], path[-2][:-2]), scope):
            # `M{k: v}` of a named map type M: the key is an expression, a name in scope
            return self._outcome(fi, kind, path[-1:], ref_scope, arguments, file_id,
                                 resolved, heads)
        # `PKey.from_type_string()` names PKey too: a reference to the qualifier when it is a
        # class (or an inline module), through a name written here (not `self`, `Self`). A
        # path through an instance or a call's result is inferred, and one that reached
        # something external goes on external: neither has a class for a qualifier.
        qualified: list[tuple[int, str, str]] = []
        if via and confidence == EXACT and len(path) > 1 and head not in rules.self_names \
                and head != "Self" and not (found and found[0][0] == EXTERNAL_TAG):
            qualified = self._qualifier_targets(fi, kind, head, path, scope, shared, via, cls,
                                                heads, resolved, site)
        constructors: list[tuple[int, str, str]] = []
        if kind == RefKind.CALL and (path == _SUPER and rules.super_calls_constructor
                                     or path == _THIS and rules.this_calls_constructor):
            constructors = self._constructor_edges(fi, ref_scope, self._classes(found),
                                                   arguments, rules)
            if path == _THIS:  # another constructor of the class, never the class itself
                return source, constructors, None
        if path == _SUPER and kind == RefKind.CALL and rules.super_call_constructs:
            found = self._classes(found)
        targets = [s for s in found if s[0] == DEFINITION_TAG]
        if len(targets) > 1 and len(path) > 1 and kind in CALL_LIKE:
            targets = self._by_use(targets, kind)
            if len(targets) > 1:
                targets = rules.caller_twins(self, fi, ref_scope, targets)
        arity = arguments[0]
        if arity >= 0 and targets:
            targets = self._by_arity(targets, path[-1], arity, rules)
            if len(targets) > 1 and arguments[1]:
                targets = self._by_argument_types(fi, ref_scope, targets, arguments[1], rules)
            elif len(targets) > 1 and rules.fixed_arity_first:
                targets = self._fixed_arity_first(fi, ref_scope, targets, arity, (), rules)
            if targets and arguments[1]:
                targets = self._inherited_by_types(fi, ref_scope, targets, path[-1], arity,
                                                   arguments[1], rules)
            if 0 < rules.tied_overloads_kept < len(targets) and self._overloads(targets):
                # the arguments tell none of these overloads apart: naming them all is mostly
                # wrong edges, and guessing one is a guess
                if kind in (RefKind.CALL, RefKind.NEW):
                    return source, qualified, (".".join(path), "ambiguous", len(targets))
                return source, qualified, None
        if targets and arguments[1] and arguments[1][0][:1] == RECEIVER_ARGUMENT \
                and kind == RefKind.CALL:
            # `Trait::method(x, ..)` runs the method of the trait's impl for x's type
            receiver = tuple(arguments[1][0][1:].split("."))
            ran = rules.receiver_methods(self, fi, ref_scope, receiver, receiver_site, targets)
            if ran:
                targets, confidence = ran, INFERRED
        if not targets:
            candidates = 0
            written = path[1:] if head == ITEMS_HEAD else path  # as the call names it
            if kind in (RefKind.CALL, RefKind.NEW):
                guessed, candidates = self._guess(fi, path, found, ref_scope, site)
                if guessed and arity >= 0:
                    guessed = self._fitting(guessed, path[-1], arity, rules)
                if guessed:
                    targets, confidence = guessed, NAME
            if not targets:
                if kind in (RefKind.CALL, RefKind.NEW):
                    # (a callee the family knows lies outside the index though no import says
                    # so, a builtin's or a std type's method, is external too: see outside_call
                    # and, for the families whose types say it, _lies_outside)
                    reason = "external" if any(s[0] == EXTERNAL_TAG for s in found) else (
                        "ambiguous" if candidates > 1 else
                        "external" if rules.outside_call(self, fi, ref_scope, written, site)
                        or kind == RefKind.CALL and rules.receivers_outside
                        and self._lies_outside(fi, path, found, ref_scope, site)
                        else "unknown")
                    return source, qualified, (".".join(written), reason, candidates)
                return source, qualified, None
        if confidence == UNION:  # each type's member (see TypeUnion): none is a guess
            confidence = INFERRED if len(targets) <= UNION_MAX else NAME
        elif len(targets) > 1 and confidence != NAME:
            confidence = NAME  # several candidates: never silently pick one
            if len(targets) > MAX_CANDIDATES:  # not a set of overloads: a mangled file
                if kind in (RefKind.CALL, RefKind.NEW):
                    return source, qualified, (".".join(path), "ambiguous", len(targets))
                return source, qualified, None
        if kind == RefKind.NEW and rules.new_calls_constructor:
            constructors = self._constructor_edges(
                fi, ref_scope, [t for t in targets if self._is_class(t)], arguments, rules)
        out: list[tuple[int, str, str]] = qualified + constructors
        scope_def = defs[ref_scope] if ref_scope >= 0 else None
        known = self._targets
        # `new I() {..}` (Java): an anonymous class implementing I, a call of I as javac has it
        new_interface = kind == RefKind.NEW and rules.new_calls_interfaces
        for target in targets:
            info = known.get(target)
            if info is None:
                info = self._target(target)
            else:  # _target's hit, inlined: the file made its key when first indexed
                self.keys.add(self._file_keys[target[1]])
            target_id, target_kind = info
            edge_type = CALLS if new_interface and target_kind == INTERFACE \
                else self._edge_type(kind, scope_def, target_kind)
            if edge_type is not None:
                out.append((target_id, edge_type, confidence))
        return source, out, None

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
            key = (_lookup_key((head,), called, typed)[0], shared if site else scope)
            got = heads.get(key)
            if got is None:
                got = heads[key] = (self._walk(fi, head, scope, typed, called, site)
                                    if via == 3 else
                                    self._head(fi, head, scope, typed, called, site))
            answer = self._follow(path, got[0], got[1], path[0].endswith("()"), fi, scope,
                                  site)
        resolved[(_lookup_key(path, called, typed), shared)] = answer
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

    def _by_use(self, targets: list[Symbol], kind: str) -> list[Symbol]:
        """Members of one name that are a method and a field (Java keeps them apart, a Rust
        getter is named after its field): a call means the methods, a read the fields."""
        functions: list[Symbol] = []
        others: list[Symbol] = []
        for target in targets:
            d = self.definition(target)
            (functions if d is not None and d.kind == FUNCTION else others).append(target)
        if not functions or not others:
            return targets
        return others if kind == RefKind.VALUE else functions

    def _by_arity(self, targets: list[Symbol], name: str, arity: int, rules: ResolutionRules
                  ) -> list[Symbol]:
        """The overloads among ``targets`` that take ``arity`` arguments; where none of a
        class's do, those of its bases (which a subclass's overloads of the name do not
        hide, as they do in Python's MRO). Nothing where no declaration fits: the call is
        of a method outside the index (an overload in a library's base class)."""
        fitting = self._fitting(targets, name, arity, rules)
        if fitting or not self._declared_in_class(targets):
            return fitting
        levels = self._inherited_levels(targets, name, arity, rules)
        return levels[0] if levels else []

    def _inherited_levels(self, targets: list[Symbol], name: str, arity: int,
                          rules: ResolutionRules) -> list[list[Symbol]]:
        """:meth:`_inherited_overloads`, once per (targets, name, arity)."""
        levels: list[list[Symbol]] = self.memo(
            ("inherited-overloads", tuple(targets), name, arity),
            lambda: list(self._inherited_overloads(targets, name, arity, rules)))
        return levels

    def _inherited_overloads(self, targets: list[Symbol], name: str, arity: int,
                             rules: ResolutionRules) -> Iterator[list[Symbol]]:
        """The overloads of ``name`` taking ``arity`` arguments that the classes declaring
        ``targets`` inherit, nearest bases first: for each level of bases that has some, those
        (a base without a fitting one of its own is passed through to its bases)."""
        seen: set[Symbol] = set()
        classes = [(DEFINITION_TAG, t[1], self.definition(t).parent) for t in targets]
        for _ in range(MAX_DEPTH):
            bases = [b for c in classes for b in self.bases_of(c[1], c[2]) if b not in seen]
            if not bases:
                return
            seen.update(bases)
            classes = []
            fitting: list[Symbol] = []
            for base in bases:
                members = self.class_member(base[1], base[2], name)
                fitting.extend(self._fitting(members, name, arity, rules))
                # a base without a fitting one of its own: its bases in turn
                if members and self._declared_in_class(members):
                    classes.extend((DEFINITION_TAG, m[1], self.definition(m).parent)
                                   for m in members)
            if fitting:
                yield _dedupe_symbols(fitting)

    def _inherited_by_types(self, fi: FileIndex, scope: int, targets: list[Symbol], name: str,
                            arity: int, argument_types: tuple[str, ...],
                            rules: ResolutionRules) -> list[Symbol]:
        """``targets`` (a class's overloads of ``name`` that take ``arity`` arguments), or
        where the arguments' certain types fit none of them, the nearest inherited overloads
        they fit: a class's method hides no overload of its bases with other parameters
        (`scan(JCTree)` declared beside TreeScanner's `scan(List)`)."""
        if not self._declared_in_class(targets):
            return targets
        levels = self._inherited_levels(targets, name, arity, rules)
        if not levels or any(self._takes(fi, scope, t, argument_types, rules)
                             for t in targets):
            return targets
        for inherited in levels:
            fitting = [t for t in inherited if self._takes(fi, scope, t, argument_types, rules)]
            if fitting:
                return fitting
        return targets

    def _takes(self, fi: FileIndex, scope: int, target: Symbol,
               argument_types: tuple[str, ...], rules: ResolutionRules) -> bool:
        """Whether the function ``target`` may take arguments of these types (True where its
        parameters are not known)."""
        parameters = self._parameters.get(target)
        return parameters is None or self._arguments_fit(fi, scope, target, parameters,
                                                         argument_types, rules)

    def _overloads(self, targets: list[Symbol]) -> bool:
        """Whether the targets are methods declared in one class."""
        owners = set()
        for target in targets:
            d = self.definition(target)
            if d is None or d.kind != FUNCTION or d.parent < 0:
                return False
            owners.add((target[1], d.parent))
        return len(owners) == 1

    def _declared_in_class(self, targets: list[Symbol]) -> bool:
        """Whether every target is a method of a class (so its bases have overloads too)."""
        for target in targets:
            d = self.definition(target)
            if d is None or d.kind != FUNCTION or d.parent < 0:
                return False
        return True

    def _fitting(self, targets: list[Symbol], name: str, arity: int, rules: ResolutionRules
                 ) -> list[Symbol]:
        """The ``targets`` a call of ``arity`` arguments can mean: the functions whose
        parameters take that many, and what is no function (a class: `new`'s, Go's `T(x)`)."""
        out: list[Symbol] = []
        for target in targets:
            if target in self._parameters:
                counts = self._parameters[target]
            else:
                d = self.definition(target)
                counts = self._parameters[target] = (
                    rules.parameters(d.signature, name)
                    if d is not None and d.kind == FUNCTION else None)
            if counts is None or counts[0] <= arity and (counts[1] < 0 or arity <= counts[1]):
                out.append(target)
        return out

    def _by_argument_types(self, fi: FileIndex, scope: int, targets: list[Symbol],
                           argument_types: tuple[str, ...], rules: ResolutionRules
                           ) -> list[Symbol]:
        """The overloads among ``targets`` (all of which take as many arguments) whose
        parameters may take the arguments whose static types are certain; all of them where
        none may (a type this reading gets wrong leaves the call as it was)."""
        out: list[Symbol] = []
        for target in targets:
            parameters = self._parameters.get(target)
            if parameters is None or self._arguments_fit(fi, scope, target, parameters,
                                                         argument_types, rules):
                out.append(target)
        if len(out) > 1 and rules.fixed_arity_first:
            out = self._fixed_arity_first(fi, scope, out, len(argument_types), argument_types,
                                          rules)
        if len(out) > 1:  # the most specific: those declaring the most arguments' own types
            scores = [self._exact_arguments(fi, scope, t, argument_types, rules) for t in out]
            best = max(scores)
            if best > 0:
                out = [t for t, score in zip(out, scores, strict=True) if score == best]
        return out or targets

    def _fixed_arity_first(self, fi: FileIndex, scope: int, targets: list[Symbol], arity: int,
                           argument_types: tuple[str, ...], rules: ResolutionRules
                           ) -> list[Symbol]:
        """Of overloads that may all take a call's ``arity`` arguments, those that take them
        without gathering varargs where some do: a varargs method then only where its last
        argument may be the array itself (`peek(0, kinds)`, `lub(types)`)."""
        fixed: list[Symbol] = []
        any_fixed = False
        for target in targets:
            counts = self._parameters.get(target)
            if counts is None:
                return targets
            least, most, types = counts
            if most >= 0:
                fixed.append(target)
                any_fixed = True
            elif arity == least + 1:  # the last argument in the varargs' place: an array?
                last = argument_types[-1] if len(argument_types) == arity else ""
                if not last or rules.argument_fits(self, fi, scope, last, target,
                                                   types[-1].removesuffix("...") + "[]"):
                    fixed.append(target)
        return fixed if any_fixed and len(fixed) < len(targets) else targets

    def _exact_arguments(self, fi: FileIndex, scope: int, target: Symbol,
                         argument_types: tuple[str, ...], rules: ResolutionRules
                         ) -> int:
        """How many of the arguments ``target`` declares a parameter of their very type."""
        parameters = self._parameters.get(target)
        if parameters is None:
            return 0
        types = parameters[2]
        return sum(1 for argument, parameter in zip(argument_types, types, strict=False)
                   if argument and rules.argument_is(self, fi, scope, argument, parameter))

    def _arguments_fit(self, fi: FileIndex, scope: int, target: Symbol,
                       parameters: tuple[int, int, tuple[str, ...]],
                       argument_types: tuple[str, ...], rules: ResolutionRules
                       ) -> bool:
        least, most, types = parameters
        for i, argument in enumerate(argument_types):
            if not argument:
                continue
            if most < 0 and i >= least:  # one of the varargs: each is of the element type
                parameter = types[-1].removesuffix("...")
            elif i < len(types):
                parameter = types[i]
            else:
                continue
            if not rules.argument_fits(self, fi, scope, argument, target, parameter):
                return False
        return True

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

    # ---- the unique-name guess ---------------------------------------------------------

    def _declared_outside(self, fi: FileIndex, head: str, scope: int, site: int) -> bool:
        """Whether the local or parameter ``head`` read in ``scope`` (at ``site``) is declared
        of a type outside the index (`IOException e`), by the declaration reaching the read."""
        defs = fi.facts.defs
        s = scope
        while s >= 0 and defs[s].kind == FUNCTION:
            binding = fi.bindings.get((s, head))
            if binding is not None:
                binding = fi.reaching_one(s, head, scope, site, binding)
                if binding is None or binding.is_call or not _plain_type(binding.type_path):
                    return False
                typed = self.resolve_path(fi, binding.type_path, s, want_type=True)[0]
                return bool(typed) and all(self._outside(t) for t in typed)
            s = defs[s].parent
        return self._field_outside(fi, (head,), scope, site)

    def _field_outside(self, fi: FileIndex, receiver: NamePath, scope: int, site: int) -> bool:
        """Whether ``receiver`` denotes a field of the index declared of a type outside it
        (`private final Elements eltUtils;`, `other.values` of a `Map`)."""
        if any(part.endswith("()") for part in receiver):
            return False
        found = self.resolve_path(fi, receiver, scope, site=site)[0]
        if len(found) != 1 or found[0][0] != DEFINITION_TAG:
            return False
        d = self.definition(found[0])
        if d is None or d.kind not in (VARIABLE, CONSTANT) or not d.type_hint:
            return False
        declaring = self.index(found[0][1])
        if declaring is None:
            return False
        typed = self.memo(("field-type", found[0]), self._type_of, declaring, d.type_hint,
                          d.parent)
        return bool(typed) and all(self._outside(t) for t in typed)

    def _outside(self, typed: Symbol) -> bool:
        """Whether a member the index does not find in the type ``typed`` may be one of a
        type outside the index: ``typed`` is one, or a class extending one (directly or
        through the index's classes: `ClientCodeException extends RuntimeException`, whose
        `getCause()` is Throwable's)."""
        if typed[0] == EXTERNAL_TAG:
            return True
        return typed[0] == DEFINITION_TAG and bool(
            self.memo(("extends-outside", typed), self._extends_outside, typed, 0, False))

    def _extends_outside(self, cls: Symbol, depth: int, surely: bool) -> bool:
        """Whether the class ``cls`` extends one outside the index, directly or through the
        index's classes; ``surely``: only bases surely outside (see :meth:`_surely`)."""
        fi = self.index(cls[1])
        if fi is None or depth > MAX_DEPTH:
            return False
        d = fi.facts.defs[cls[2]]
        for ref in fi.bases.get(cls[2], ()):
            found = self.resolve_path(fi, ref.path, d.parent)[0]
            for base in found:
                if base[0] == EXTERNAL_TAG and (not surely or self._surely(fi, ref.path, found)) \
                        or base[0] == DEFINITION_TAG and base != cls \
                        and self._extends_outside(base, depth + 1, surely):
                    return True
        return False

    def _type_of(self, fi: FileIndex, hint: NamePath, scope: int) -> list[Symbol]:
        return self.resolve_path(fi, hint, scope, want_type=True)[0]

    def _guess(self, fi: FileIndex, path: NamePath, found: list[Symbol],
               scope: int | None = None, site: int = 0) -> tuple[list[Symbol], int]:
        """The unique-name guess: (the one candidate or nothing, how many candidates).
        ``scope`` and ``site``: where the path is read, for a family that guesses no member
        of a receiver of a type outside the index (``guess_outside_receivers``)."""
        if any(s[0] == EXTERNAL_TAG for s in found):
            return [], 0  # it names something external: no guessing
        name = path[-1]
        rules: ResolutionRules = fi.rules
        head = path[0]
        if len(path) == 2 and (head in rules.self_names or head in ("super", "Self")):
            return [], 0  # the receiver's class is known: the method is inherited from outside
        if len(path) == 1:
            if not rules.guess_bare_names:
                return [], 0
        elif not rules.guess_members or name in rules.builtin_method_names:
            return [], 0
        elif not rules.guess_outside_receivers and scope is not None and (
                self._declared_outside(fi, head, scope, site) if len(path) == 2
                else self._field_outside(fi, path[:-1], scope, site)):
            return [], 0
        member = len(path) > 1
        key = (fi.family, name, member)
        cached = self._guesses.get(key)
        if cached is None:
            candidates = [
                (p, i) for p, i, kind, is_member in self.defs_named(fi.family, name)
                if kind in (FUNCTION, CLASS) and (is_member or not member)
            ]
            found_one: list[Symbol] = (
                [(DEFINITION_TAG, candidates[0][0], candidates[0][1])] if len(candidates) == 1
                else [])
            cached = (found_one, len(candidates), frozenset({"name:" + name}))
            self._guesses[key] = cached
        self.keys |= cached[2]
        return cached[0], cached[1]

    # ---- why a call stays unresolved ----------------------------------------------------

    def _lies_outside(self, fi: FileIndex, path: NamePath, found: list[Symbol], scope: int,
                      site: int) -> bool:
        """Whether a call no definition of the index answers is of something outside it all
        the same (its reason "external", not "unknown"): a predeclared function, a static
        import's, or a member of a receiver whose type lies outside the index (or is a class
        of it extending one that does, whose member it inherits). Never where the lookup
        found a definition of the index (one of another arity: the index may be meant) or
        the receiver's type is not known."""
        if any(s[0] == DEFINITION_TAG for s in found) or not path:
            return False
        rules: ResolutionRules = fi.rules
        head = path[0].removesuffix("()")
        if head in ("?", ITEMS_HEAD):
            return False
        own = head == "super" or head in rules.self_names
        cls = fi.class_of(scope) if scope >= 0 else -1
        universal = path[-1] in rules.universal_methods
        if len(path) == 1:
            if own:  # `super(..)`: the constructor of a base outside the index
                return head == "super" and cls >= 0 and self._base_outside(fi, cls)
            if head in rules.builtin_functions or rules.outside_name(self, fi, head) \
                    or universal and cls >= 0:
                return True
            # a method inherited from outside by a class the call is in
            while rules.class_members_visible and cls >= 0:
                if self._class_outside((DEFINITION_TAG, fi.path, cls)):
                    return True
                cls = fi.class_of(fi.facts.defs[cls].parent)
            return False
        receiver = path[:-1]
        if own and len(receiver) == 1 and not path[0].endswith("()"):
            return cls >= 0 and (universal or self._class_outside((DEFINITION_TAG, fi.path, cls)))
        # (`x.a()`, `x.b()`: one receiver, read again and again)
        return bool(self.memo(("receiver-outside", fi.path, receiver, scope, site, universal),
                              self._receiver_outside, fi, receiver, scope, site, universal))

    def _base_outside(self, fi: FileIndex, cls: int) -> bool:
        """Whether the class at ``cls`` extends a class outside the index directly."""
        bases = fi.bases.get(cls, ())
        parent = fi.facts.defs[cls].parent
        for ref in bases:
            if ref.kind == RefKind.EXTENDS:
                found = self.resolve_path(fi, ref.path, parent)[0]
                if found and all(s[0] == EXTERNAL_TAG for s in found) \
                        and self._surely(fi, ref.path, found):
                    return True
        return False

    def _surely(self, fi: FileIndex, written: NamePath, found: list[Symbol]) -> bool:
        """Whether what the type written ``written`` resolved to is surely so: not a type
        said outside the index by its name alone (a class named where a wildcard imports a
        package outside it, see the Java rules' fallback) that the index has a type of."""
        name = written[-1] if written else ""
        if not any(s[0] == EXTERNAL_TAG and s[2] == name for s in found):
            return True
        return not any(kind in TYPE_KINDS for _, _, kind, _ in self.defs_named(fi.family, name))

    def _class_outside(self, cls: Symbol) -> bool:
        """:meth:`_outside`, of bases surely outside the index (see :meth:`_surely`)."""
        if cls[0] == EXTERNAL_TAG:
            return True
        return cls[0] == DEFINITION_TAG and bool(
            self.memo(("surely-extends-outside", cls), self._extends_outside, cls, 0, True))

    def _receiver_outside(self, fi: FileIndex, receiver: NamePath, scope: int, site: int,
                          universal: bool = False) -> bool:
        """Whether the value ``receiver`` (a path read in ``scope`` at ``site``) is of a type
        outside the index, or of a class of it extending one: by what resolution makes of
        it, else by the type its declaration or the function returning it declares.
        ``universal``: the method called is one of the root class's, which any instance
        has."""
        if receiver[-1].endswith("()"):  # `c.Flags().String()`: what Flags declares it returns
            outside = self._returns_outside(fi, (*receiver[:-1], receiver[-1][:-2]), scope,
                                            site)
        elif typed := self.resolve_path(fi, receiver, scope, site=site)[0]:
            outside = all(universal and s[0] == INSTANCE_TAG or self._value_outside(s)
                          for s in typed)
        else:  # a local declared of a type outside the index, or a member of one
            outside = self._local_outside(fi, receiver[0], scope, site, len(receiver) > 1)
        return outside

    def _value_outside(self, symbol: Symbol, strict: bool = False) -> bool:
        """Whether what resolution made of a receiver is of a type outside the index: an
        instance or a class extending one, a field declared of one."""
        if symbol[0] == INSTANCE_TAG:
            return self._class_outside((DEFINITION_TAG, symbol[1], symbol[2]))
        if symbol[0] != DEFINITION_TAG:
            return symbol[0] == EXTERNAL_TAG
        d = self.definition(symbol)
        if d is not None and d.kind in TYPE_KINDS:
            return self._class_outside(symbol)
        declaring = self.index(symbol[1])
        if d is None or d.kind not in (VARIABLE, CONSTANT) or declaring is None:
            return False
        if d.type_hint:
            return _plain_type(d.type_hint) and self._type_outside(declaring, d.type_hint,
                                                                   d.parent, strict)
        # a package's `var mu = &sync.Mutex{}`: what its value says
        binding = declaring.bindings.get((d.parent, d.name))
        return binding is not None and self._binding_outside(declaring, binding, strict)

    def _local_outside(self, fi: FileIndex, head: str, scope: int, site: int, strict: bool
                       ) -> bool:
        """Whether the local or parameter ``head`` read in ``scope`` (at ``site``) is declared
        of a type outside the index, or bound to the result of a function of the index
        declared to return one. ``strict``: of such a type itself, not of a class of the index
        extending one (a member read on it is then outside the index too)."""
        defs = fi.facts.defs
        s = scope
        while s >= 0:
            if defs[s].kind != FUNCTION:
                # a local of the method around an anonymous class, none of its own members
                if not is_anonymous(defs[s]) or self.child(fi, s, head):
                    return False
                s = defs[s].parent
                continue
            binding = fi.bindings.get((s, head))
            if binding is not None:
                binding = fi.reaching_one(s, head, scope, site, binding)
                return binding is not None and self._binding_outside(fi, binding, strict)
            s = defs[s].parent
        return False

    def _binding_outside(self, fi: FileIndex, binding: Binding, strict: bool) -> bool:
        """Whether ``binding`` declares its name of a type outside the index (see
        :meth:`_local_outside`), or binds it to what a function of the index declares it
        returns of one."""
        if not binding.is_call:
            return _plain_type(binding.type_path) and self._type_outside(
                fi, binding.type_path, binding.scope, strict)
        callee, result = binding.type_path, 0
        last = callee[-1]
        if last.startswith(RESULT_SEGMENT_PREFIX) and last[1:].isdigit():
            callee, result = callee[:-1], int(last[1:])
        return not strict and self._returns_outside(
            fi, callee, binding.scope, binding.at - 1 if binding.at else 0, result)

    def _returns_outside(self, fi: FileIndex, callee: NamePath, scope: int, site: int,
                         result: int = 0) -> bool:
        """Whether every function of the index ``callee`` names declares its result (the
        one at ``result``) of a type outside the index; not for a function outside it (what
        a library returns may be of the index's types: `list.get(0)`)."""
        if not callee or callee == UNKNOWN_VALUE or callee[-1] == ELEMENT_OF \
                or callee[-1][:1] == CALLBACK_OF:
            return False
        functions = self.resolve_path(fi, callee, scope, site=site)[0]
        if not functions:
            return False
        if all(f[0] == EXTERNAL_TAG for f in functions):  # `f, err := os.Open(..)`
            return all(fi.rules.outside_results(f) for f in functions)
        for function in functions[:4]:
            if function[0] != DEFINITION_TAG:
                return False
            d = self.definition(function)
            declaring = self.index(function[1])
            if d is None or declaring is None or d.kind != FUNCTION:
                return False
            written = d.signature_data[1] if len(d.signature_data) > 1 else None
            types = result_types(written) if written else []
            # (a call bound to one name has one result: `f, err := g()`'s f is g's first)
            if result >= len(types):
                return False
            square = getattr(family_plugin(declaring.family), "SQUARE_TYPE_ARGS", False)
            typed = type_path(types[result], square)
            if not typed or not self._type_outside(declaring, typed, d.parent, False):
                return False
        return True

    def _type_outside(self, fi: FileIndex, written: NamePath, scope: int, strict: bool
                      ) -> bool:
        """Whether the type path ``written`` (read in ``scope``) names types outside the index
        (a predeclared one of the family's: Go's `error`), or where not ``strict`` classes of
        the index extending one."""
        typed = self.resolve_path(fi, written, scope, want_type=True)[0]
        if not typed:  # a predeclared type, or a dot-import's (Go)
            return len(written) == 1 and (written[0] in fi.rules.builtin_types
                                          or fi.rules.outside_name(self, fi, written[0]))
        if not self._surely(fi, written, typed):
            return False
        if strict:
            return all(t[0] == EXTERNAL_TAG for t in typed)
        return all(self._class_outside(t) for t in typed)


def _placed_arguments(fi: FileIndex, argument_types: tuple[str, ...], scope: int, site: int
                      ) -> tuple[str, ...]:
    """The argument types with each variable bound several ways (`=x`, or a path from it:
    `~x.f`) marked with where the binding that reaches the call takes effect (`=x@at`, see
    ``FileIndex.reach_key``): its declaration types it, not the first one of its name."""
    out: list[str] | None = None
    for i, argument in enumerate(argument_types):
        head = argument[1:].partition(".")[0] if argument[:1] == "~" else argument[1:]
        if argument[:1] in ("=", "~") and head in fi.placed_names:
            reach = fi.reach_key(head, scope, site)
            if reach is not None and len(reach) == 1:
                if out is None:
                    out = list(argument_types)
                out[i] = f"{argument}@{reach[0]}"
    return tuple(out) if out is not None else argument_types


def _plain_type(path: NamePath) -> bool:
    """Whether a binding's type path names a type as written (no call's result, element,
    callback's parameter or value of no known type)."""
    return path != UNKNOWN_VALUE and path[-1] != ELEMENT_OF and path[-1][:1] != CALLBACK_OF


def _dedupe_symbols(symbols: list[Symbol]) -> list[Symbol]:
    return list(dict.fromkeys(symbols))


def _unique_edges(edges: list[ResolvedEdge]) -> list[ResolvedEdge]:
    """One edge per (source, target, type, line); one Imports edge per imported file."""
    seen: set[tuple] = set()
    out: list[ResolvedEdge] = []
    for e in edges:
        key = (e.source, e.target, e.type, None if e.type == IMPORTS else e.line)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def _nearest_declared(fi: FileIndex, declared: list[int], targets: list[tuple[int, str, str]],
                      line: int) -> list[tuple[int, str, str]]:
    """``targets`` with the one among the same-named module-scope functions ``declared``
    (each in a block the index does not model, see FileIndex.block_functions) replaced by the
    last declared at or before ``line``: the one in the block the call is in, where each
    block declares it before using it (the first where none precedes)."""
    ids = fi.ids
    among = {ids[i] for i in declared}
    defs = fi.facts.defs
    nearest = declared[0]
    for i in declared:
        if defs[i].start_line <= line:
            nearest = i
    return _dedupe_targets([(ids[nearest], edge_type, confidence) if target in among
                            else (target, edge_type, confidence)
                            for target, edge_type, confidence in targets])


def _dedupe_targets(targets: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    seen: set[tuple[int, str]] = set()
    out = []
    for target in targets:
        if (target[0], target[1]) not in seen:
            seen.add((target[0], target[1]))
            out.append(target)
    return out
