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
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from knoxidx.languages.registry import language_for_path, name_of_file
from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.chunker import DefinitionLike as DefinitionSpan
from knoxidx.retrieval.intents import BUILD_PARTS, act_and_object, name_openings
from knoxidx.retrieval.terms import (
    STOP_WORDS,
    code_words,
    content_terms,
    identifier_parts,
    line_terms,
    stem,
)

CODE_KINDS = frozenset({"Function", "Class", "Interface", "Type"})
_TYPE_KINDS = frozenset({"Class", "Interface", "Type"})


# A file's definitions (the graph's stored facts for that path)
DefinitionSource = Callable[[str], Sequence[DefinitionSpan]]
# How much closer the query is to a unit's declaration than to the least close one ranked
# (``RerankWeights.declaration``), given the unit and the chunk it was found in
DeclarationCloseness = Callable[["Unit", Chunk], float]


@dataclass(frozen=True, slots=True)
class Unit:
    """A definition inside a chunk (or the whole chunk) as a result."""

    chunk_id: int
    start_line: int
    end_line: int
    symbol: str
    kind: str
    score: float
    # the qualified names of the definitions a whole chunk stands for when it is kept whole
    # although it holds several (``query_units``): its name scores as the best of theirs
    held: tuple[str, ...] = ()
    # of those, the one sharing most of the query, and its kind: what the result is named
    # after, rather than the chunk's first definition ("" when none shares a word)
    lead: str = ""
    lead_kind: str = ""


