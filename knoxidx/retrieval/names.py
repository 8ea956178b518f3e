"""The ``names`` search source: definitions whose names are made of the question's words.

A question says what code does in words ("Returns a copy of this period with the specified
years subtracted"); the function that does it is often named with some of them
(``Period.minusYears``), and its own doc comment may be missing. The lexical source ranks
chunks by all their text, so documented neighbours that repeat the question's words
(``minusMonths``: "... months subtracted") outrank an undocumented function whose *name* is the
answer; the symbol source only looks up words shaped like code. This source ranks the code
definitions (functions, classes, interfaces, types) by their names alone:

- the share of the name's parts that are words of the question (``minus``, ``year``: a name
  the question explains entirely scores 1),
- plus the share of the question's words (IDF-weighted) that the name holds,
- plus the share of the rest found in the names of what holds the definition (enclosing
  definitions and the file: ``Period``).

Words are compared by their stems (``terms.stem``). The store keeps each definition's stemmed
name parts and scope words in a full-text table written with its chunk (``chunk_name``); a
search asks it for the definitions sharing a part with the question and scores those here.
Measured on the docstring -> code benchmark (``python -m bench.retrieval_eval``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from knoxidx.languages.registry import name_of_file
from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.query_words import QueryWords
from knoxidx.retrieval.rerank import scope_words
from knoxidx.retrieval.secrets import mask_secrets
from knoxidx.retrieval.terms import identifier_parts, readable_identifiers, stem
from knoxidx.retrieval.text_views import meaningful_identifier

# The kinds a question is answered by; fields and constants are not (measured: counting them
# too cost R@10 / MRR@10 -0.008 / -0.012 on the held-out projects).
NAME_KINDS = frozenset({"Function", "Class", "Interface", "Type"})
# Definitions the store hands over for scoring, best BM25 over the name parts first.
PRESELECT = 300


def name_rows(chunk: Chunk) -> list[tuple[str, str]]:
    """(stemmed name parts, stemmed scope words), space-separated, of each code definition
    that starts in ``chunk``, in its order."""
    rows = []
    kinds = chunk.symbol_kinds or ("",) * len(chunk.symbols)
    for qualname, kind in zip(chunk.symbols, kinds, strict=True):
        if kind not in NAME_KINDS:
            continue
        parts = name_stems(qualname)
        if parts:
            scope = {stem(w) for w in scope_words(chunk.path, qualname)} - set(parts)
            rows.append((" ".join(parts), " ".join(sorted(scope))))
    return rows


def name_stems(qualname: str) -> list[str]:
    """The stems of a definition's own name's parts, each once (``Period.minusYears`` ->
    minus, year); not letters or numbers alone (see ``naming``)."""
    name = qualname.replace("::", ".").rsplit(".", 1)[-1]
    return list(dict.fromkeys(stem(p) for p in identifier_parts(name) if naming(p)))


def naming(word: str) -> bool:
    """Whether a word can say what a name is about: not one letter nor a number (``x``, ``1``
    of ``sha1``, ``min_x``). A query for ``probe23x1`` split into probe, 23, x, 1 otherwise
    ranked ``Point.x`` and ``sha1`` above the line that holds ``probe23x1`` itself."""
    return len(word) > 1 and not word.isdigit()


def query_stems(words: QueryWords) -> list[str]:
    """The query's stems a name may be made of (see ``naming``)."""
    return [w for w in words.weight if naming(w)]


def name_score(parts: Sequence[str], scope: Sequence[str], words: QueryWords) -> float:
    """How well a definition's name answers the question (see the module docstring)."""
    if not parts:
        return 0.0
    named = set(parts)
    coverage = sum(1 for p in named if p in words.weight) / len(named)
    return coverage + words.share(named) + words.share(set(scope) - named)


def rank_names(
    rows: Sequence[tuple[int, str, str]], words: QueryWords, limit: int
) -> list[tuple[int, float]]:
    """Chunks by the best score of their definitions (``rows``: chunk id, name parts, scope
    words, as the store returns them), best first, at most ``limit``."""
    best: dict[int, float] = {}
    for chunk_id, parts, scope in rows:
        score = name_score(parts.split(), scope.split(), words)
        if score > best.get(chunk_id, 0.0):
            best[chunk_id] = score
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:limit]


# between a declaration text's head and its signature's words (neither holds it)
DECLARATION_SEPARATOR = ": "


def declaration_texts(chunk: Chunk) -> list[str]:
    """What the declarations source embeds of each code definition that starts in ``chunk``,
    in its order: the kind, the name's
    words, what holds it (enclosing names, else the file's name) and the signature's words,
    ``function minus years in period: public period minus years long years to subtract``.

    The chunk's own vector reads a condensed view of everything in it, where a short
    definition's name is a few words among many; a question says in other words what the
    name says ("... years subtracted" for ``minusYears``), which the names source, matching
    words exactly, cannot see and a model reading little more than the name can. On the
    docstring -> code benchmark's held-out projects this text, one vector per
    definition, a chunk ranked by its best, beat the kind and name alone, the name and its
    holder, and the same with the doc comment's first line."""
    kinds = chunk.symbol_kinds or ("",) * len(chunk.symbols)
    signatures = chunk.symbol_signatures or ("",) * len(chunk.symbols)
    texts = []
    for qualname, kind, signature in zip(chunk.symbols, kinds, signatures, strict=True):
        if kind not in NAME_KINDS:
            continue
        text = declaration_head(chunk.path, qualname, kind)
        if not text:
            continue
        words = signature_words(signature)
        texts.append(f"{text}{DECLARATION_SEPARATOR}{words}" if words else text)
    return texts


@functools.lru_cache(maxsize=65_536)
def signature_words(signature: str) -> str:
    """The words a declaration text takes from a signature; remembered, since signatures
    repeat (``def __init__(self)``, ``String toString()``). A secret in a default value would
    reach a remote embedder as words its masking no longer recognises: masked while it is
    still whole."""
    return readable_identifiers(mask_secrets(signature)[0], keep=meaningful_identifier)


def declaration_head(path: str, qualname: str, kind: str) -> str:
    """What a declaration text says before the signature: the kind, the name's words and
    what holds it (enclosing names, else what the file is named for: ``main`` of
    ``_examples/clone/main.go`` is ``function main in clone``), ``function minus years in
    period``; "" for a name without words. A search finds a definition's declaration by it
    (``declaration_head_of``)."""
    parts = qualname.replace("::", ".").split(".")
    own = " ".join(identifier_parts(parts[-1]))
    if not own:
        return ""
    holder = " ".join(" ".join(identifier_parts(p)) for p in parts[:-1])
    if not holder:
        holder = " ".join(identifier_parts(name_of_file(path)))
    return f"{kind.lower()} {own} in {holder}" if holder else f"{kind.lower()} {own}"


def declaration_head_of(text: str) -> str:
    """The head of a declaration text (see ``declaration_head``)."""
    return text.split(DECLARATION_SEPARATOR, 1)[0]
