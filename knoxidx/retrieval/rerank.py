"""Definition-sized results, and the offline rerank that uses the graph's definitions.

Small neighbouring definitions are merged into one chunk (up to 256 tokens; classes over 256
tokens are split at their members), so a chunk that matches a question may hold several
definitions; a result should be the one the question is about. The *units* of a chunk are the
definitions wholly inside it (a container gives way to its members) when there are at least
two, else the chunk itself; a chunk of at most ``whole_lines`` lines is already
definition-sized and stays one unit unless one of its definitions clearly wins on the query's
words (``narrow_margin``). A unit scores the share of the query's words (weighted by IDF over
the chunks) found in its lines (less the examples fenced in its doc comments), plus the share
found in its name (a chunk kept whole: the best of its definitions' names), plus the share of
the rest found in the names of what holds it (enclosing definitions, file); words are compared
by their stems (``terms.stem``):

- ``narrow``: every result of a lexical or vector search is reported as its best unit (the
  chunk when no unit shares a word with the query).
- ``rerank_definitions`` (hybrid search, when no service reranker is configured): the units of
  the first ``depth`` fused chunks are ranked by the chunk's fused rank plus their own scores,
  so two functions of one good chunk may both be listed and a function whose name says what
  the question asks rises; a unit that only declares (no function with a body in it: a
  type's header, an interface's methods) yields to one that does something, unless the
  question names a thing; a unit whose own declaration (kind, name, holder, signature) the
  query's vector is close to rises; and so does one named as the question's opening implies
  ("Checks whether ..." -> ``isEmpty``; ``intents``); and a method whose type is what the
  question calls "this ..." ("... a copy of this date") takes the place of a same-named
  method of another type ranked above it; so does one whose type the question names by a
  word the other types lack ("... the chronology - 'Minguo'"); and a unit holding the rarer
  names the question writes as code (``single_precision``) rises.

Measured on the docstring -> code benchmark (``python -m bench.retrieval_eval``, where a result
counts only if it is definition-sized); the weights are what measured best there, and its
current figures are in BENCHMARKS.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from knoxidx.languages.registry import language_for_path, name_of_file
from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.chunker import DefinitionLike as DefinitionSpan
from knoxidx.retrieval.intents import act_and_object, name_openings
from knoxidx.retrieval.namesakes import favour_named_holder, favour_subject, query_subject
from knoxidx.retrieval.query_words import QueryWords, rare_code_words
from knoxidx.retrieval.rerank_weights import RerankWeights
from knoxidx.retrieval.terms import identifier_parts, stem
from knoxidx.retrieval.units import (
    DefinitionSource,
    Unit,
    unit_name,
    unit_words,
    units,
    whole_unit,
)

# How much closer the query is to a unit's declaration than to the least close one ranked
# (``RerankWeights.declaration``), given the unit and the chunk it was found in
DeclarationCloseness = Callable[[Unit, Chunk], float]


def query_units(
    chunk_id: int, chunk: Chunk, definitions: Sequence[DefinitionSpan], words: QueryWords,
    weights: RerankWeights,
) -> list[Unit]:
    """``units``, except that a chunk of at most ``weights.whole_lines`` lines is one unit
    unless its best definition wins by ``weights.narrow_margin`` (see ``RerankWeights``)."""
    found = units(chunk_id, chunk, definitions)
    if len(found) < 2 or chunk.end_line - chunk.start_line + 1 > weights.whole_lines:
        return found
    scores = [match_score(chunk, u, words, weights) for u in found]
    best, second = sorted(scores, reverse=True)[:2]
    if best > 0 and best >= weights.narrow_margin * second:
        return found
    whole = whole_unit(chunk_id, chunk)
    held = tuple(u.symbol for u in found)
    if best <= 0:  # nothing to tell them apart: the chunk's best line names it
        return [replace(whole, held=held)]
    lead = found[scores.index(best)]  # the first of the best: ties keep source order
    return [replace(whole, held=held, lead=lead.symbol, lead_kind=lead.kind)]


def scope_words(path: str, qualname: str) -> set[str]:
    """The words of what holds a definition: its enclosing names and what its file is named
    for (``time/OffsetTime.java``, ``OffsetTime.withSecond`` -> offset, time, offsettime;
    ``_examples/clone/main.go``, ``main`` -> clone: see ``name_of_file``)."""
    outer = qualname.replace("::", ".").split(".")[:-1]
    found: set[str] = set()
    for name in (*outer, name_of_file(path)):
        found |= set(identifier_parts(name)) | {name.lower()}
    return found


def name_share(symbol: str, words: QueryWords) -> float:
    """The share of the query's words in a definition's own name (its last part)."""
    name = symbol.replace("::", ".").rsplit(".", 1)[-1]
    name_words = set(identifier_parts(name)) | {name.lower()}
    if words.stems:
        name_words = {stem(w) for w in name_words}
    return words.share(name_words)


# a method of an object built in a function (the holder's name in lower case), named with a
# capital, by a string or by a computed key: `create.MemberExpression`,
# `create."VariableDeclaration:exit"`, `create.[["Identifier", "PrivateIdentifier"]]`
_HANDLER = re.compile(r"""(?:^|\.)[a-z_$][\w$]*\.(?:[A-Z][\w$]*|"[^"]*"|'[^']*'|\[.*\])$""")


