"""``index_text`` finds its words without a regular expression over the whole text; it must
give exactly what ``terms`` (the definition, by ``_WORD``) gives, on any text."""

from __future__ import annotations

import random

from knoxidx.retrieval.terms import _WORD, identifier_parts, index_text, readable_identifiers, terms

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


def reference_readable_identifiers(text: str, limit: int = 200, keep=None) -> str:
    """``readable_identifiers`` as defined by ``_WORD``'s matches."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        if keep is not None and not keep(match.group()):
            continue
        words = " ".join(identifier_parts(match.group()))
        if words and words not in seen:
            seen[words] = None
            if len(seen) >= limit:
                break
    return " ".join(seen)


def test_readable_identifiers_equal_their_definition_by_regular_expression() -> None:
    def keep(word: str) -> bool:
        return len(word) > 1

    alphabet = "aZ_19 .\n(\u00e9\u4e2d\udcff\x00"
    rng = random.Random(5)
    texts = [*EDGES, *("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
                       for _ in range(3000))]
    for text in texts:
        assert readable_identifiers(text) == reference_readable_identifiers(text), repr(text)
        assert (readable_identifiers(text, limit=2, keep=keep)
                == reference_readable_identifiers(text, limit=2, keep=keep)), repr(text)


def test_code_words_are_the_identifiers_a_text_writes_as_code() -> None:
    from knoxidx.retrieval.terms import code_words

    assert code_words("Exclude single_precision flag unless needed") == ["single_precision"]
    assert code_words("Rename the map visitor to MapVisitor, use __custom_func") == [
        "mapvisitor", "custom_func"]
    assert code_words("Replace f64::to_string with ryu") == ["f64", "to_string"]
    # prose, an acronym, a number, a version: nothing written as code
    assert code_words("Update to ryu 1.0 for the HTTP API and JSON") == []


def test_a_long_word_is_expanded_but_not_remembered() -> None:
    """The caches of words are bounded in size, not only in count: a run of word characters
    kilobytes long (a blob, mangled code) is expanded and split each time it is met."""
    from knoxidx.retrieval import terms as module

    blob = "aB9_" * 1000
    text = f"x = {blob} + shortName"
    assert index_text(text) == reference(text)
    assert identifier_parts(blob) == identifier_parts(blob)[:] and identifier_parts(blob)
    assert blob not in module._PARTS and blob.encode() not in module._EXPANSIONS
    assert "shortName" in module._PARTS and b"shortName" in module._EXPANSIONS
