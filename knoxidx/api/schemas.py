"""What the HTTP API and the MCP server accept, in one table.

Each :class:`Operation` names an :class:`~knoxidx.index.Index` call, its parameters with their
types and limits, and a description written for a language model. The HTTP face turns the
table into routes and ``/openapi.json``, the MCP face into tools with JSON schemas; both parse
arguments here, so they refuse the same inputs with the same messages and return the same
shapes (the library's return values, as the CLI's ``--json`` prints them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from knoxidx.answers.budget import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS
from knoxidx.answers.entity import DEFAULT_RELATED, MAX_RELATED, RELATIONS
from knoxidx.core.errors import KnoxidxError
from knoxidx.core.limits import (
    MAX_DEPTH,
    MAX_K,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    MAX_PLACE_CHARS,
    MAX_QUERY_CHARS,
    MAX_REVISION_CHARS,
    MAX_TYPE_CHARS,
    WHOLE_NUMBER,
    text_problem,
)
from knoxidx.core.model import NODE_KINDS
from knoxidx.core.paging import DEFAULT_LIMIT, MAX_LIMIT, PAGE_CHARS
from knoxidx.history.answers import MAX_SINCE_DAYS
from knoxidx.languages.registry import LANGUAGE_ALIASES

# ---- limits ------------------------------------------------------------------------------
MAX_SOURCE_LINES = 2000
MAX_BODY_BYTES = 64 * 1024
SEARCH_MODES = ("hybrid", "lexical", "vector")
LANGUAGES = tuple(LANGUAGE_ALIASES)


class InputError(KnoxidxError):
    """A request argument is missing, malformed or out of range (HTTP 400)."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: str  # string | integer | boolean
    description: str
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    max_length: int | None = None
    enum: tuple[str, ...] | None = None
    http_name: str | None = None  # the query-string name, when it differs
    in_path: bool = False  # an HTTP path parameter (``/symbols/{id}``)

    @property
    def query_name(self) -> str:
        return self.http_name or self.name

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "description": self.description}
        for key, value in (("minimum", self.minimum), ("maximum", self.maximum),
                           ("maxLength", self.max_length), ("default", self.default)):
            if value is not None:
                out[key] = value
        if self.enum:
            out["enum"] = list(self.enum)
        if self.type == "string" and self.required:
            out["minLength"] = 1
        return out

    def parse(self, value: Any, *, from_text: bool, label: str) -> Any:
        """``value`` as this parameter's type; ``from_text``: it came from a query string."""
        if value is None or (from_text and value == "" and not self.required):
            if self.required:
                raise InputError(f"missing required parameter {label!r}: {self.description}")
            return self.default
        if self.type == "integer":
            return self._integer(value, from_text, label)
        if self.type == "boolean":
            return self._boolean(value, from_text, label)
        if not isinstance(value, str):
            raise InputError(f"{label!r} must be a string, not {_json_type(value)}")
        if self.required and not value.strip():
            raise InputError(f"{label!r} is empty")
        problem = text_problem(value, self.max_length)  # a JSON "\ud800" cannot be encoded
        if problem:
            raise InputError(f"{label!r} {problem}")
        if self.enum and value not in self.enum:
            # in any case (an agent writes `kind=class`): answered as the listed spelling
            folded = value.casefold()
            for choice in self.enum:
                if choice.casefold() == folded:
                    return choice
            raise InputError(f"{label!r} must be one of {', '.join(self.enum)}, not {value!r}")
        return value

    def _integer(self, value: Any, from_text: bool, label: str) -> int:
        if from_text and isinstance(value, str):
            # ASCII digits only: int() would also take '1_000', '١٠' and fullwidth digits
            if not WHOLE_NUMBER.fullmatch(value.strip()):
                raise InputError(f"{label!r} must be a whole number, not {value!r}")
            number = int(value.strip(), 10)
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)  # JSON Schema's integer: 5.0 is one (a client may send it so)
        else:
            raise InputError(f"{label!r} must be a whole number, not {_json_type(value)}")
        if self.minimum is not None and number < self.minimum or \
                self.maximum is not None and number > self.maximum:
            raise InputError(
                f"{label!r} must be from {self.minimum} to {self.maximum}, not {number}"
                if self.maximum is not None else f"{label!r} must be {self.minimum} or more")
        return number

    def _boolean(self, value: Any, from_text: bool, label: str) -> bool:
        if isinstance(value, bool):
            return value
        if from_text and isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
        raise InputError(f"{label!r} must be true or false, not {value!r}")