@dataclass(frozen=True, slots=True)
class RerankWeights:
    # fused chunks whose units are ranked: one source alone often puts the answer's chunk
    # at 21-60 (a rival that several sources half-agree on outranks it in the fusion)
    # while its definition's name and lines win the rerank. 60 measured best on the
    # docstring benchmark's nine copies (20 -> 60: six reported and one held-out question
    # found, none lost; 40: five of them). Context reads its own 20 (``search_depth``)
    depth: int = 60
    # the chunk's rank counts (rank_k + 1) / (rank_k + rank), rank from 1: 5 measured better
    # than 10 on the held-out projects and on questions about types
    rank_k: float = 5.0
    lines: float = 1.0  # weight of the share of query words in the unit's lines
    name: float = 1.0  # weight of the share of query words in the unit's name
    # A chunk of at most this many lines is already definition-sized (small neighbours
    # merged): it stands for itself unless one of its definitions shares clearly more of the
    # query than the others (best unit score >= narrow_margin x the runner-up's). Picking
    # among a few small definitions by words alone picks the wrong one more often than not.
    whole_lines: int = 50
    narrow_margin: float = 3.0
    # weight of the cosine between the query's vector and the unit's chunk vector: RRF keeps
    # only the vector source's ranks; this lets how close a chunk is count in the rerank.
    # x1 measured better on both the held-out projects it was chosen on (R@10 / MRR@10
    # +0.008 / +0.021) and the reported ones (+0.006 / +0.006)
    similarity: float = 1.0
    # compare words by their stems ("Returns the copies" meets `return`, `copy`)
    stems: bool = True
    # weight of the share of query words (not in the unit's lines) in the names of what holds
    # it: enclosing definitions and the file ("... a leap year. Minguo ..." ->
    # MinguoChronology.isLeapYear rather than the same method of a sibling class)
    scope: float = 1.0
    # what the score of a unit that only declares (a type's header, fields or variants, its
    # doc, a file's head, an interface's or abstract method: no function with a body in it,
    # nothing that does what the question describes) is multiplied by, unless the question
    # reads as naming a thing (``asks_for_declaration``) or begins with the unit's own name
    # (Go's doc comments do). Such a unit's doc often sums up what its methods do ("A buffer
    # that is incrementally filled and initialized") and outranked the method asked about.
    # x0.8: the mildest weight on the plateau measured on the held-out projects; questions
    # about types pay a little for it
    declaration_only: float = 0.8
    # added to the score of a unit whose own name is the query's first word, case and all:
    # "Repository represents a git repository", "parseConfig reads ..." — Go's doc comments
    # begin so, and a question that does is about that definition. x1 measured best on the
    # held-out projects; a capitalised English word at the head of a sentence
    # ("Returns ...") is rarely a definition's exact name.
    named_first: float = 1.0
    # weight of how close the query is to the unit's own declaration vector (its kind, name,
    # holder and signature words, ``names.declaration_texts``), above the least close of the
    # units ranked. The chunk's cosine (``similarity``) is one figure for all the small
    # definitions merged into it, and the declarations source ranks a chunk by its best
    # declaration, whichever that is; this tells the siblings apart by meaning where their
    # words cannot ("... with the specified number of years subtracted": `minusYears`).
    # x1.5: the middle of the plateau (x1-x2) measured on the held-out projects
    declaration: float = 1.5
    # added to the score of a unit whose name begins with a word the question's opening
    # implies ("Checks whether ..." -> `isEmpty`, "Creates ..." -> `NewReader`, "Removes ..."
    # -> `delete`; ``intents``) and goes on with a word of the question (or, a name that is
    # the act alone, `__init__`, `of`, whose holder's name does): words alone miss those
    # pairs. x0.6 on the plateau (x0.6-x1) measured on the held-out projects
    intent: float = 0.6
    # added to the score of a method whose type is what the question calls "this ..."
    # ("Compares this OffsetTime ...", "... a copy of this date": `ChronoLocalDateImpl`,
    # not `OffsetDateTime`), when a ranked method of another type has the same name: Javadoc
    # names the receiver so, and same-named methods of sibling types share nearly all their
    # words. Such a method rises (by at most this) to just above the best ranked sibling of
    # the same name, and nothing else moves. x1 to x4 measured the same on the held-out
    # projects (three.js MRR@10 +0.003 over none, the others equal); x2 is inside that plateau
    subject: float = 2.0
    # the same lift for a method whose type the question names anywhere by a word that no
    # same-named rival's type has ("Gets the ID of the chronology - 'Minguo'":
    # `MinguoChronology.getId` over `Chronology.getId`, `IsoChronology.getId`; "Obtains a
    # JapaneseDate from ..."), past the rivals whose types it names by no such word. Docs
    # name the type a method belongs to so, and the words siblings share cannot tell them
    # apart. x1 measured on the nine copies of the retrieval benchmark: at x2 the jdk gains
    # 0.006 MRR@10 more and go-git, javac, django lose 0.002-0.007 (a lifted unit passes
    # what lay between it and its rival); at x0.5 the jdk gains 0.022 less
    holder_named: float = 1.0
    # added, times the share of the identifiers the question writes as code
    # (``terms.code_words``: ``single_precision``, ``MapVisitor``) found in the unit's
    # lines: a commit message or an agent that writes a name means that name, where the
    # vectors meet only the prose around it ("Exclude single_precision flag unless needed").
    # x0.5 and x1 measured the same on the change-request walks; x1 lost a held-out
    # docstring question in three.js and in sqlalchemy
    identifiers: float = 0.5
    # ... counting only the identifiers held by at most this share of the chunks: a name
    # written all over (`show_default` in click's core, `LocalDate` in java.time) tells no
    # definition apart, and lifting every holder buried the one a change was about to
    # begin using, and jdk's answers (0: every identifier counts; 1 % and 2 % measured the
    # same on the walks, 2 % lost jdk questions)
    identifier_share: float = 0.01


class QueryWords:
    """The query's content words with their IDF weights (all 1 when ``total`` is 0: unknown);
    with ``stems``, keyed by their stems (forms of one word count once, at their highest
    weight), and units' words are then stemmed too (see ``match_score``)."""

    def __init__(
        self, query: str, frequencies: dict[str, int], total: int, *, stems: bool = False
    ) -> None:
        self.query = query
        words = content_terms(query)
        weight = {
            w: math.log(1 + total / (1 + frequencies.get(w, 0))) if total > 0 else 1.0
            for w in words
        }
        if stems:
            stemmed: dict[str, float] = {}
            for w, v in weight.items():
                stemmed[stem(w)] = max(stemmed.get(stem(w), 0.0), v)
            weight = stemmed
        self.stems = stems
        self.frequencies = frequencies  # chunks holding each word (unstemmed)
        self.chunks = total
        self.weight = weight
        self.total = sum(self.weight.values()) or 1.0

    def share(self, words: set[str] | frozenset[str]) -> float:
        return sum(v for w, v in self.weight.items() if w in words) / self.total

    def holds_any(self, words: Iterable[str]) -> bool:
        """Whether any of ``words`` (a name's parts) is one of the query's (by stem when
        stemmed)."""
        return any((stem(w) if self.stems else w) in self.weight for w in words)