def named_after_what_it_handles(path: str, symbol: str, kind: str = "") -> bool:
    """Whether ``symbol`` is a handler named after the kind of thing it is called on, in a
    language whose functions' names begin in lower case (``LanguageSpec.lower_case_functions``):
    ESLint's rule listeners, a visitor's methods. A question that names the node a helper
    takes ("Gets the prefix of a given MemberExpression node") shares such a name's words,
    and is close to its declaration, without asking for the handler: neither counts. A
    handler is a function: a type declared inside one (`type TState` in zustand's
    `createStoreImpl`) is named as types are (``kind`` "" when not known)."""
    if kind not in ("", "Function"):
        return False
    spec = language_for_path(path)
    return spec is not None and spec.lower_case_functions and bool(_HANDLER.search(symbol))


def match_score(chunk: Chunk, unit: Unit, words: QueryWords, weights: RerankWeights) -> float:
    found = unit_words(chunk, unit, words.stems)
    # a chunk kept whole is named by each definition it holds, not only by its first; a
    # handler's name says what it is called on, not what it does (``named_after_what_...``)
    kinds = {unit.symbol: unit.kind}
    named = max((name_share(symbol, words) for symbol in (unit.symbol, *unit.held)
                 if not named_after_what_it_handles(chunk.path, symbol,
                                                    kinds.get(symbol, ""))), default=0.0)
    score = weights.lines * words.share(found) + weights.name * named
    if weights.scope:
        scope = scope_words(chunk.path, unit.symbol)
        if words.stems:
            scope = {stem(w) for w in scope}
        score += weights.scope * words.share(scope - found)
    return score


_ARTICLES = frozenset({"a", "an", "the"})
_TYPE_WORDS = frozenset({"class", "classes", "struct", "structs", "interface", "interfaces",
                         "trait", "traits", "enum", "enums"})


_PUNCTUATION = ".,:;()`'\"?!"


def query_head(query: str) -> str:
    """The query's first word without the punctuation around it, case kept."""
    words = query.split()
    return words[0].strip(_PUNCTUATION) if words else ""


def asks_for_declaration(query: str) -> bool:
    """Whether ``query`` reads as naming a thing rather than an action: it begins with an
    article ("A handle to the runtime's driver") or says what kind of type it wants."""
    return query_head(query).lower() in _ARTICLES or any(
        w.strip(_PUNCTUATION) in _TYPE_WORDS for w in query.lower().split())


def declares_only(unit: Unit, definitions: Sequence[DefinitionSpan]) -> bool:
    """Whether ``unit`` holds no function with a body: a type's declaration, a file's head,
    an interface's methods (``bodiless``)."""
    inside = [d for d in definitions if d.kind == "Function"
              and unit.start_line <= d.start_line and d.end_line <= unit.end_line]
    if unit.kind == "Function" and not inside:
        return False  # its definition is not known: it may well have a body
    return all(bodiless(d, definitions) for d in inside)


def bodiless(definition: DefinitionSpan, definitions: Sequence[DefinitionSpan]) -> bool:
    """Whether ``definition`` is a method declared without a body: an interface's or trait's
    (Java's `String getId();`, Rust's `fn poll(..);`, Go's `Config() (*Config, error)`: one
    line in an interface) or an abstract one (its signature ends the declaration with ";").
    It says what its implementations do; they do it."""
    if definition.kind != "Function":
        return False
    if definition.signature.rstrip().endswith(";"):
        return True
    parent = definitions[definition.parent] if 0 <= definition.parent < len(definitions) else None
    return (parent is not None and parent.kind == "Interface"
            and definition.start_line == definition.end_line)