@dataclass(frozen=True, slots=True)
class Operation:
    tool: str  # the MCP tool's name; "" for HTTP only
    method: str
    path: str
    summary: str
    description: str
    params: tuple[Param, ...]
    call: Callable[[Any, dict[str, Any]], Any]  # (Index, arguments) -> the answer
    render: Callable[[Any], str] | None = None  # the MCP tool's text (default: JSON)
    answer_schema: dict[str, Any] | None = None  # the answer's JSON schema, where written

    def parse(self, raw: Mapping[str, Any], *, from_text: bool,
              caller: str | None = None) -> dict[str, Any]:
        """Arguments by parameter name; ``from_text``: HTTP query/path strings, named by
        their query names; else JSON values (an HTTP body, MCP arguments) named by name.
        ``caller``: what the client called, as errors name it (default: the HTTP route)."""
        names = {(p.query_name if from_text else p.name): p for p in self.params}
        unknown = sorted(set(raw) - names.keys())
        if unknown:
            allowed = ", ".join(names) or "none"
            raise InputError(f"unknown parameter {unknown[0]!r}; {caller or self.path} "
                             f"takes: {allowed}")
        return {p.name: p.parse(raw.get(key), from_text=from_text, label=key)
                for key, p in names.items()}

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (MCP ``inputSchema``, the HTTP body)."""
        return {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def text(self, data: Any) -> str:
        if self.render is not None:
            return self.render(data)
        return json.dumps(data, ensure_ascii=False, default=str)


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("knoxidx")
    except PackageNotFoundError:
        return "0"




def _json_type(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a fractional number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


# ---- parameters shared by several operations --------------------------------------------

SYMBOL = Param(
    "symbol", "string",
    "The symbol: a name ('parse_config'), a qualified name ('app.config.parse_config'), a "
    "suffix of one ('config.parse_config'), or 'path:line' for the innermost definition "
    "there ('src/app/config.py:42').", required=True, max_length=MAX_NAME_CHARS)


def _depth(default: int) -> Param:
    return Param("depth", "integer", "How many hops to follow (1 = direct only).",
                 default=default, minimum=1, maximum=MAX_DEPTH)


# the page of a list answer and its filters (knoxidx.core.paging): the library applies them
PAGE_PARAMS = (
    Param("limit", "integer", f"At most this many items in the answer (it also ends before "
          f"~{PAGE_CHARS // 1000}k characters).", default=DEFAULT_LIMIT, minimum=1,
          maximum=MAX_LIMIT),
    Param("offset", "integer", "Skip this many items: pass the answer's next_offset to read "
          "the next page.", default=0, minimum=0, maximum=2**31 - 1),
    Param("kind", "string", "Only items of this kind.", enum=NODE_KINDS),
    Param("path", "string", "Only items in files matching this glob ('*' crosses '/'), or "
          "under this directory.", max_length=MAX_PATH_CHARS),
)
PAGED = (" The answer is paged: total counts every item (after kind and path), truncated "
         "says whether more follow, next_offset is the offset that reads them; narrow with "
         "kind or path.")


def _paged(a: dict[str, Any]) -> dict[str, Any]:
    return {key: a[key] for key in ("limit", "offset", "kind", "path")}


# ---- how the MCP tools show answers --------------------------------------------------------


def disclosure_note(data: dict[str, Any]) -> str:
    """What an answer left out or masked (never-send files, secrets), in words; "" if
    nothing."""
    parts = []
    if data.get("withheld"):
        parts.append(f"{data['withheld']} withheld from never-send files")
    masked = data.get("masked") or {}
    if masked:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(masked.items()))
        parts.append(f"likely secrets masked as «secret:KIND»: {kinds}")
    return "; ".join(parts)


def render_context(data: dict[str, Any]) -> str:
    included = sum(1 for i in data["items"] if i["included"])
    note = disclosure_note(data)
    footer = (f"\n\n({data['tokens']} of {data['max_tokens']} tokens; {len(data['blocks'])} "
              f"blocks covering {included} of {len(data['items'])} candidates"
              f"{'; ' + note if note else ''})")
    if not data["markdown"]:
        return f"Nothing found for {data['query']!r}." + footer
    return data["markdown"] + footer


def render_source(data: dict[str, Any]) -> str:
    width = len(str(max(data["end_line"], 1)))
    lines = data["text"].split("\n") if data["text"] else []
    body = "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, data["start_line"]))
    more = (f"\n(… {data['total_lines'] - data['end_line']} more lines; read on with "
            f"start_line={data['end_line'] + 1})") if data["end_line"] < data["total_lines"] else ""
    note = disclosure_note(data)
    return f"{data['path']}:{data['start_line']}-{data['end_line']} of {data['total_lines']}\n" \
        f"{body}{more}" + (f"\n({note})" if note else "")


# ---- answer schemas ---------------------------------------------------------------------------

_PLACE: dict[str, Any] = {"type": ["object", "null"], "properties": {
    "id": {"type": "integer"}, "kind": {"type": "string"}, "name": {"type": "string"},
    "qualified_name": {"type": "string"}, "path": {"type": ["string", "null"]},
    "start_line": {"type": ["integer", "null"]}, "end_line": {"type": ["integer", "null"]}}}
_RELATED: dict[str, Any] = {"type": "array", "maxItems": MAX_RELATED, "items": {"type": "object", "properties": {
    **_PLACE["properties"],
    "site": {"type": "object", "properties": {"path": {"type": ["string", "null"]},
                                              "line": {"type": ["integer", "null"]}}},
    "confidence": {"type": "string", "enum": ["exact", "inferred", "name"]},
    "sites": {"type": "integer", "minimum": 1}}}}
_RELATION_NAMES = tuple(name for name, _, _ in RELATIONS)
ENTITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": f"One definition's node JSON plus where it sits, its relations (each at "
                   f"most 'limit' distinct definitions in the order of their first site, "
                   f"NAME_total counting all) and its evolution; under ~{PAGE_CHARS // 1000}k "
                   f"characters (the longest lists are cut first).",
    "required": ["id", "kind", "name", "qualified_name", "path", "start_line", "end_line",
                 "enclosing", "file", "module", "limit",
                 *(key for name in _RELATION_NAMES for key in (name, f"{name}_total"))],
    "properties": {
        **_PLACE["properties"],
        "language": {"type": ["string", "null"]}, "signature": {"type": "string"},
        "doc": {"type": "string"}, "exported": {"type": ["boolean", "null"]},
        "complexity": {"type": "object", "properties": {
            "cyclomatic": {"type": "integer"}, "nesting": {"type": "integer"},
            "loc": {"type": "integer"}}},
        "enclosing": _PLACE, "module": _PLACE,
        "file": {"type": ["object", "null"], "properties": {
            "id": {"type": "integer"}, "path": {"type": "string"},
            "language": {"type": ["string", "null"]}, "end_line": {"type": ["integer", "null"]}}},
        **{name: _RELATED for name in _RELATION_NAMES},
        "members": _RELATED, "members_total": {"type": "integer", "minimum": 0},
        **{f"{name}_total": {"type": "integer", "minimum": 0} for name in _RELATION_NAMES},
        "evolution": {"type": "object", "properties": {
            "created": {"type": ["object", "null"]}, "modifications": {"type": "integer"},
            "last_modified": {"type": ["string", "null"]}, "authors": {"type": "integer"},
            "churn": {"type": "integer"}, "hotspot": {"type": "number"}}},
        "evolution_unavailable": {"type": "string",
                                  "description": "Why there is no evolution."},
        "limit": {"type": "integer"},
    },
}

# ---- the table -------------------------------------------------------------------------------

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "search_code", "GET", "/search", "Search the code",
        "Find where the code that does something lives. Hybrid search over the whole "
        "repository: words and identifiers (BM25), meaning (embeddings, when the index has "
        "them) and symbol names. Use it first when you do not know the name of what you need "
        "('where are failed HTTP requests retried'). Returns ranked chunks with path, line "
        "range, the enclosing symbol's qualified name (which the graph tools accept), score "
        "and a snippet; a result that holds several small definitions lists them in "
        "'definitions' and is named after the one that matched the query best. Follow up "
        "with read_code or get_callers/get_callees. Test code ranks "
        "below the code it tests unless the query mentions tests ('the test for ...').",
        (
            Param("query", "string", "What to look for: words, identifiers, or a description.",
                  required=True, max_length=MAX_QUERY_CHARS, http_name="q"),
            Param("k", "integer", "How many results.", default=10, minimum=1, maximum=MAX_K),
            Param("mode", "string", "hybrid (default), lexical (words and names only), or "
                  "vector (meaning only).", default="hybrid", enum=SEARCH_MODES),
            Param("language", "string", "Only this language.", enum=LANGUAGES),
            Param("path", "string", "Only paths matching this glob ('*' crosses '/'), or "
                  "under this directory.", max_length=MAX_PATH_CHARS),
        ),
        lambda idx, a: idx.search(a["query"], k=a["k"], mode=a["mode"],
                                  language=a["language"], path_glob=a["path"]),
    ),
    Operation(
        "find_symbol", "GET", "/symbols", "Find definitions by name",
        "Look up definitions (functions, methods, classes, interfaces, types, constants, "
        "variables, modules, files) by name: exact name first, then a qualified-name suffix "
        "('config.parse_config'), then a prefix; with * or ? the name is a wildcard pattern "
        "('parse*', '*Error'). Returns each definition's id, kind, "
        "qualified_name, path, start_line/end_line, signature and first doc line, and a "
        "function's complexity (cyclomatic, nesting, loc) and signature (parameters with "
        "name, type, default and kind; returns; type_parameters; decorators). Pass the "
        "qualified_name (or path:line) to the other tools." + PAGED,
        (
            Param("name", "string", "The name, qualified name, suffix, prefix or wildcard "
                  "pattern.",
                  required=True, max_length=MAX_NAME_CHARS, http_name="q"),
            *PAGE_PARAMS,
            Param("min_complexity", "integer", "Only functions of at least this cyclomatic "
                  "complexity, the most complex first ('*' with 10: the functions most worth "
                  "splitting).", minimum=1, maximum=2**31 - 1),
            Param("returns", "string", "Only functions whose declared return type names this "
                  "type, alone or inside another ('Request' matches Optional[Request], "
                  "Promise<Request>, *http.Request; 'http.Request' the qualified one).",
                  max_length=MAX_TYPE_CHARS),
            Param("param_type", "string", "Only functions with a parameter whose declared "
                  "type names this type, by the same rule ('Request': the functions taking a "
                  "Request).", max_length=MAX_TYPE_CHARS),
        ),
        lambda idx, a: idx.find_symbols(a["name"], a["kind"], path=a["path"], limit=a["limit"],
                                        offset=a["offset"], min_complexity=a["min_complexity"],
                                        returns=a["returns"], param_type=a["param_type"]),
    ),
    Operation(
        "", "GET", "/symbols/{id}", "One node by id",
        "A node by the id that every answer carries.",
        (Param("id", "integer", "The node id.", required=True, minimum=0,
               maximum=2**63 - 1, in_path=True),),
        lambda idx, a: idx.node(a["id"]),
    ),
    Operation(
        "describe_symbol", "GET", "/entity", "Everything about one definition",
        "One answer with the whole entity of a definition: kind, qualified_name, path and "
        "lines, signature, first doc line, complexity (cyclomatic, nesting, loc), parameters "
        "and return type where extraction gives them, where it sits (enclosing class, "
        "module, file), what it calls and who calls it, the types it uses and who uses it, "
        "who passes it as a value, what it extends or implements and who subclasses or "
        "implements it, a class's or interface's members (members, members_total), and its "
        "git evolution (created, modifications, authors, churn, hotspot; "
        "evolution_unavailable says why when there is none). Each relation lists at "
        "most 'limit' distinct definitions (first site first), NAME_total counts them all: "
        "follow up with get_callers/get_references for the rest. Use it first when you know "
        "the name of what you are about to read or change.",
        (SYMBOL, Param("limit", "integer", "At most this many definitions per relation.",
                       default=DEFAULT_RELATED, minimum=1, maximum=MAX_RELATED)),
        lambda idx, a: idx.describe(a["symbol"], limit=a["limit"]),
        answer_schema=ENTITY_SCHEMA,
    ),
    Operation(
        "get_callers", "GET", "/callers", "Who calls a symbol",
        "Who calls a function or method (or constructs a class). depth > 1 follows callers of "
        "callers. Each hit gives the caller, the call site (site.path, site.line) and the "
        "edge's confidence: exact (resolved through imports and scopes), inferred (through a "
        "receiver's type), name (a unique-name guess). An ambiguous name fails with the "
        "candidates listed: call again with one of their qualified names." + PAGED,
        (SYMBOL, _depth(1), *PAGE_PARAMS),
        lambda idx, a: idx.callers(a["symbol"], depth=a["depth"], **_paged(a)),
    ),
    Operation(
        "get_callees", "GET", "/callees", "What a symbol calls",
        "What a function or method calls: the resolved definitions, with each call site and "
        "confidence. depth > 1 follows their callees too. Calls into libraries outside the "
        "repository are not listed." + PAGED,
        (SYMBOL, _depth(1), *PAGE_PARAMS),
        lambda idx, a: idx.callees(a["symbol"], depth=a["depth"], **_paged(a)),
    ),
    Operation(
        "get_references", "GET", "/refs", "Every reference to a symbol",
        "Every incoming edge of a symbol, grouped: CalledBy, ReferencedBy (passed as a value, "
        "or named as the qualifier of `Symbol.member`), UsedBy (type annotations, constants "
        "read), SubclassedBy, ImplementedBy, ImportedBy (each named import of it, through "
        "re-exports), DefinedIn, ContainedIn, each with its site; counts gives each group's "
        "size. Apart, 'possible' lists calls left unresolved whose name matches it or one of "
        "its members (a receiver of unknown type), 'possible_total' counts them: check those "
        "too before renaming or changing a definition." + PAGED,
        (SYMBOL, *PAGE_PARAMS),
        lambda idx, a: idx.refs(a["symbol"], **_paged(a)),
    ),
    Operation(
        "get_dependencies", "GET", "/deps", "Imports of a file or module",
        "What a file or module imports (target: a repository-relative path such as "
        "'src/app/config.py', or a module name such as 'app.config'); reverse=true lists who "
        "imports it instead. External packages appear as modules without a path." + PAGED,
        (
            Param("target", "string", "A repository-relative file path or a module name.",
                  required=True, max_length=MAX_PATH_CHARS),
            Param("reverse", "boolean", "List the importers instead.", default=False),
            _depth(1),
            *PAGE_PARAMS,
        ),
        lambda idx, a: idx.deps(a["target"], reverse=a["reverse"], depth=a["depth"],
                                **_paged(a)),
    ),
    Operation(
        "impact_of_change", "GET", "/impact", "What a change may break",
        "What may break if a symbol changes: its transitive callers, users, subclasses, "
        "implementers and importers up to depth hops (default 3), nearest first, and the "
        "files they are in (files: the first 100, file_count: how many). Use it before "
        "changing a definition that others rely on." + PAGED,
        (SYMBOL, _depth(3), *PAGE_PARAMS),
        lambda idx, a: idx.impact(a["symbol"], depth=a["depth"], **_paged(a)),
    ),
    Operation(
        "repo_map", "GET", "/map", "A map of the repository in a token budget",
        "The repository's most central functions, classes, interfaces and types (PageRank "
        "over calls and imports, test code lower) whose signatures fit max_tokens, file by "
        "file in path order, each as its signature's first line and ':line', a method under "
        "its class. Call it first on a repository you do not know, then describe_symbol or "
        "read_code what you need; path maps one directory or glob alone.",
        (
            Param("max_tokens", "integer", "The map's token budget.", default=1024,
                  minimum=64, maximum=200_000),
            Param("path", "string", "Only files matching this glob ('*' crosses '/'), or "
                  "under this directory.", max_length=MAX_PATH_CHARS),
        ),
        lambda idx, a: idx.repo_map(a["max_tokens"], a["path"]),
        lambda d: d["text"] + f"({d['shown']} of {d['total']} definitions, {d['tokens']} of "
                              f"{d['max_tokens']} tokens)",
    ),
    Operation(
        "goto_definition", "GET", "/goto", "What the code at a line refers to",
        "Go to definition by place: for 'path:line' (as read_code and search give them), "
        "each name the line uses (a call, a new, a type, a value read or passed, a base "
        "class) with its column and the definitions the graph resolved it to through "
        "imports, scopes and receiver types (definitions; empty with 'unresolved' saying "
        "why: a local, builtin or library name, or several candidates), the imports on the "
        "line with what they bind, and the enclosing definition. Use it while reading code "
        "instead of searching for a name that many definitions share.",
        (
            Param("at", "string", "The place: a repository-relative path and a 1-based line, "
                  "'src/app/config.py:42'.", required=True, max_length=MAX_PLACE_CHARS),
            Param("name", "string", "Only the references of this name on the line.",
                  max_length=MAX_NAME_CHARS),
        ),
        lambda idx, a: idx.goto(a["at"], a["name"]),
    ),
    Operation(
        "detect_changes", "GET", "/changes", "What the uncommitted changes may break",
        "What the work tree changed since a commit (base, default HEAD: the uncommitted "
        "edits), as the index last read the files (stale lists files edited since: index "
        "first): the definitions modified, added and removed (changed, removed; a removed "
        "one with the calls of its name now left unresolved, still_called), the files, and "
        "what they may break: their transitive callers, users, subclasses and importers up "
        "to depth hops, nearest first (impacted, the page), their files, and the tests among "
        "them (tests, test_files: what to run). Use it after editing, before committing." +
        PAGED,
        (
            Param("base", "string", "The commit to compare with: a hash, branch, tag or "
                  "HEAD~N.", default="HEAD", max_length=MAX_REVISION_CHARS),
            _depth(3),
            *PAGE_PARAMS,
        ),
        lambda idx, a: idx.changes(a["base"], depth=a["depth"], **_paged(a)),
    ),
    Operation(
        "get_history", "GET", "/history", "How a definition evolved (git)",
        "The git history of one definition (first-parent history of HEAD): the commit that "
        "created its lines, the commits that changed them newest first (hash, date, author, "
        "subject, lines added/removed inside it), totals (changes, modifications, authors, "
        "first/last change, churn) and the paths it had before a rename. A commit counts "
        "when its diff touches the definition's lines at that revision, as `git log -L` "
        "follows them, so code moving around it is not a change. Use it to judge how stable "
        "a definition is and whom to ask. The commits are paged: total counts them, "
        "next_offset reads the next page.",
        (SYMBOL, Param("limit", "integer", "At most this many commits.", default=20, minimum=1,
                       maximum=MAX_LIMIT),
         Param("offset", "integer", "Skip this many commits (newest first).", default=0,
               minimum=0, maximum=2**31 - 1)),
        lambda idx, a: idx.history(a["symbol"], limit=a["limit"], offset=a["offset"]),
    ),
    Operation(
        "find_hotspots", "GET", "/hotspots", "Definitions that change most",
        "Definitions (and files) ranked by hotspot score = changes in the window x log2(1 + "
        "weight): how often git commits changed them in the last since_days days before the "
        "newest commit, weighted by what a change risks (weight = cyclomatic x loc for a "
        "function, lines for a class, interface, type or file). Each hit gives its factors "
        "(changes, weight, cyclomatic, loc, lines, authors, churn, last_change). Use it to "
        "find fragile, busy code before changing a module." + PAGED,
        (
            Param("since_days", "integer", "The window in days before the newest commit; 0 "
                  "for that commit alone.", default=90, minimum=0, maximum=MAX_SINCE_DAYS),
            Param("limit", "integer", "At most this many definitions (and files).", default=20,
                  minimum=1, maximum=MAX_LIMIT),
            Param("offset", "integer", "Skip this many definitions.", default=0, minimum=0,
                  maximum=2**31 - 1),
            Param("kind", "string", "Only definitions of this kind (default: functions, "
                  "classes, interfaces, types).", enum=NODE_KINDS),
            Param("path", "string", "Only files matching this glob ('*' crosses '/'), or "
                  "under this directory.", max_length=MAX_PATH_CHARS),
        ),
        lambda idx, a: idx.hotspots(path=a["path"], since_days=a["since_days"],
                                    kind=a["kind"], limit=a["limit"], offset=a["offset"]),
    ),
    Operation(
        "build_context", "POST", "/context", "Code to read for a task, in a token budget",
        "Assemble the code needed to answer a question or make a change, within a token "
        "budget: search hits plus, through the code graph, the definitions they call, their "
        "callers, the types they use, their enclosing class's signature and their file's "
        "imports, and what the commits the question names changed (an id, 'PR 123'); "
        "ranked by relevance, whole definitions first and signatures for the rest, "
        "nothing twice. Returns markdown blocks headed 'path:start-end (kind name — why)'. "
        "Prefer it to many search and read calls when starting on a task.",
        (
            Param("query", "string", "The question or task, in words and/or identifiers.",
                  required=True, max_length=MAX_QUERY_CHARS),
            Param("max_tokens", "integer", "The token budget of the answer.",
                  default=DEFAULT_TOKENS, minimum=MIN_TOKENS, maximum=MAX_TOKENS),
        ),
        lambda idx, a: idx.context(a["query"], a["max_tokens"]),
        render_context,
    ),
    Operation(
        "read_code", "GET", "/source", "Read lines of a file",
        f"Read lines of a file in the repository: path relative to the repository root (as "
        f"search hits and symbols give it), start_line/end_line 1-based and inclusive. At "
        f"most {MAX_SOURCE_LINES} lines per call; total_lines says how far to page. Paths "
        f"outside the repository, ignored files and .git are refused.",
        (
            Param("path", "string", "Repository-relative file path.", required=True,
                  max_length=MAX_PATH_CHARS),
            Param("start_line", "integer", "First line (default 1).", minimum=1,
                  http_name="start"),
            Param("end_line", "integer", f"Last line (default: start_line + "
                  f"{MAX_SOURCE_LINES - 1}, or the end).", minimum=1, http_name="end"),
        ),
        lambda idx, a: idx.read_source(a["path"], a["start_line"], a["end_line"],
                                       MAX_SOURCE_LINES),
        render_source,
    ),
)

BY_TOOL = {op.tool: op for op in OPERATIONS if op.tool}

STATUS_DESCRIPTION = (
    "The state of the index: files, nodes, edges and chunks, how many chunks are embedded "
    "(chunks_embedded) and how many still wait (chunks_pending: semantic search does not "
    "cover them yet; a watcher embeds them in the background), when it last changed, and, when a watcher keeps it fresh, whether an update "
    "is pending or running (phase, progress), and what was sent to remote services (egress: "
    "offline or not, requests/chunks/bytes/files today and over 30 days). Call it when answers "
    "look stale."
)