def rare_code_words(words: QueryWords, weights: RerankWeights) -> list[str]:
    """The identifiers the query writes as code that lift the units holding them: those held
    by at most ``weights.identifier_share`` of the chunks (all when the share is 0 or the
    chunk count unknown); none when ``weights.identifiers`` is 0."""
    if not weights.identifiers:
        return []
    found = code_words(words.query)
    if not weights.identifier_share or words.chunks <= 0:
        return found
    most = weights.identifier_share * words.chunks
    return [w for w in found if words.frequencies.get(w, 0) <= most]


def whole_unit(chunk_id: int, chunk: Chunk) -> Unit:
    """The chunk itself as a unit (score 0)."""
    return Unit(chunk_id, chunk.start_line, chunk.end_line, chunk.symbol, chunk.kind, 0.0)


def _within(inner: DefinitionSpan, outer: DefinitionSpan) -> bool:
    """Whether ``inner`` lies strictly inside ``outer`` (a span of its own, not the same)."""
    return (outer.start_line <= inner.start_line and inner.end_line <= outer.end_line
            and (outer.start_line, outer.end_line) != (inner.start_line, inner.end_line))


def two_functions_deep(definition: DefinitionSpan, definitions: Sequence[DefinitionSpan]) -> bool:
    """Whether ``definition`` is a function inside a function that is itself inside a function:
    a callback or closure of a helper (ESLint's ``create`` -> ``checkForEmptyLine`` ->
    ``fix(fixer)``), as opposed to the helper, a member of what holds it."""
    if definition.kind != "Function":
        return False
    enclosing = sum(1 for d in definitions if d.kind == "Function" and _within(definition, d))
    return enclosing >= 2


def units(chunk_id: int, chunk: Chunk, definitions: Sequence[DefinitionSpan]) -> list[Unit]:
    """The chunk's units (score 0): its innermost definitions if it holds two or more, else
    the chunk itself. A helper does not give way to the functions two functions deep inside
    it (``two_functions_deep``): both are units, so that a helper holding a callback can
    still be the answer (before, only its `fix(fixer)` could)."""
    inside = [
        d for d in definitions
        if d.kind in CODE_KINDS and chunk.start_line <= d.start_line
        and d.end_line <= chunk.end_line
    ]
    # what encloses a definition of the chunk overlaps the chunk (a big file has thousands)
    around = [d for d in definitions if d.kind == "Function"
              and d.start_line <= chunk.end_line and chunk.start_line <= d.end_line]
    deep = {id(d) for d in inside if two_functions_deep(d, around)}
    leaves = [
        d for d in inside
        if not any(
            o is not d and d.start_line <= o.start_line and o.end_line <= d.end_line
            and id(o) not in deep
            for o in inside
        )
    ]
    if len(leaves) < 2:
        return [whole_unit(chunk_id, chunk)]
    return [Unit(chunk_id, d.start_line, d.end_line, d.qualname, d.kind, 0.0) for d in leaves]


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


def unit_text(chunk: Chunk, unit: Unit) -> str:
    lines = chunk.text.split("\n")
    return "\n".join(lines[unit.start_line - chunk.start_line : unit.end_line - chunk.start_line + 1])


_WORDS_CACHED = 50_000
_unit_words: dict[tuple[str, int, int, bool], frozenset[str]] = {}


def unit_words(chunk: Chunk, unit: Unit, stems: bool = False) -> frozenset[str]:
    """The words (or their stems) of a unit's lines, kept by chunk content and span (a search
    looks at the same big chunks again and again)."""
    key = (chunk.content_hash, unit.start_line, unit.end_line, stems)
    found = _unit_words.get(key)
    if found is None:
        words: set[str] = set()
        for line in without_doc_examples(unit_text(chunk, unit).split("\n")):
            words |= line_terms(line)
        if stems:
            words = {stem(w) for w in words}
        if len(_unit_words) >= _WORDS_CACHED:
            _unit_words.clear()
        found = _unit_words[key] = frozenset(words)
    return found


# a comment line that opens or closes a fenced example (Rust's `/// ```rust`, JSDoc's ` * ````)
_DOC_FENCE = re.compile(r"^\s*(?://[/!]?|\*)\s*```")
_COMMENT_LINE = re.compile(r"^\s*(?://|\*)")


