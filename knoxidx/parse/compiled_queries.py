"""A language's parser and tags query, compiled once per process, and how their matches are
read: the role of each of the query's patterns (a definition, a reference of which kind, an
import, a binding...), and in the compiled build the query's plan for the native matches of
``_matches.c`` (``native_matches``), which hand back the references' and local names' matches
as plain rows, with no node object made for them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from knoxidx.core.facts import REF_KINDS
from knoxidx.languages.protocol import Language
from knoxidx.languages.registry import BY_NAME, query_source, ts_language

# Query patterns start no deeper than this in the tree. tree-sitter's query cursor keeps a
# state for each enclosing node that may begin a pattern, so on pathologically deep nesting
# (10,000 nested generics, calls or blocks) a query costs depth x nodes: minutes for one file.
# Real code nests far shallower (a 2,500-file sample of the benchmark corpus: 69 levels at
# most, 1,024 nodes sampled per file); what lies deeper is not indexed, with a warning.
MAX_QUERY_DEPTH = 1000


@dataclass(slots=True)
class CompiledQuery:
    parser: Any
    query: Any  # the language's whole tags file: one pass over the tree, run with matches()
    errors_query: Any
    plugin: Language
    # pattern index -> (role, kind, main capture, the kind's rank among reference kinds)
    roles: dict[int, tuple[str, str, str, int]]
    plan: Any = None  # the query's plan for knoxidx.parse._matches, where that runs it


def prepare(languages: Iterable[str]) -> None:
    """Compile the parsers and queries of ``languages`` in this process now, so that the parse
    worker it forks next inherits them compiled (and so do later updates' in a long-lived
    process). Compiling the TypeScript query alone takes ~0.1 s, all seven ~0.35 s. A pool of
    several workers does not wait for it: each worker compiles the languages of the chunks it
    claims (``parse_worker.read_claimed``)."""
    for language in languages:
        compiled_query(language)


def compiled_languages() -> set[str]:
    """The languages whose parser and queries this process holds compiled (itself, or
    inherited from the process it was forked from)."""
    return set(COMPILED)


COMPILED: dict[str, CompiledQuery] = {}  # by language: compiled once per process


def native_matches() -> Any:
    """``knoxidx.parse._matches`` (see ``_matches.c``) where it was built, and built for the
    tree-sitter installed (it reads py-tree-sitter's objects by their layout in that version),
    unless ``KNOXIDX_NATIVE=0``; else None, and extraction reads py-tree-sitter's matches."""
    global _NATIVE, _NATIVE_LOADED
    if not _NATIVE_LOADED:
        _NATIVE_LOADED = True
        _NATIVE = _load_native()
    return _NATIVE


def _load_native() -> Any:
    if os.environ.get("KNOXIDX_NATIVE") == "0":
        return None
    try:
        import tree_sitter

        from knoxidx.parse import _matches  # type: ignore[attr-defined]
    except ImportError:
        return None
    if getattr(_matches, "TREE_SITTER_VERSION", None) != getattr(tree_sitter, "__version__", ""):
        return None  # built against another py-tree-sitter: reinstall knoxidx to rebuild it
    return _matches


_NATIVE: Any = None
_NATIVE_LOADED = False


def compiled_query(language: str) -> CompiledQuery:
    compiled = COMPILED.get(language)
    if compiled is None:
        compiled = COMPILED[language] = _compile(language)
    return compiled


def _compile(language: str) -> CompiledQuery:
    from tree_sitter import Parser, Query

    lang = ts_language(language)
    compiled = CompiledQuery(
        parser=Parser(lang),
        query=Query(lang, query_source(language)),
        errors_query=Query(lang, "(ERROR) @error"),
        plugin=BY_NAME[language].plugin,
        roles={},
    )
    native = native_matches()
    if native is not None:
        compiled.plan = _plan(native, compiled.query, compiled.roles)
    return compiled


def _plan(native: Any, query: Any, roles: dict[int, tuple[str, str, str, int]]) -> Any:
    """``query``'s plan for the native matches (its reference patterns' matches as rows of
    ints, its locals' as spans), with ``roles`` filled in for every pattern; None where the
    query holds a predicate the native matches do not evaluate."""
    ids = {query.capture_name(i): i for i in range(query.capture_count)}
    modes = bytearray()
    ranks = bytearray()
    mains: list[int] = []
    receivers: list[int] = []
    kinds: list[str | None] = []
    for pattern, names in enumerate(native.pattern_captures(query)):
        role = roles[pattern] = pattern_role(dict.fromkeys(names, []))
        kind, sub, main, rank = role
        modes.append(_REF_MODE if kind == "ref" else _SPAN_MODE if kind == "local" else 0)
        ranks.append(rank)
        mains.append(ids.get(main, -1))
        receivers.append(ids["receiver"] if kind == "ref" and "receiver" in names else -1)
        kinds.append(sub if kind == "ref" else None)
    try:
        return native.plan(query, bytes(modes), bytes(ranks), tuple(mains), tuple(receivers),
                           tuple(kinds))
    except ValueError:
        roles.clear()
        return None


def pattern_role(caps: dict[str, list[Any]]) -> tuple[str, str, str, int]:
    """What a pattern's matches are, from the capture names of one of them: (role, kind, the
    capture holding the node, the kind's rank in the references' order) — the role "def",
    "ref", "import", "binding.name", "binding.names" (a declaration binding each name the
    plugin's ``bound_names`` lists), "narrowed" (a span where a name holds a type of its own:
    a Go type switch's case), "impl", "package", "local" (a name a function binds for
    itself), "local.assigned" (one an assignment binds: at a module's top level, a module
    variable), "global", "arity" (a call's arguments, its called name in ``arity.name``),
    "returned" (a function's `return` or `yield`: see ``parse.returns``), "unset" (a local
    declared with no value: the bindings of its assignments are read) or "ignore"."""
    for key in caps:
        head, _, tail = key.partition(".")
        if head == "definition":
            return "def", tail, key, 0
        if head == "reference":
            rank = REF_RANKS.get(tail)
            if rank is None:
                raise ValueError(f"the query captures an unknown reference kind: @{key}")
            return "ref", tail, key, rank
    for key in ("import", "binding.name", "binding.names", "impl", "package", "local",
                "local.assigned", "global", "arity", "narrowed", "returned", "unset",
                *_COMPLEXITY_ROLES):
        if key in caps:
            return key, "", key, 0
    return "ignore", "", "", 0


def query_cursor(query: Any) -> Any:
    from tree_sitter import QueryCursor

    cursor = QueryCursor(query)
    cursor.set_max_start_depth(MAX_QUERY_DEPTH)
    return cursor


# The reference kinds in the order the references of one expression are kept (see the loop
# over raw_refs: a value reading sorts after every more specific reading of the same span).
REF_RANKS: dict[str, int] = {kind: i for i, kind in enumerate(sorted(REF_KINDS))}
_COMPLEXITY_ROLES = ("complexity.decision", "complexity.nesting", "complexity.flat",
                     "complexity.comment", "complexity.scope")
# how the native matches hand back a pattern's matches (``_matches.c``): as a reference's row,
# a local name's span, or else as py-tree-sitter's
_REF_MODE: Final = 1
_SPAN_MODE: Final = 2
