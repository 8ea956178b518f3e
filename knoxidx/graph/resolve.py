"""Cross-file name resolution: stored per-file facts -> edges.

Language-agnostic engine; what differs per language (import mapping, module scope, what
``self``/``this`` mean) comes from the family module's ``RULES``. Every fact consulted while
resolving a file goes through :class:`Workspace` and is recorded as a lookup key, so an
incremental update knows exactly which files' edges a change can affect (the stack-graphs idea:
file-local facts, stitched globally).

Symbols are small tuples:
    ("d", path, index)    a definition
    ("i", path, index)    an instance of the class/interface/type definition at (path, index)
    ("m", family, key)    a module or package, by its family-specific key
    ("x", family, name)   an external (third-party) module
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from knoxidx.graph.file_index import (
    CLASS,
    FUNCTION,
    INTERFACE,
    TYPE_KINDS,
    FileIndex,
)
from knoxidx.graph.model import (
    Confidence,
    EdgeType,
    NodeKind,
    external_module_id,
    module_node_id,
    node_id,
)
from knoxidx.indexer.facts import Binding, FileFacts, Import, NamePath, Reference, RefKind
from knoxidx.indexer.heap import settle
from knoxidx.indexer.languages import BY_NAME, family_plugin

Symbol = tuple[str, str, Any]
# what a reference yields whatever its line: source, [(target, edge type, confidence)], and
# (name, reason, candidates) when a call stays unresolved
_Outcome = tuple[int, list[tuple[int, str, str]], tuple[str, str, int] | None]
_new = tuple.__new__  # a NamedTuple record without its Python-level __new__

VARIABLE = NodeKind.VARIABLE.value
CONSTANT = NodeKind.CONSTANT.value
MODULE = NodeKind.MODULE.value
TYPE = NodeKind.TYPE.value
# Plain strings in the hot path: an Enum member's .value is a descriptor call every time.
EXACT = Confidence.EXACT.value
INFERRED = Confidence.INFERRED.value
NAME = Confidence.NAME.value
CALLS = EdgeType.CALLS.value
IMPORTS = EdgeType.IMPORTS.value
EXTENDS = EdgeType.EXTENDS.value
IMPLEMENTS = EdgeType.IMPLEMENTS.value
USES = EdgeType.USES.value
REFERENCES = EdgeType.REFERENCES.value
CALL_LIKE = frozenset({RefKind.CALL, RefKind.NEW, RefKind.VALUE})  # see _outcome's source
BASE_KINDS = frozenset({RefKind.EXTENDS, RefKind.IMPLEMENTS})
MAX_DEPTH = 12
# More definitions than this for one reference is no set of overloads (java.lang.StringBuilder
# has 13 `append`s): a mangled file that declares one name thousands of times, whose every
# reference would otherwise make an edge to each (4,438 x 4,536 edges in one fuzzed file, found
# by bench.fuzz: the update ran for minutes). Such a reference stays unresolved, "ambiguous".
MAX_CANDIDATES = 64
# Files whose index a resolver keeps (see index()). Each resolving process (the parent and a
# child) holds this many; at 1,500 the whole benchmark corpus peaked at 527-631 MB summed over
# the build's processes, at 600 at 397-409 MB (300: 397), with resolution no slower (one
# process, min of 3: 9.00 s at 1,500, 8.49 s at 600) and the same graph.
INDEX_CACHE_FILES = 600


class Workspace(Protocol):
    """The facts resolution may read. Implementations record nothing; the resolver does."""

    layout: Any

    def facts(self, path: str) -> FileFacts | None: ...
    def module_paths(self, family: str, key: str) -> tuple[str, ...]: ...
    def defs_named(self, family: str, name: str) -> list[tuple[str, int, str, bool]]: ...
    def methods_of(self, family: str, owner: str) -> list[tuple[str, int, str]]: ...


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


def family_of_language(language: str) -> str:
    return BY_NAME[language].family


class Resolver:
    """Resolves every reference and import of a file against a :class:`Workspace`."""

    def __init__(self, workspace: Workspace) -> None:
        self.ws = workspace
        self.layout = workspace.layout
        self._indexes: dict[str, FileIndex | None] = {}
        self._bases_cache: dict[tuple[str, int], tuple[list[Symbol], frozenset[str]]] = {}
        self.keys: set[str] = set()
        self._typing: set[tuple[str, Binding]] = set()
        self._active: set[tuple] = set()
        self._memo: dict[tuple, tuple[Any, frozenset[str]]] = {}
        self._guesses: dict[tuple[str, str, bool], tuple[list[Symbol], int, frozenset[str]]] = {}
        self._file_keys: dict[str, str] = {}  # path -> "file:" + path, made once
        self._targets: dict[Symbol, tuple[int, str]] = {}  # see _target
        self._name_keys: dict[str, str] = {}  # name -> "name:" + name, made once
        # (family, module key) -> its "mod:" lookup key and the workspace's paths for it
        self._modules: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
        # memo key -> the key set its consulted keys were last replayed into: a second hit
        # while resolving the same file (or computing the same answer) adds nothing
        self._replayed: dict[tuple, set[str]] = {}

    def memo(self, key: tuple, compute: Any, *args: Any) -> Any:
        """``compute(*args)`` once per key for the life of this resolver (one update: the
        facts do not change). The lookup keys ``compute`` consulted are replayed on every hit,
        so a cached answer records the same dependencies as a fresh one. (The hot callers pass
        a bound method and its arguments, not a lambda: most calls are hits, and a closure
        made for each of them would never be called.)"""
        hit = self._memo.get(key)
        if hit is not None:
            keys = self.keys
            if self._replayed.get(key) is not keys:
                keys |= hit[1]
                self._replayed[key] = keys
            return hit[0]
        outer, self.keys = self.keys, set()
        try:
            value = compute(*args)
        finally:
            consulted = self.keys
            outer |= consulted  # in place: a file's key set grows with every lookup it makes
            self.keys = outer
        if not self._active:  # answers computed inside a cycle guard may be partial
            self._memo[key] = (value, frozenset(consulted))
        return value

    @contextmanager
    def entering(self, key: tuple) -> Iterator[bool]:
        """Guards mutually recursive lookups (re-export cycles, ``a`` imports from ``b`` imports
        from ``a``): yields False when ``key`` is already being resolved further up."""
        if key in self._active:
            yield False
            return
        self._active.add(key)
        try:
            yield True
        finally:
            self._active.discard(key)

    def module_member(self, module: Symbol, name: str, depth: int,
                      compute: Callable[[], list[Symbol]]) -> list[Symbol]:
        """A family's ``module_member``: ``compute()`` under the cycle guard of (module,
        name), [] when that is being answered further up (re-exports that go round). Asked
        outside every guard, the answer is kept for the resolver's life (see :meth:`memo`):
        many files import the same names from the same modules. Inside one it is computed
        afresh, since the guard's cut can make it differ."""
        guard = ("member", module, name)
        if self._active:
            with self.entering(guard) as fresh:
                return compute() if fresh else []

        def entered() -> list[Symbol]:
            with self.entering(guard):
                return compute()

        return self.memo(("module-member", module, name, depth), entered)

    # ---- workspace access (every read is recorded) -------------------------------------

    def _file_key(self, path: str) -> str:
        key = self._file_keys.get(path)
        if key is None:
            key = self._file_keys[path] = "file:" + path
        return key

    def index(self, path: str) -> FileIndex | None:
        fi = self._indexes.get(path)
        if fi is not None:  # the common case: its key made once, with the index
            self.keys.add(fi.file_key)
            return fi
        self.keys.add(self._file_key(path))
        if path in self._indexes:
            return None
        facts = self.ws.facts(path)
        fi = None
        if facts is not None:
            family = family_of_language(facts.language)
            fi = FileIndex(facts, family, family_plugin(family).RULES)
        if len(self._indexes) >= INDEX_CACHE_FILES:
            # Bounded memory on huge repos: forget the oldest half (paths are resolved in
            # order, so what a package's files share is still warm).
            for old in list(self._indexes)[: INDEX_CACHE_FILES // 2]:
                del self._indexes[old]
            self._memo.clear()  # answers about the dropped files would keep them alive
            self._replayed.clear()
            self._bases_cache.clear()
        self._indexes[path] = fi
        settle()  # the new index lives as long as the resolver, and holds no cycle
        return fi

    def defining(self, path: str) -> FileIndex:
        """The index of a file a definition symbol points into: it has one, since the symbol
        was made from it."""
        fi = self.index(path)
        if fi is None:
            raise LookupError(f"no facts for {path}, which a definition symbol names")
        return fi

    def module_paths(self, family: str, key: str) -> tuple[str, ...]:
        known = self._modules.get((family, key))
        if known is None:  # asked again and again (a package per file, a type per import)
            known = self._modules[(family, key)] = (f"mod:{family}:{key}",
                                                    self.ws.module_paths(family, key))
        self.keys.add(known[0])
        return known[1]

    def defs_named(self, family: str, name: str) -> list[tuple[str, int, str, bool]]:
        self.keys.add(self._name_key(name))
        return self.ws.defs_named(family, name)

    def _name_key(self, name: str) -> str:
        key = self._name_keys.get(name)
        if key is None:
            key = self._name_keys[name] = "name:" + name
        return key

    def methods_of(self, family: str, owner: str) -> list[tuple[str, int, str]]:
        self.keys.add("owner:" + owner)
        return self.ws.methods_of(family, owner)

    def child(self, fi: FileIndex, scope: int, name: str) -> list[int] | None:
        """``fi``'s definitions named ``name`` directly in ``scope`` (-1: the top level); a
        miss is recorded (see :meth:`missed`)."""
        hit = fi.children.get((scope, name))
        if not hit:
            self.missed(fi, scope, name)
        return hit

    def module_names(self, family: str, key: str) -> dict[str, list[tuple[str, int]]]:
        """The top-level definitions of every file of a module, by name: name -> [(path,
        index of its last definition there)] in path order. One table per module for the life
        of the resolver, where scanning the files cost one lookup per file per name (a Go
        package's scope spans every file of its directory). It depends on each of those files,
        and its users record the ``name:`` keys a scan would have recorded."""
        def build() -> dict[str, list[tuple[str, int]]]:
            table: dict[str, list[tuple[str, int]]] = defaultdict(list)
            for path in self.module_paths(family, key):
                fi = self.index(path)
                if fi is None:
                    continue
                for (scope, name), indexes in fi.children.items():
                    if scope == -1:
                        table[name].append((path, indexes[-1]))
            return dict(table)

        return self.memo(("module-names", family, key), build)

    def missed_name(self, name: str) -> None:
        """Record a top-level lookup of ``name`` that some file did not answer."""
        self.keys.add(self._name_key(name))

    def missed(self, fi: FileIndex, scope: int, name: str) -> None:
        """Record that ``name`` was looked up in ``scope`` of ``fi`` and is not defined there.
        A file whose interface only gains definitions invalidates just the ``name:`` keys of
        what it gained, so every lookup that a new definition could answer must be on record.
        Function bodies are exempt: no other file looks names up inside them."""
        if scope < 0 or fi.facts.defs[scope].kind != FUNCTION:
            key = self._name_keys.get(name)  # _name_key's hit, inlined: called as often
            self.keys.add(key if key is not None else self._name_key(name))

    def definition(self, symbol: Symbol) -> Any:
        fi = self._indexes.get(symbol[1])
        if fi is None:
            fi = self.index(symbol[1])
            return fi.facts.defs[symbol[2]] if fi is not None else None
        self.keys.add(fi.file_key)  # index()'s fast path, inlined: called as often
        return fi.facts.defs[symbol[2]]

    # ---- a whole file ------------------------------------------------------------------

    def resolve_file(self, path: str) -> FileResolution:
        """Every edge whose site is in ``path``. A failure here (a bug, never bad input) is
        reported for this one file and costs the others nothing."""
        try:
            return self._resolve_file(path)
        except RecursionError:
            return FileResolution(path, error="resolution recursed too deep")
        except Exception as exc:  # noqa: BLE001 - isolate one file's failure
            return FileResolution(path, error=f"{type(exc).__name__}: {exc}")

    def _resolve_file(self, path: str) -> FileResolution:
        self.keys = set()
        self._replayed.clear()
        result = FileResolution(path)
        fi = self.index(path)
        if fi is None:
            return result
        rules = fi.rules
        file_id = node_id("file", path)

        for imp in fi.facts.imports:
            for target in rules.import_targets(self, fi, imp):
                self._import_edge(result, file_id, target, imp.line)

        # A third of a file's references repeat one already resolved from the same scope
        # (`len(x)` twice in a function): resolved once, and what it yields (the source, the
        # targets with their edge types, or why it is unresolved) reused for every repeat.
        # Its lookup keys are this file's already, so a repeat records nothing new.
        resolved: dict[tuple[NamePath, int], tuple[list[Symbol], str]] = {}
        # what a head denotes from a scope, for the paths that start with it (x.a(), x.b)
        heads: dict[tuple[str, int], tuple[list[Symbol], bool]] = {}
        outcomes: dict[tuple[NamePath, int, str], _Outcome] = {}
        # One edge per (source, target, type, line), the first one made, as they are made;
        # Imports edges (one per imported file, whatever the line) never equal another.
        result.edges = edges = _unique_edges(result.edges)
        seen: set[tuple[int, int, str, int]] = set()
        unresolved = result.unresolved
        for ref in fi.facts.refs:
            kind, name_path, scope, line, _ = ref  # unpacked: four attribute reads cost more
            key = (name_path, scope, kind)
            outcome = outcomes.get(key)
            if outcome is None:
                outcome = outcomes[key] = self._outcome(fi, ref, file_id, resolved, heads)
            source, targets, missing = outcome
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

    def _outcome(self, fi: FileIndex, ref: Reference, file_id: int,
                 resolved: dict[tuple[NamePath, int], tuple[list[Symbol], str]],
                 heads: dict[tuple[str, int], tuple[list[Symbol], bool]]) -> _Outcome:
        """What a reference yields, whatever its line: (source node, [(target node, edge type,
        confidence)], None or (name, reason, candidates) when a call stays unresolved).
        ``resolved``: what a path denotes, by where its lookup goes; ``heads``: what a head
        denotes from a scope the walk starts at (the file's lookup keys have it already)."""
        defs = fi.facts.defs
        kind = ref.kind
        scope = ref.scope
        # the source: calls come from the enclosing function (or class), other edges from any
        # definition
        if scope < 0:
            source = file_id
        else:
            s = fi.caller(scope) if kind in CALL_LIKE else scope
            source = fi.ids[s] if s >= 0 else file_id
        if kind in BASE_KINDS:
            scope = defs[scope].parent if scope >= 0 else -1
        path = ref.path
        head = path[0].removesuffix("()") if path else "?"
        rules = fi.rules
        # Where the head's lookup goes, learned here once per outcome rather than again by
        # lookup() (whose tests these are, in its order): 0 resolve_path's way (no head, or
        # one the family answers), 1 the module scope, 2 the class at ``cls``, 3 the walk
        # from ``scope``.
        if head == "?" or head in rules.special_heads:
            shared = scope
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
            shared = scope
            via = 3
        answer = resolved.get((path, shared))
        if answer is None:
            if via == 1:
                answer = self._follow(path, self.memo(("module-scope", fi.path, head, False),
                                                      self._module_scope, fi, head, False),
                                      False, path[0].endswith("()"))
            elif via == 2:
                answer = self._follow(path, self._class_scopes_memo(fi, cls, head, False),
                                      False, path[0].endswith("()"))
            elif head == "?":
                answer = self.resolve_path(fi, path, scope)
            else:
                got = heads.get((head, scope))
                if got is None:
                    got = heads[(head, scope)] = (self._walk(fi, head, scope, False) if via == 3
                                                  else self._head(fi, head, scope))
                answer = self._follow(path, got[0], got[1], path[0].endswith("()"))
            resolved[(path, shared)] = answer
        found, confidence = answer
        targets = [s for s in found if s[0] == "d"]
        if not targets:
            candidates = 0
            if kind in (RefKind.CALL, RefKind.NEW):
                guessed, candidates = self._guess(fi, ref, found)
                if guessed:
                    targets, confidence = guessed, NAME
            if not targets:
                if kind in (RefKind.CALL, RefKind.NEW):
                    reason = "external" if any(s[0] == "x" for s in found) else (
                        "ambiguous" if candidates > 1 else "unknown")
                    return source, [], (".".join(ref.path), reason, candidates)
                return source, [], None
        if len(targets) > 1 and confidence != NAME:
            confidence = NAME  # several candidates: never silently pick one
            if len(targets) > MAX_CANDIDATES:  # not a set of overloads: a mangled file
                if kind in (RefKind.CALL, RefKind.NEW):
                    return source, [], (".".join(ref.path), "ambiguous", len(targets))
                return source, [], None
        out: list[tuple[int, str, str]] = []
        scope_def = defs[ref.scope] if ref.scope >= 0 else None
        known = self._targets
        for target in targets:
            info = known.get(target)
            if info is None:
                info = self._target(target)
            else:  # _target's hit, inlined: the file made its key when first indexed
                self.keys.add(self._file_keys[target[1]])
            target_id, target_kind = info
            edge_type = self._edge_type(kind, scope_def, target_kind)
            if edge_type is not None:
                out.append((target_id, edge_type, confidence))
        return source, out, None

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
        if target[0] == "x":
            ext_id = external_module_id(target[1], target[2])
            result.externals[ext_id] = (target[1], target[2])
            result.edges.append(
                ResolvedEdge(file_id, ext_id, IMPORTS, EXACT, line)
            )
        elif target[0] == "m":
            result.edges.append(ResolvedEdge(
                file_id, module_node_id(target[1], target[2]), IMPORTS,
                EXACT, line,
            ))
        elif target[0] == "f" and target[1] != result.path:
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
                if t[0] == "d" and tr[0] == "d":
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

    # ---- paths -------------------------------------------------------------------------

    def resolve_path(
        self, fi: FileIndex, path: NamePath, scope: int, want_type: bool = False
    ) -> tuple[list[Symbol], str]:
        """Symbols a dotted path denotes from ``scope`` and the confidence of the result.

        A segment ending in "()" is a call: the path continues from what it returns.
        """
        if not path:
            return [], EXACT
        head = path[0]
        inferred = False
        if head == "?":
            return [], EXACT
        called = head.endswith("()")
        if called:
            head = head[:-2]
        current, inferred = self._head(fi, head, scope, want_type and len(path) == 1)
        return self._follow(path, current, inferred, called)

    def _head(self, fi: FileIndex, head: str, scope: int,
              want_type: bool = False) -> tuple[list[Symbol], bool]:
        """What a path's first name (without its call) denotes from ``scope``, and whether
        that went through an instance's type."""
        rules = fi.rules
        current = rules.special_head(self, fi, head, scope) if head in rules.special_heads \
            else None
        if current is not None:
            return current, head in rules.self_names or head == "super"
        return self.lookup(fi, head, scope, want_type)

    def _follow(self, path: NamePath, current: list[Symbol], inferred: bool,
                called: bool) -> tuple[list[Symbol], str]:
        """The rest of :meth:`resolve_path` once its head denotes ``current``: the head's
        call, then each further segment as a member of what the path denotes so far."""
        if called:
            current, inferred = self.call_results(current), True
        for segment in path[1:]:
            if not current:
                break
            called = segment.endswith("()")
            if called:
                segment = segment[:-2]
            nxt: list[Symbol] = []
            for symbol in current[:4]:
                members, via_instance = self.member(symbol, segment)
                nxt.extend(members)
                inferred = inferred or via_instance
            current = _dedupe(nxt)
            if called:
                current, inferred = self.call_results(current), True
        conf = INFERRED if inferred else EXACT
        return current, conf

    def call_results(self, symbols: list[Symbol]) -> list[Symbol]:
        """What calling each symbol yields: an instance of a class, a function's return type."""
        out: list[Symbol] = []
        for symbol in symbols[:4]:
            if symbol[0] != "d":
                continue
            d = self.definition(symbol)
            if d.kind in TYPE_KINDS:
                out.extend(self.instances_of(symbol))
            elif d.kind == FUNCTION and d.type_hint:
                out.extend(self.returns(symbol))
        return _dedupe(out)

    def lookup(
        self, fi: FileIndex, name: str, scope: int, want_type: bool = False
    ) -> tuple[list[Symbol], bool]:
        """Lexical lookup of a bare name: enclosing scopes, then the module, then the family's
        fallbacks (package scope, wildcard imports, builtins). ``want_type``: the name is in a
        type position, so values (fields, variables, locals) do not shadow it."""
        if not fi.walk_needed(name, scope):
            # straight to the module scope, recording what the walk would have: the miss in
            # the reference's own scope when that is no function body
            if scope >= 0:
                self.missed(fi, scope, name)
            return self.memo(("module-scope", fi.path, name, want_type),
                             self._module_scope, fi, name, want_type), False
        rules = fi.rules
        if rules.class_members_visible and scope >= 0:
            cls = fi.class_entry(name, scope)
            if cls >= 0:
                return self._class_scopes_memo(fi, cls, name, want_type), False
        return self._walk(fi, name, scope, want_type)

    def _walk(self, fi: FileIndex, name: str, scope: int,
              want_type: bool) -> tuple[list[Symbol], bool]:
        """:meth:`lookup` where neither of its shortcuts applies: the scopes from ``scope``
        outwards, then the module scope."""
        defs = fi.facts.defs
        rules = fi.rules
        s = scope
        while s >= 0:
            d = defs[s]
            # an inline module (Rust `mod parsing { use ...; }`, a TypeScript namespace) binds
            # names for what it holds, as a function does
            if d.kind == FUNCTION or d.kind == MODULE or s == scope:
                binding = None if want_type else fi.bindings.get((s, name))
                if binding is not None and d.kind == FUNCTION:
                    typed = self.binding_type(fi, binding)
                    return (typed, True) if typed else ([], False)
                found = self._scope_entry(fi, s, name, want_type)
                if found is not None:
                    return found, False
                if d.kind == FUNCTION and name in rules.self_names and rules.self_binds_anywhere:
                    cls = fi.class_of(s)
                    if cls >= 0:
                        return [("i", fi.path, cls)], True
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
            return [("d", fi.path, s)]
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
            kind = fi.facts.defs[hit[-1]].kind
            value = kind in (VARIABLE, CONSTANT)
            if not (value and (imports or want_type)):
                return [("d", fi.path, hit[-1])]
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
        if tag == "x":
            return [symbol], False  # a member of something external is external
        if tag == "m" or tag == "f":
            fi_rules = family_plugin(symbol[1] if tag == "m" else self._family(symbol[1])).RULES
            return fi_rules.module_member(self, symbol, name), False
        d = self.definition(symbol)
        if d is None:
            return [], False
        if tag == "i":
            found = self.class_member(symbol[1], symbol[2], name)
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
            return ([("d", symbol[1], hit[-1])] if hit else []), False
        if kind in (VARIABLE, CONSTANT) and depth < MAX_DEPTH:
            typed = self.value_type(symbol)
            out: list[Symbol] = []
            for t in typed:
                members, _ = self.member(t, name, depth + 1)
                out.extend(members)
            return out, True
        return [], False

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
        if owned:
            return [("d", p, i) for p, i in owned]
        hit = self.child(fi, index, name)
        if hit:
            return [("d", path, i) for i in hit]
        for base in self.bases_of(path, index):
            found = self._class_member(base[1], base[2], name, depth + 1)
            if found:
                return found
        return []

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
            parent = fi.facts.defs[index].parent
            for ref in fi.bases.get(index, ()):
                found, _ = self.resolve_path(fi, ref.path, parent)
                out.extend(s for s in found if s[0] == "d" and s != ("d", path, index))
            out.extend(fi.rules.extra_bases(self, fi, index))
        out = _dedupe(out)
        consulted = frozenset(self.keys)
        self._bases_cache[key] = (out, consulted)
        outer_keys |= consulted  # in place, as in memo()
        self.keys = outer_keys
        return out

    # ---- types of values ---------------------------------------------------------------

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
        try:
            found, _ = self.resolve_path(fi, binding.type_path, binding.scope,
                                         want_type=not binding.is_call)
        finally:
            self._typing.discard(key)
        out: list[Symbol] = []
        for symbol in found[:4]:
            if symbol[0] == "i":  # `self.x = x` where x is a typed local: the same type
                out.append(symbol)
                continue
            if symbol[0] != "d":
                continue
            d = self.definition(symbol)
            if d.kind in TYPE_KINDS:
                out.extend(self.instances_of(symbol))
            elif d.kind == FUNCTION and binding.is_call and d.type_hint:
                out.extend(self.returns(symbol, depth + 1))
            elif d.kind in (VARIABLE, CONSTANT) and d.type_hint and not binding.is_call:
                # a member's declared type: `({ board }: Props)` binds board to Props.board
                out.extend(self.value_type(symbol))
        return _dedupe(out)

    def instances_of(self, symbol: Symbol) -> list[Symbol]:
        """An instance of the type definition ``symbol``: of what it stands for when it is an
        alias (``input: ParseStream`` holds a ParseBuffer), else of itself."""
        aliased = self.aliased(symbol)
        return [("i", t[1], t[2]) for t in aliased] if aliased else [("i", symbol[1], symbol[2])]

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
            if target[0] != "d" or target == symbol:
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
        if hint and hint[-1] in fi.rules.self_type_names:
            cls = fi.class_of(d.parent) if d.parent >= 0 else -1
            if cls >= 0:
                return [("i", fi.path, cls)]
            if d.owner:
                found, _ = self.lookup(fi, d.owner, -1)
                return [("i", s[1], s[2]) for s in found if s[0] == "d"]
            return []
        return self.binding_type(fi, Binding(d.parent, "", hint, False), depth + 1)  # a type

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

    # ---- the unique-name guess ---------------------------------------------------------

    def _guess(self, fi: FileIndex, ref: Reference, found: list[Symbol]) -> tuple[list[Symbol], int]:
        """The unique-name guess: (the one candidate or nothing, how many candidates)."""
        if any(s[0] == "x" for s in found):
            return [], 0  # it names something external: no guessing
        name = ref.path[-1]
        rules = fi.rules
        head = ref.path[0]
        if len(ref.path) == 2 and (head in rules.self_names or head in ("super", "Self")):
            return [], 0  # the receiver's class is known: the method is inherited from outside
        if len(ref.path) == 1:
            if not rules.guess_bare_names:
                return [], 0
        elif not rules.guess_members or name in rules.builtin_method_names:
            return [], 0
        member = len(ref.path) > 1
        key = (fi.family, name, member)
        cached = self._guesses.get(key)
        if cached is None:
            candidates = [
                (p, i) for p, i, kind, is_member in self.defs_named(fi.family, name)
                if kind in (FUNCTION, CLASS) and (is_member or not member)
            ]
            found_one = [("d", candidates[0][0], candidates[0][1])] if len(candidates) == 1 else []
            cached = (found_one, len(candidates), frozenset({"name:" + name}))
            self._guesses[key] = cached
        self.keys |= cached[2]
        return cached[0], cached[1]


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


def _dedupe(symbols: list[Symbol]) -> list[Symbol]:
    if len(symbols) < 2:
        return symbols
    return list(dict.fromkeys(symbols))