def without_doc_examples(lines: list[str]) -> list[str]:
    """``lines`` less the code examples fenced in their doc comments: an example calls the
    definition and its neighbours, so its words say how it is used, not what it does."""
    kept, inside = [], False
    for line in lines:
        if _DOC_FENCE.match(line):
            inside = not inside
            continue
        if inside and _COMMENT_LINE.match(line):
            continue
        inside = False  # code ends an example left open
        kept.append(line)
    return kept


def scope_words(path: str, qualname: str) -> set[str]:
    """The words of what holds a definition: its enclosing names and what its file is named
    for (``time/OffsetTime.java``, ``OffsetTime.withSecond`` -> offset, time, offsettime;
    ``_examples/clone/main.go``, ``main`` -> clone: see ``name_of_file``)."""
    outer = qualname.replace("::", ".").split(".")[:-1]
    found: set[str] = set()
    for name in (*outer, name_of_file(path)):
        found |= set(identifier_parts(name)) | {name.lower()}
    return found


def unit_name(unit: Unit, shown: bool = False) -> str:
    """The unit's own name: the last part of its qualified name (``shown``: of the name it is
    given as a result, its ``lead`` when a chunk kept whole has one)."""
    return unit_name_of(shown_name(unit) if shown else unit.symbol)


def shown_name(unit: Unit) -> str:
    """The qualified name a unit is given as a result, "." separated: its ``lead`` if it has
    one."""
    return (unit.lead or unit.symbol).replace("::", ".")


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


# "this" and the words after it, up to the end of the clause
_SUBJECT = re.compile(r"\bthis\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})")
# what "this ..." calls the receiver without naming its type
_GENERIC_SUBJECTS = frozenset({"method", "function", "instance", "object", "class", "value",
                               "one", "call", "case", "will", "can", "may", "must"})
# a word as prose writes it: an identifier whole, hyphens between words
_PROSE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# how far above its sibling a subject's method is put: enough to order the two, too little
# to pass a result that was above the sibling
_JUST_ABOVE = 1e-3


def query_subject(query: str, stems: bool) -> tuple[str, ...]:
    """The name parts of what the question first calls "this ...", up to a function word
    ("this date-time is ..." -> date, time; "this buffer cache." -> buffer, cache; "this
    OffsetTime to ..." -> offset, time); empty if it does not, or says only "this method"."""
    found = _SUBJECT.search(query)
    if found is None:
        return ()
    words = []
    for word in found.group(1).split():
        if word.lower() in STOP_WORDS:
            break
        words.append(word)
    if not words or words[0].lower() in _GENERIC_SUBJECTS:
        return ()
    parts = [p for word in words for piece in word.split("-") for p in identifier_parts(piece)]
    return tuple(stem(p) if stems else p for p in parts)


def holder_is(symbol: str, subject: tuple[str, ...], stems: bool) -> bool:
    """Whether the type that directly holds ``symbol`` is called ``subject``: its name, less
    the parts that say how it is built, ends with the subject's parts (`OffsetTime`,
    `ChronoLocalDateImpl` for "date"; not `OffsetDateTime` for "OffsetTime")."""
    path = symbol.replace("::", ".").split(".")
    # a type's name has a capital (`OffsetTime`, Go's `referenceFilteredIter`); a package's
    # or module's has none
    if not subject or len(path) < 2 or path[-2].islower():
        return False
    parts = [p for p in identifier_parts(path[-2]) if p not in BUILD_PARTS]
    if stems:
        parts = [stem(p) for p in parts]
    return tuple(parts[-len(subject):]) == subject


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
        best = _favour_named_holder(best, definitions, words, weights.holder_named)
    if weights.subject:
        subject = query_subject(words.query, words.stems)
        if subject:
            best = _favour_subject(best, subject, words.stems, weights.subject)
    return sorted(best.values(), key=lambda u: -u.score)


def _favour_subject(
    best: dict[tuple[str, int, int], Unit], subject: tuple[str, ...], stems: bool,
    weight: float,
) -> dict[tuple[str, int, int], Unit]:
    """``best`` where each method held by the question's subject type rises (by at most
    ``weight``) to just above the best ranked method of the same name of another type (see
    ``RerankWeights.subject``); nothing else moves. When every same-named method's type fits
    ("this iter", ten `...Iter.ForEach`), the subject tells nothing apart and lifts none."""
    held = {key: holder_is(u.symbol, subject, stems) for key, u in best.items()}
    return _lift_over_namesakes(best, lambda key, rival: held[key] and not held[rival], weight)


