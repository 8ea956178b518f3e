"""A function's signature as data: its parameters in order (name, declared type, default value,
kind), its return type, its type parameters and its decorators, each as written. Each language
module reads them from the function's node (its ``signature_of``), inside extraction, from the
tree already parsed; this module holds what they share, and the matching rule of the
``--returns`` and ``--param-type`` filters.

Plain tuples, not records: they travel inside a :class:`~knoxidx.core.facts.Definition`
through ``marshal``, and most of a file's definitions are functions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Final

from knoxidx.parse.siblings import named_before, previous_named

# a parameter's kind
POSITIONAL: Final = "positional"
POSITIONAL_ONLY: Final = "positional-only"  # Python's, before `/`
KEYWORD_ONLY: Final = "keyword-only"  # Python's, after `*` or `*args`
VARIADIC: Final = "variadic"  # `*args`, `...rest`, `String... rest`, `rest ...string`
VARIADIC_KEYWORD: Final = "variadic-keyword"  # `**kwargs`
RECEIVER: Final = "receiver"  # Go's `(s *Server)`, TypeScript's `this: T`, Java's `T this`
SELF: Final = "self"  # a Python method's first parameter, Rust's `self`
OPTIONAL: Final = "optional"  # TypeScript's `x?: T`

# (name, type, default, kind): None where the source says nothing (Go's `func(int)` has no name)
Parameter = tuple[str | None, str | None, str | None, str]
# (parameters, returns, type parameters, decorators); () for a definition that is no function
SignatureData = tuple[tuple[Parameter, ...], str | None, tuple[str, ...], tuple[str, ...]]
# a generic class's, interface's or type's: (type parameters,); () for one with none
TypeSignatureData = tuple[tuple[str, ...]]

# A default value or a type longer than this is cut (with "…"): a 5 KB dict literal as a
# default is no signature an agent reads.
MAX_WRITTEN: Final = 500

# a name in a type as written, qualified (`http.Request`, `std::io::Result`) or not
_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\s*(?:\.|::)\s*[A-Za-z_$][\w$]*)*")
_QUERY = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
MAX_QUERY_CHARS: Final = 200


def written(source: bytes, node: Any) -> str:
    """A node's text as written, each run of whitespace one space, cut at MAX_WRITTEN."""
    # cut inline, not by cut(): a call more per type and parameter name in every signature
    text = " ".join(source[node.start_byte : node.end_byte].decode("utf-8", "replace").split())
    return text if len(text) <= MAX_WRITTEN else text[: MAX_WRITTEN - 1] + "…"


def cut(text: str) -> str:
    return text if len(text) <= MAX_WRITTEN else text[: MAX_WRITTEN - 1] + "…"


def field_text(source: bytes, node: Any, field: str) -> str | None:
    """The text of ``node``'s child ``field`` as written, or None where it has none."""
    child = node.child_by_field_name(field)
    return None if child is None else written(source, child)


def decorator_names(nodes: Iterable[Any], source: bytes, sigil: str) -> tuple[str, ...]:
    """Decorators (annotations, attributes) as written, without their ``sigil`` (`@`)."""
    return tuple([written(source, n).lstrip(sigil).lstrip() for n in nodes])


def preceding(node: Any, types: frozenset[str], skipped: frozenset[str], source: bytes
              ) -> list[Any]:
    """The run of siblings just before ``node`` of one of ``types`` (decorators, attributes),
    passing over those of ``skipped`` (comments), in source order (``source``: the text
    ``node``'s tree was parsed from)."""
    before = previous_named(node, source)
    if before is None or before.type not in types and before.type not in skipped:
        return []  # the commonest case, in one step
    siblings, i = named_before(node, source)  # siblings[i - 1] is the one before node
    found: list[Any] = []
    while i > 0:
        i -= 1
        kind = siblings[i].type
        if kind in types:
            found.append(siblings[i])
        elif kind not in skipped:
            break
    found.reverse()
    return found


def type_signature_of(node: Any, source: bytes) -> TypeSignatureData | None:
    """A class's, interface's, struct's, trait's or type alias's type parameters as written
    (lifetimes too), from the ``type_parameters`` field every supported grammar gives them;
    None where it has none, so that a type without generics stores nothing."""
    listed = node.child_by_field_name("type_parameters")
    if listed is None:
        return None
    found = tuple([written(source, t) for t in listed.named_children
                   if not t.type.endswith("comment")])
    return (found,) if found else None


