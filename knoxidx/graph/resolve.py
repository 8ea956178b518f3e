"""Cross-file name resolution: stored per-file facts -> edges.

Language-agnostic engine; what differs per language (import mapping, module scope, what
``self``/``this`` mean) comes from the family module's ``RULES``. Every fact consulted while
resolving a file is recorded as a lookup key (:mod:`knoxidx.graph.lookups`), so an incremental
update knows exactly which files' edges a change can affect (the stack-graphs idea: file-local
facts, stitched globally). What a name or path denotes is :mod:`knoxidx.graph.scopes`; this
module turns a file's references, imports and impls into edges, with their confidence, and
says why a call stays unresolved. The resolver's parts are its base classes, each a module:
what a reference's path denotes (:mod:`~knoxidx.graph.denoted`), the edges that are no
reference's lookup and constructors' (:mod:`~knoxidx.graph.edges`), what lies outside the
index (:mod:`~knoxidx.graph.outside`) and the choice among overloads
(:mod:`~knoxidx.graph.overloads`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knoxidx.core.errors import CorruptIndexError
from knoxidx.core.facts import BASE_KINDS, ITEMS_HEAD, RECEIVER_ARGUMENT, NamePath, RefKind, point
from knoxidx.core.model import node_id
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, Symbol
from knoxidx.graph.denoted import Denoted, lookup_key
from knoxidx.graph.edges import (
    CALLS,
    IMPORTS,
    INFERRED,
    NAME,
    FileResolution,
    ResolvedEdge,
    Unresolved,
)
from knoxidx.graph.scopes import EXACT, UNION, UNION_MAX
from knoxidx.parse.file_index import INTERFACE, FileIndex

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolutionRules

# what a reference yields whatever its line: source, [(target, edge type, confidence)], and
# (name, reason, candidates) when a call stays unresolved
_Outcome = tuple[int, list[tuple[int, str, str]], tuple[str, str, int] | None]
_new = tuple.__new__  # a NamedTuple record without its Python-level __new__

CALL_LIKE = frozenset({RefKind.CALL, RefKind.NEW, RefKind.VALUE})  # see _outcome's source
TYPE_POSITIONS = frozenset({RefKind.NEW, RefKind.TYPE}) | BASE_KINDS  # see types_apart_from_values
_SUPER = ("super",)
_THIS = ("this",)
# More definitions than this for one reference is no set of overloads (java.lang.StringBuilder
# has 13 `append`s): a mangled file that declares one name thousands of times, whose every
# reference would otherwise make an edge to each (4,438 x 4,536 edges in one fuzzed file, found
# by bench.fuzz: the update ran for minutes). Such a reference stays unresolved, "ambiguous".
MAX_CANDIDATES = 64


class Resolver(Denoted):
    """Resolves every reference and import of a file against a :class:`Workspace`."""

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
        answer = resolved.get((lookup_key(path, called, typed), shared))
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
