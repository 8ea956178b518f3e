"""A chunk's units: the definitions a search result can be (see ``rerank``), their lines,
words and names."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.chunker import DefinitionLike as DefinitionSpan
from knoxidx.retrieval.terms import line_terms, stem

CODE_KINDS = frozenset({"Function", "Class", "Interface", "Type"})

# A file's definitions (the graph's stored facts for that path)
DefinitionSource = Callable[[str], Sequence[DefinitionSpan]]


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
    # although it holds several (``rerank.query_units``): its name scores as the best of theirs
    held: tuple[str, ...] = ()
    # of those, the one sharing most of the query, and its kind: what the result is named
    # after, rather than the chunk's first definition ("" when none shares a word)
    lead: str = ""
    lead_kind: str = ""


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


def unit_name(unit: Unit, shown: bool = False) -> str:
    """The unit's own name: the last part of its qualified name (``shown``: of the name it is
    given as a result, its ``lead`` when a chunk kept whole has one)."""
    return unit_name_of(shown_name(unit) if shown else unit.symbol)


def shown_name(unit: Unit) -> str:
    """The qualified name a unit is given as a result, "." separated: its ``lead`` if it has
    one."""
    return (unit.lead or unit.symbol).replace("::", ".")


def unit_name_of(symbol: str) -> str:
    """The last part of a qualified name ("::" or "." separated)."""
    return symbol.replace("::", ".").rsplit(".", 1)[-1]