def type_names(text: str | None) -> list[str]:
    """The names in a type as written, qualified ones with `.` between their parts:
    ``Optional[http.Request]`` -> ``["Optional", "http.Request"]``."""
    return list(_names_in(text)) if text else []


# a few hundred types (`String`, `int`, `&str`) make most of a corpus's declared types, and
# half a corpus's signatures repeat one before (`()` -> `String`, `(self)`): each is read
# once. Bounded in count, and in the size of an entry, as the words of retrieval.terms are:
# a type or a signature can be kilobytes (a default value holding a blob, generated code)
# and then hardly repeats.
_TYPE_NAMES: dict[str, tuple[str, ...]] = {}
_STORED: dict[Any, tuple[str, str | None, str | None]] = {}
CACHE_LIMIT = 4096
CACHED_TYPE_CHARS = 200
CACHED_SIGNATURE_CHARS = 1000


def _names_in(text: str) -> tuple[str, ...]:
    names = _TYPE_NAMES.get(text)
    if names is None:
        if text.isascii() and text.isidentifier():  # one plain name: no pattern to run
            names = (text,)
        else:
            names = tuple(["".join(m.split()).replace("::", ".")
                           for m in _TYPE_NAME.findall(text)])
        if len(text) <= CACHED_TYPE_CHARS:
            _remember(_TYPE_NAMES, text, names)
    return names


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    """Keep ``value`` under ``key``, emptying ``cache`` first when it holds ``CACHE_LIMIT``."""
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def search_key(texts: Iterable[str | None]) -> str | None:
    """What the ``--returns`` / ``--param-type`` filters search in: the names of the types
    ``texts``, each followed by a space, after a leading one; None when there are none."""
    names = [name for text in texts if text for name in _names_in(text)]
    return " " + " ".join(names) + " " if names else None


def parameter_types(data: SignatureData) -> list[str | None]:
    """The declared types of a signature's parameters, but its receiver's (`self`, Go's
    receiver): "functions taking a Request" means as an argument."""
    return [p[1] for p in data[0] if p[3] != RECEIVER and p[3] != SELF] if data else []


def type_query(given: str) -> str:
    """A ``--returns`` / ``--param-type`` argument as searched: a type name, qualified or not
    (`Request`, `http.Request`, `std::io::Result`). Raises ValueError for anything else."""
    text = given.strip()
    if not _QUERY.fullmatch(text) or len(text) > MAX_QUERY_CHARS:
        raise ValueError(
            f"{given!r} is not a type name: give one name, qualified or not ('Request', "
            "'http.Request', 'io::Result'); it matches that type anywhere in the declared "
            "type, inside generics, unions, optionals, references and pointers")
    return text.replace("::", ".")


def key_needles(query: str) -> tuple[str, str]:
    """The two substrings of a search key that mean ``query`` (from :func:`type_query`) is in
    it: the name itself, or a qualified name ending with it (`Request` in `http.Request`)."""
    return f" {query} ", f".{query} "


def key_matches(key: str | None, query: str) -> bool:
    """Whether the search key ``key`` holds the type ``query`` (the rule the stores' SQL
    follows)."""
    if not key:
        return False
    whole, qualified = key_needles(query)
    return whole in key or qualified in key


def stored_signature(data: SignatureData | TypeSignatureData
                     ) -> tuple[str, str | None, str | None]:
    """A function's signature as the stores keep it: JSON (the tuples as lists), and the
    search keys of its return type and of its parameters' types; a type's, its JSON alone."""
    stored = _STORED.get(data)
    if stored is None:
        text = _as_stored_json(data)
        if len(data) == 1:
            stored = (text, None, None)
        else:
            stored = (text, search_key([data[1]]), search_key(parameter_types(data)))
        if len(text) <= CACHED_SIGNATURE_CHARS:
            _remember(_STORED, data, stored)
    return stored


def clear_caches() -> None:
    """Empty what this module remembers (bench.fuzz's reading of held memory)."""
    _TYPE_NAMES.clear()
    _STORED.clear()


# one encoder for every signature: json.dumps builds a new one per call given any option
_as_stored_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def as_json(data: Any) -> dict[str, Any]:
    """A stored signature (the JSON :func:`stored_signature` wrote, loaded) as a node's
    keys: a function's four, a generic type's ``type_parameters`` alone."""
    if len(data) == 1:
        return {"type_parameters": list(data[0])}
    parameters, returns, type_parameters, decorators = data
    return {
        "parameters": [{"name": p[0], "type": p[1], "default": p[2], "kind": p[3]}
                       for p in parameters],
        "returns": returns, "type_parameters": list(type_parameters),
        "decorators": list(decorators),
    }