def narrow(
    chunk_id: int, chunk: Chunk, definitions: Sequence[DefinitionSpan], words: QueryWords,
    weights: RerankWeights,
) -> Unit:
    """The chunk's best unit for the query; the chunk itself when no unit shares a word."""
    candidates = query_units(chunk_id, chunk, definitions, words, weights)
    best, best_score = whole_unit(chunk_id, chunk), 0.0
    for unit in candidates:
        score = match_score(chunk, unit, words, weights)
        if score > best_score:
            best, best_score = unit, score
    return best


def rerank_definitions(
    order: Sequence[int],
    chunks: dict[int, Chunk],
    definitions: DefinitionSource,
    words: QueryWords,
    weights: RerankWeights,
    similarity: dict[int, float] | None = None,
    path_factor: Callable[[str, str], float] | None = None,
    declaration_closeness: DeclarationCloseness | None = None,
) -> list[Unit]:
    """The units of the first ``weights.depth`` chunks of ``order``, best first (see the module
    docstring); a unit reached through two overlapping chunks is listed once. ``similarity``:
    the query's cosine with each chunk's vector (a chunk without one counts as the least
    similar of those given), weighted by ``weights.similarity``. ``path_factor``: what a
    unit's score is multiplied by, by its file and qualified name (``priors.path_prior``: test
    code ranks lower).
    ``declaration_closeness``: see ``RerankWeights.declaration`` (none: no such term)."""
    best: dict[tuple[str, int, int], Unit] = {}
    # each file once: the searcher checks a file's version on every ask, and the chunks
    # ranked share files
    definitions = functools.cache(definitions)
    ranked = [i for i in order if i in chunks][: weights.depth]
    declaration_factor = 1.0 if asks_for_declaration(words.query) else weights.declaration_only
    # nor when the question begins with the unit's own name, as Go's doc comments do
    # ("Repository represents a git repository")
    head = query_head(words.query)
    first_word = head.lower()
    openings = name_openings(words.query) if weights.intent else frozenset()
    similarity = similarity if weights.similarity and similarity else {}
    floor = min(similarity.values(), default=0.0)
    code = {stem(w) if words.stems else w for w in rare_code_words(words, weights)}
    for rank, chunk_id in enumerate(ranked, start=1):
        chunk = chunks[chunk_id]
        base = (weights.rank_k + 1) / (weights.rank_k + rank)
        base += weights.similarity * similarity.get(chunk_id, floor)
        defs = definitions(chunk.path)
        for unit in query_units(chunk_id, chunk, defs, words, weights):
            score = base + match_score(chunk, unit, words, weights)
            # a handler's declaration is its name and its node: what it is called on; so are
            # the names written as code it holds
            handler = named_after_what_it_handles(chunk.path, unit.symbol, unit.kind)
            if code and not handler:
                found = unit_words(chunk, unit, words.stems)
                score += weights.identifiers * len(code & found) / len(code)
            if weights.declaration and declaration_closeness is not None and not handler:
                score += weights.declaration * declaration_closeness(unit, chunk)
            if weights.named_first and head and unit_name(unit) == head:
                score += weights.named_first
            if openings and any(act in openings and words.holds_any(rest)
                                for act, rest in map(act_and_object, (unit.symbol, *unit.held))):
                score += weights.intent
            if path_factor is not None:
                score *= path_factor(chunk.path, unit.symbol)
            if (declaration_factor != 1.0 and declares_only(unit, defs)
                    and unit_name(unit).lower() != first_word):
                score *= declaration_factor
            key = (chunk.path, unit.start_line, unit.end_line)
            if key not in best or best[key].score < score:
                best[key] = replace(unit, chunk_id=chunk_id, score=score)
    # the named type first: what the question calls "this ..." is its receiver, and has
    # the last word
    if weights.holder_named:
        best = favour_named_holder(best, definitions, words, weights.holder_named)
    if weights.subject:
        subject = query_subject(words.query, words.stems)
        if subject:
            best = favour_subject(best, subject, words.stems, weights.subject)
    return sorted(best.values(), key=lambda u: -u.score)
