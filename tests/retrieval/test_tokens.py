"""The token counter's word shortcut must give exactly the tokenizer's own counts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from retrieval_support import SITE_PACKAGES

from knoxidx.retrieval.chunker import split_lines
from knoxidx.retrieval.model_files import tokenizer_path
from knoxidx.retrieval.tokens import TokenCounter, default_counter

TRICKY = [
    "",
    "\n",
    "    return self._cache[key]  # hit\n",
    "x = a_b__c + CamelCaseHTTP2Thing - 0x1F * 3.14e-10\n",
    "s = 'caf\u00e9 na\u00efve \u00c5ngstr\u00f6m'\n",  # accents (stripped by BERT's normaliser)
    "print('\u4e2d\u6587 mixed with words')\n",  # CJK characters are split one by one
    "tab\tseparated\rcarriage\n",
    "form\x0cfeed and vertical\x0btab\x1fjoin\n",  # control characters are deleted
    "fill in the [MASK] and [CLS] tokens, [mask] too\n",  # special tokens match whole
    "a" * 150 + " long words become [UNK]\n",
    "emoji \U0001f600 and symbols \u00a9 \u2192 \u2026\n",
    "~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./\n",
]


def test_fast_counts_equal_the_tokenizer_on_tricky_lines() -> None:
    counter = default_counter()
    assert counter.count_many(TRICKY) == [counter.count(t) for t in TRICKY]


PLAIN = [TRICKY[i] for i in (0, 1, 2, 3, 6, 11)]  # printable ASCII, no special token


def test_a_file_of_plain_ascii_counts_as_its_lines_do() -> None:
    """All printable ASCII, checked once for the whole file; and the same lines beside one
    that is not (checked line by line)."""
    counter = default_counter()
    plain = [*PLAIN, "\t}\r\n", "if (a->b[0] != '\\0') { return -1; }\n", "   \n"]
    assert counter.count_many(plain) == [counter.count(t) for t in plain]
    mixed = [*plain, "caf\u00e9\n"]
    assert TokenCounter(tokenizer_path()).count_many(mixed) == [counter.count(t) for t in mixed]


def test_every_ascii_character_between_words_counts_as_the_tokenizer_does() -> None:
    """Which bytes are plain, words or punctuation is decided by byte tables: each of the 128
    ASCII characters, alone and between words, in one file and line by line."""
    counter = default_counter()
    lines = [f"ab{chr(c)}Cd_e9{chr(c)}{chr(c)}x\n" for c in range(128)]
    lines += [chr(c) for c in range(128)]
    exact = [counter.count(t) for t in lines]
    assert TokenCounter(tokenizer_path()).count_many(lines) == exact
    alone = TokenCounter(tokenizer_path())
    for line, n in zip(lines, exact, strict=True):
        assert alone.count_many([line]) == [n], repr(line)


def test_fast_counts_equal_the_tokenizer_on_real_code() -> None:
    counter = default_counter()
    files = [
        p
        for package in ("click", "rich", "pygments", "markdown_it", "hypothesis")
        for p in sorted((SITE_PACKAGES / package).rglob("*"))
        if p.suffix in (".py", ".md", ".js", ".txt") and p.stat().st_size < 40_000
    ]
    lines: list[str] = []
    for path in random.Random(7).sample(files, 30):
        lines.extend(split_lines(path.read_text(encoding="utf-8", errors="replace")))
    fast = counter.count_many(lines)
    encodings = counter._tokenizer.encode_batch(lines, add_special_tokens=False)
    assert fast == [len(e.ids) for e in encodings]
    assert counter.count_many(lines) == fast  # and again, from the word cache


def test_a_cut_piece_s_count_is_the_tokenizer_s_count_of_the_piece() -> None:
    # minified code (one line, over the budget) with words of every kind, and a word of 90
    # tokens, over the budget: cut within the word, its pieces are counted again
    counter = default_counter()
    line = "".join(TRICKY).replace("\n", " ") * 50 + "xq" * 45 + " tail();\n"
    assert len(line) > 20_000  # its encoding is kept from counting for the cut
    assert counter.count_many([line]) == [counter.count(line)]
    pieces = counter.cut_counted(line, 40, 5)
    assert len(pieces) > 10 and any(tokens is None for _, _, tokens in pieces)
    for start, end, tokens in pieces:
        assert tokens is None or tokens == counter.count(line[start:end])
    assert [(a, b) for a, b, _ in pieces] == counter.cut(line, 40, 5)


def test_a_long_line_or_word_is_counted_but_not_remembered() -> None:
    """The counter's caches are bounded in size, not only in count: a minified line or a word
    kilobytes long is counted each time it is met."""
    counter = default_counter()
    word = "abc123" * 500
    long_line = f"x = {word}\n"
    short_line = "return value  # kept\n"
    lines = [long_line, short_line, long_line]
    assert counter.count_many(lines) == [counter.count(t) for t in lines]
    assert long_line not in counter._line_counts and short_line in counter._line_counts
    assert word.encode() not in counter._word_counts and b"value" in counter._word_counts


def test_a_long_line_encoded_a_piece_at_a_time_has_the_whole_line_s_tokens(monkeypatch) -> None:
    """Past ``_ENCODED_CHARS`` a line is encoded in pieces cut where BERT splits words: its
    count and its cuts are those of the line encoded whole, whatever the characters at the
    cuts (punctuation alone, CJK, control characters, special tokens, a word over 100
    characters)."""
    from knoxidx.retrieval import tokens

    counter = default_counter()
    rng = random.Random(3)
    words = [line.rstrip("\n") for line in TRICKY] + ["[SEP]", "\u4e2d", "\x1f", "e\u0301",
                                                      "x" * 120, ".", "\t"]
    lines = ["".join(rng.choice(words) for _ in range(rng.randint(50, 300))) for _ in range(40)]
    lines.append(".,;" * 400)  # no space at all: cut after punctuation
    whole = [(counter.count_many([line]), counter.cut_counted(line, 40, 5)) for line in lines]
    monkeypatch.setattr(tokens, "_ENCODED_CHARS", 37)
    for line, expected in zip(lines, whole, strict=True):
        assert (counter.count_many([line]), counter.cut_counted(line, 40, 5)) == expected, line
        assert expected[0] == [counter.count(line)]


CUT_A_LONG_LINE = r"""
from pathlib import Path
from knoxidx.retrieval.tokens import default_counter

def kib(field):  # (not ru_maxrss: a child starts with its parent's, pytest's, at the fork)
    status = Path("/proc/self/status").read_text()
    return int(status.split(field + ":")[1].split()[0])

counter = default_counter()
counter.cut_counted("warm up " * 100, 64, 8)
line = "implementation, " * (1 << 15)
before = kib("VmRSS")
counter.cut_counted(line, 512, 64)
print((kib("VmHWM") - before) * 1024 / len(line))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_cutting_a_long_line_holds_a_small_multiple_of_its_size() -> None:
    """Encoded whole, a line's Encoding took ~130 times its size (a 20 MB one-line docstring
    took 2.9 GiB to chunk); in pieces, its tokens' starts take 9 bytes a token."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", CUT_A_LONG_LINE], capture_output=True,
                          text=True, timeout=120, check=True)
    assert float(done.stdout) < 60, done.stdout  # (half a MB: ~20, mostly one piece's Encoding)
