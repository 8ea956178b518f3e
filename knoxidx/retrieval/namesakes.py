"""Same-named methods of different types told apart by what the question says of the type: the
one whose type it calls "this ..." (``RerankWeights.subject``), or names by a word no rival's
type has (``RerankWeights.holder_named``), rises just above the rival; nothing else moves."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from knoxidx.retrieval.intents import BUILD_PARTS
from knoxidx.retrieval.query_words import QueryWords
from knoxidx.retrieval.terms import STOP_WORDS, identifier_parts, stem
from knoxidx.retrieval.units import DefinitionSource, Unit, shown_name, unit_name, unit_name_of

_TYPE_KINDS = frozenset({"Class", "Interface", "Type"})

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


def favour_subject(
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


def favour_named_holder(
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
