"""``index_text`` finds its words without a regular expression over the whole text; it must
give exactly what ``terms`` (the definition, by ``_WORD``) gives, on any text."""

from __future__ import annotations

import random

from knoxidx.retrieval.terms import identifier_parts, index_text, terms

EDGES = [
    "",
    "parseHTTPResponse(x)",
    "123abc 1_a 0x1F 3.14e-10 a1b2",  # a run led by digits is two words: 123, abc
    "__init__ _ __ _private_ x_ _1",  # underscores alone expand to nothing
    "caf\u00e9Bar na\u00efve\u00c5ngstr\u00f6m",  # non-ASCII letters separate words
    "bad \ufffd byte \udcff surrogate\udcffjoined",  # decoding's replacements, lone surrogates
    "\u4e2d\u6587abc\u0663\u0664 digits",  # CJK, Arabic-Indic digits: not word characters
    "tab\tsep\x0bvt\x0cff\x00nul\x7fdel\nnext_line",
    "".join(map(chr, range(128))),
]


def reference(text: str) -> str:
    return " ".join(terms(text))


def test_index_text_equals_terms_on_edge_cases() -> None:
    for text in EDGES:
        assert index_text(text) == reference(text), repr(text)
        assert index_text(text) == reference(text), repr(text)  # and from the cache


def test_index_text_equals_terms_on_random_text() -> None:
    alphabet = "aZ_19 .\n\t(\u00e9\u00df\u4e2d\udcff\x00\x7f"
    rng = random.Random(52)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert index_text(text) == reference(text), repr(text)


def test_identifier_parts_are_split_once_and_handed_out_as_new_lists() -> None:
    first = identifier_parts("parseHTTPResponse_v2")
    assert first == ["parse", "http", "response", "v", "2"]
    first.append("changed by a caller")
    assert identifier_parts("parseHTTPResponse_v2") == ["parse", "http", "response", "v", "2"]
