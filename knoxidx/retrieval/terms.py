"""Words for lexical search and for the local model: identifiers split into their parts.

``parseHTTPResponse`` -> ``parsehttpresponse parse http response``: the whole identifier (so an
exact name ranks first) and its parts (so ``http response`` finds it). Snake case, digits and
acronyms split the same way. Queries and indexed text go through the same function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


# Each identifier's parts, split once: the names, declarations and FTS rows of a file's chunks
# split the same few names again and again (on java, 64,000 calls for 194 files).
_PARTS: dict[str, tuple[str, ...]] = {}
_PARTS_LIMIT = 200_000
# The caches here hold words of at most this many characters: bounded in size as well as in
# count, since a run of word characters can be kilobytes (a blob, generated or mangled code)
# and then hardly repeats (five of the benchmark corpora: 10 longer of 2.6 million runs);
# bench.fuzz's cases filled these caches with such, ~4 kB an entry
CACHED_WORD_CHARS = 64


def identifier_parts(identifier: str) -> list[str]:
    """``parseHTTPResponse`` -> ``["parse", "http", "response"]``; ``__init__`` -> ``["init"]``."""
    parts = _PARTS.get(identifier)
    if parts is None:
        parts = tuple(p.lower() for piece in identifier.split("_") for p in _PART.findall(piece))
        if len(identifier) <= CACHED_WORD_CHARS:
            if len(_PARTS) > _PARTS_LIMIT:
                _PARTS.clear()
            _PARTS[identifier] = parts
    return list(parts)


def terms(text: str) -> Iterator[str]:
    """Every identifier, lower-cased whole, then its parts when it has more than one."""
    for match in _WORD.finditer(text):
        word = match.group()
        whole = word.strip("_").lower()
        if whole:
            yield whole
        parts = identifier_parts(word)
        if len(parts) > 1:
            yield from parts


# The runs of ``[A-Za-z0-9_]`` that every match of ``_WORD`` lies inside (no match crosses
# another byte, and every byte of a run starts or continues one), found with ``bytes.translate``
# and ``split`` (every other byte a space; non-ASCII encoded as ``?`` separates as it does in
# ``_WORD``): over the java corpus's files, a quarter of ``_WORD.findall``'s time.
_RUN_BYTES = bytes(c if c < 128 and (chr(c).isalnum() or chr(c) == "_") else 32
                   for c in range(256))
_EXPANSIONS: dict[bytes, str] = {}
_EXPANSIONS_LIMIT = 200_000


def _expansion(word: str) -> str:
    whole = word.strip("_").lower()
    parts = identifier_parts(word)
    return " ".join(([whole] if whole else []) + (parts if len(parts) > 1 else []))


def _run_expansion(run: bytes) -> str:
    """The expansions of the words of one run (``12ab`` is two: ``12``, ``ab``), joined."""
    return " ".join(e for e in map(_expansion, _WORD.findall(run.decode("ascii"))) if e)


def _words(text: str) -> list[str]:
    """``_WORD.findall(text)`` from the runs of word characters: a run is one word, or two
    when digits lead letters or underscores (``12ab``: ``12``, ``ab``)."""
    words: list[str] = []
    for run in text.encode("ascii", "replace").translate(_RUN_BYTES).split():
        word = run.decode("ascii")
        if word[0].isdigit() and not word.isdigit():
            digits = len(word) - len(word.lstrip("0123456789"))
            words.append(word[:digits])
            words.append(word[digits:])
        else:
            words.append(word)
    return words


def index_text(text: str) -> str:
    """``" ".join(terms(text))``, with each distinct run of word characters expanded once:
    this runs over every line of a repository when it is indexed."""
    cache = _EXPANSIONS
    out: list[str] = []
    for run in text.encode("ascii", "replace").translate(_RUN_BYTES).split():
        expanded = cache.get(run)
        if expanded is None:
            expanded = _run_expansion(run)
            if len(run) <= CACHED_WORD_CHARS:
                if len(cache) > _EXPANSIONS_LIMIT:
                    cache.clear()
                cache[run] = expanded
        if expanded:
            out.append(expanded)
    return " ".join(out)


# English function words: in a question ("where is the csrf token checked") they match nearly
# every chunk, which costs BM25 time and adds nothing; dropped from lexical queries (when
# something else is left) and from snippet scoring, kept for the embedding model.
STOP_WORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "and", "or",
    "is", "are", "was", "be", "been", "it", "its", "this", "that", "these", "those", "how",
    "what", "where", "which", "when", "who", "why", "do", "does", "did", "i", "we", "you", "my",
    "our", "me", "us",
})


def content_terms(text: str) -> list[str]:
    """The query's terms without English function words (all of them if that leaves none)."""
    words = unique_terms([text])
    return [w for w in words if w not in STOP_WORDS] or words


def code_words(text: str) -> list[str]:
    """The identifiers ``text`` writes as code, lower-cased whole as the index holds them: a
    word of more than one part (``single_precision``, ``MapVisitor``, ``f64``), not an
    English word or a number."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        if len(identifier_parts(word)) > 1:
            seen.setdefault(word.strip("_").lower(), None)
    return list(seen)


def line_terms(line: str) -> set[str]:
    """``set(terms(line))``, through the expansion cache of :func:`index_text`."""
    return set(index_text(line).split())


def unique_terms(texts: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts:
        for term in terms(text):
            seen.setdefault(term, None)
    return list(seen)


def readable_identifiers(text: str, limit: int = 200,
                         keep: Callable[[str], bool] | None = None) -> str:
    """The distinct identifiers (and numbers) of ``text`` as space-separated words, in order of
    appearance; with ``keep``, only the tokens it accepts."""
    seen: dict[str, None] = {}
    for word in _words(text):
        if keep is not None and not keep(word):
            continue
        words = " ".join(identifier_parts(word))
        if words and words not in seen:
            seen[words] = None
            if len(seen) >= limit:
                break
    return " ".join(seen)


# ---- stems: "Returns the copies created" and `return copy create` share their words ---------

_VOWELS = frozenset("aeiou")


def _has_vowel(stem: str) -> bool:
    return any(c in _VOWELS or (c == "y" and i > 0) for i, c in enumerate(stem))


def stem(word: str) -> str:
    """:func:`word_stem`, remembered (bounded): the rerank stems the same words of the same
    chunks for every query."""
    return _cached_stem(word)


# an adverb made of a word by "-ly", after the endings Porter2 lets precede it ("apply",
# "assembly", "family", "only" keep theirs): "blockingly" -> blocking, "exactly" -> exact
_ADVERB = re.compile(r"^(?![a-z]*only$)[a-z]{3,}(?:[cdeghkmnrst]|al|ous)ly$")


def word_stem(word: str) -> str:
    """English inflections off, roughly as the first steps of Porter's stemmer do (plurals,
    an adverb's -ly, -ed, -ing, a final -e or -y), so that a doc comment's "Returns ... copies ... created" meets
    the code's ``return``, ``copy``, ``create``: both sides go through this function, so a stem
    only has to be the same for the forms of one word, not a real word. Words of three letters
    or fewer, and words with digits, are kept."""
    if len(word) <= 3 or not word.isalpha():
        return word
    w = word
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-2]
    elif w.endswith(("ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif _ADVERB.search(w):
        w = w[:-2]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    return w


_cached_stem = lru_cache(maxsize=200_000)(word_stem)