def query_name_words(query: str, stems: bool) -> frozenset[str]:
    """The query's words as written, lower-cased (stems when ``stems``): an identifier stays
    whole (`ChronoField` is "chronofield", not "chrono" and "field"), a hyphenated word is
    two ("year-month"). What names a type in prose, not the parts of other names."""
    words = {w.lower() for w in _PROSE_WORD.findall(query)}
    return frozenset(stem(w) for w in words) if stems else frozenset(words)


def holder_parts_named(symbol: str, kinds: dict[str, str], named: frozenset[str],
                       stems: bool) -> frozenset[str]:
    """The parts of the name of the type that directly holds ``symbol`` (less those that say
    how it is built, and the method's own name's) that the query names: all of them when it
    writes the type's whole name, else those among its words (``query_name_words``); empty
    when no type holds it (a package, a module)."""
    holder = holder_type(symbol, kinds)
    if not holder:
        return frozenset()
    norm = stem if stems else str
    own = {norm(p) for p in identifier_parts(unit_name_of(symbol))}
    parts = {norm(p) for p in identifier_parts(holder) if p not in BUILD_PARTS} - own
    if norm(holder.lower()) in named:
        return frozenset(parts)
    return frozenset(parts & named)


def holder_type(symbol: str, kinds: dict[str, str]) -> str:
    """The name of the type that directly holds ``symbol`` (a file's own qualified name), ""
    when none does: a function or module holds it, by ``kinds`` (the file's definitions'
    kinds by qualified name). What holds it and is not among them is a type: a Go method's
    receiver type, declared in another file of its package."""
    path = symbol.replace("::", ".").split(".")
    if len(path) < 2:
        return ""
    kind = kinds.get(".".join(path[:-1]))
    return path[-2] if kind is None or kind in _TYPE_KINDS else ""


def unit_name_of(symbol: str) -> str:
    """The last part of a qualified name ("::" or "." separated)."""
    return symbol.replace("::", ".").rsplit(".", 1)[-1]


def _favour_named_holder(
    best: dict[tuple[str, int, int], Unit], definitions: DefinitionSource, words: QueryWords,
    weight: float,
) -> dict[tuple[str, int, int], Unit]:
    """``best`` where a method whose type the query names by a word that no same-named rival's
    type has rises, by at most ``weight``, to just above the best rival ranked above it whose
    type the query does not so name (``RerankWeights.holder_named``)."""
    named = query_name_words(words.query, words.stems)
    kinds = {path: {d.qualname: d.kind for d in definitions(path)}
             for path in {key[0] for key in best}}
    found = {key: holder_parts_named(shown_name(u), kinds[key[0]], named, words.stems)
             for key, u in best.items()}
    holders = {key: holder_type(shown_name(u), kinds[key[0]]) for key, u in best.items()}
    by_name: dict[str, list[tuple[str, int, int]]] = {}
    for key, unit in best.items():
        by_name.setdefault(unit_name(unit, shown=True), []).append(key)
    distinct: dict[tuple[str, int, int], frozenset[str]] = {}
    for keys in by_name.values():
        for key in keys:
            others = [found[o] for o in keys if holders[o] != holders[key]]
            distinct[key] = found[key].difference(*others)
    return _lift_over_namesakes(best, lambda key, rival: bool(distinct[key])
                                and not distinct[rival], weight)


def _lift_over_namesakes(
    best: dict[tuple[str, int, int], Unit],
    beats: Callable[[tuple[str, int, int], tuple[str, int, int]], bool],
    weight: float,
) -> dict[tuple[str, int, int], Unit]:
    """``best`` where each unit rises (by at most ``weight``) to just above the best ranked
    unit of the same name that it ``beats``; nothing else moves."""
    by_name: dict[str, list[tuple[str, int, int]]] = {}
    for key, unit in best.items():
        by_name.setdefault(unit_name(unit, shown=True), []).append(key)
    lifted = dict(best)
    for keys in by_name.values():
        if len(keys) < 2:
            continue
        for key in keys:
            u = best[key]
            above = max((best[r].score for r in keys if r != key and beats(key, r)),
                        default=None)
            if above is not None and above >= u.score:
                # several lifted past one rival keep their order: each lands in (above,
                # above + _JUST_ABOVE] by its own score (scores are positive)
                share = u.score / above if above > 0 else 1.0
                score = min(u.score + weight, above + _JUST_ABOVE * share)
                lifted[key] = replace(u, score=score)
    return lifted
