"""Token counting with a real tokenizer that works offline.

The default is the WordPiece tokenizer of the bundled local model (``tokenizer.json`` shipped in
the installed weights package), loaded with Hugging Face ``tokenizers``. A different
``tokenizer.json`` can be named with ``$KNOXIDX_TOKENIZER_FILE``.

WordPiece never lets a token span a newline (it splits on whitespace first), so a chunk's count
is exactly the sum of its lines' counts: the chunker counts each line once and adds ranges.

Counting is the slow part of chunking (a cold index counts every line of the repository), so
for a BERT tokenizer :meth:`TokenCounter.count_many` takes a shortcut that gives the same
numbers: BERT pre-tokenisation splits printable ASCII into runs of letters and digits and
single punctuation characters, and WordPiece tokenises each such word on its own, so a line's
count is the sum of its words' counts, and each distinct word is tokenised once and
remembered. Each punctuation character is a token of its own, so only the runs of letters
and digits go through the word cache; the punctuation is counted by deleting everything else
(``bytes.translate``, in C), and a file whose text is all printable ASCII is checked once, not
line by line. The words, and that check, are byte loops too (``translate`` then ``split``),
several times cheaper than a regular expression's ``findall`` (BENCHMARKS.md, the lexical
index's cost). Lines with anything else in them (non-ASCII, control characters) go to the
tokenizer whole. ``tests/retrieval/test_tokens.py`` checks both ways agree on real code.
A new word goes to the WordPiece model alone (``Tokenizer.model.tokenize``), lower-cased as
the normaliser would: for a word of printable ASCII that is all normalisation and
pre-tokenisation do, and it costs a sixth of ``encode_batch`` (72,744 distinct words of the
benchmark corpora: 0.17 s against 1.0 s), which every parse worker pays for the words it
meets first.
"""

from __future__ import annotations

import functools
import json
import os
import re
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from knoxidx.retrieval.errors import ModelUnavailableError
from knoxidx.retrieval.model_files import MODEL_DIR_ENV, tokenizer_path

TOKENIZER_FILE_ENV = "KNOXIDX_TOKENIZER_FILE"

# Printable ASCII plus the whitespace BERT's normaliser turns into spaces; anything else (a
# control character is deleted, which joins its neighbours; non-ASCII may be split per
# character or have accents stripped) is left to the tokenizer.
_PLAIN_BYTES = bytes(range(32, 127)) + b"\t\n\r"
# A plain text's bytes with every byte but a letter or digit a space: ``split()`` gives its
# words (``bytes.translate`` and ``split``: C byte loops, no regular expression).
_WORDS_ONLY = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))
# What a plain line holds besides its punctuation: deleted, what is left is one token a byte.
_NOT_PUNCTUATION = bytes(c for c in range(128) if chr(c).isalnum() or chr(c) in " \t\n\r")
_WORD_CACHE_LIMIT = 500_000
_LINE_CACHE_LIMIT = 200_000
# The caches hold no longer word or line: they would hold kilobytes an entry (a blob, a
# minified line) and hardly repeat (five of the benchmark corpora: 1,040 lines of 737,000 are
# longer, 31 of them repeats); bench.fuzz's cases filled them with such
_CACHED_WORD_CHARS = 64
_CACHED_LINE_CHARS = 200
# A line at least this long counted whole (minified code) keeps its tokens' starts until the
# next count, for ``cut_counted``: the chunker cuts such a line right after counting it.
_KEPT_ENCODING_CHARS = 20_000
# A BERT tokenizer encodes a longer line a piece at a time, each cut where a word ends: a
# whole line's Encoding holds ~700 bytes a token (a 20 MB docstring took 2.9 GiB at once)
_ENCODED_CHARS = 100_000
# Where a piece may end: after whitespace, ASCII punctuation or a CJK ideograph (which BERT's
# normaliser pads with spaces), where its pre-tokenizer splits, so that no token spans the
# cut (not after any other character that \s matches: the normaliser deletes control
# characters, joining their neighbours)
# Longer than any added token of a BERT tokenizer's (``[MASK]``): the reach of the check that
# a piece does not end inside one
_ADDED_CHARS = 64
_WORD_END = re.compile("[ \t\r\n!-/:-@\\[-`{-~\u3400-\u4dbf\u4e00-\u9fff]")


class TokenCounter:
    """Counts tokens without special tokens, truncation or padding."""

    def __init__(self, tokenizer_file: Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailableError("token counting needs the `tokenizers` package") from exc
        tokenizer: Any = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self.name = tokenizer_file.parent.name or tokenizer_file.name
        self._bert_words, self._added, self._lowercase = _bert_wordpiece_spec(tokenizer_file)
        self._word_counts: dict[bytes, int] = {}
        self._line_counts: dict[str, int] = {}
        # a long line's tokens, kept from its count for its cut (see _KEPT_ENCODING_CHARS)
        self._kept_tokens: dict[str, _LineTokens] = {}

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not self._bert_words:
            return self._encode_counts(texts)
        counts = [0] * len(texts)
        whole: list[int] = []  # indexes of texts the tokenizer must see whole
        known = self._word_counts
        if len(known) > _WORD_CACHE_LIMIT:
            known.clear()
        lines = self._line_counts  # code repeats whole lines (blank, `return`, `}`): ~half
        if len(lines) > _LINE_CACHE_LIMIT:
            lines.clear()
        added = self._added.search if self._added is not None else None
        # (no added token spans lines, so the lines are all plain and free of them if their
        # text is: one check for a whole file of ASCII code)
        joined = "".join(texts)
        all_plain = _is_plain(joined) and (added is None or added(joined) is None)
        for i, text in enumerate(texts):
            seen = lines.get(text)
            if seen is not None:
                counts[i] = seen
                continue
            if not all_plain and (not _is_plain(text) or (added is not None and added(text))):
                whole.append(i)
                continue
            data = text.encode("ascii")
            n = len(data.translate(None, _NOT_PUNCTUATION))
            # one pass, a new word counted where it is met: collecting a file's new words in a
            # set first, then summing through map(), cost a third of this loop when compiled
            words = data.translate(_WORDS_ONLY)
            # (a generator per line cost the loop; only a long line is split in pieces)
            for piece in (words,) if len(words) <= _ENCODED_CHARS else _word_pieces(words):
                for word in piece.split():
                    word_count = known.get(word)
                    if word_count is None:
                        word_count = self._word_count(word)
                        if len(word) <= _CACHED_WORD_CHARS:
                            known[word] = word_count
                    n += word_count
            counts[i] = n
            if len(text) <= _CACHED_LINE_CHARS:
                lines[text] = n
        self._kept_tokens.clear()
        if whole:
            long = [i for i in whole if len(texts[i]) >= _KEPT_ENCODING_CHARS]
            for i in long:
                line_tokens = self._line_tokens(texts[i])
                self._kept_tokens[texts[i]] = line_tokens
                counts[i] = len(line_tokens.starts)
            short = [i for i in whole if len(texts[i]) < _KEPT_ENCODING_CHARS]
            for i, n in zip(short, self._encode_counts([texts[i] for i in short]), strict=True):
                counts[i] = n
        return counts

    def cut(self, text: str, max_tokens: int, overlap: int) -> list[tuple[int, int]]:
        """``text`` as character spans of at most ``max_tokens`` tokens each, covering it, each
        repeating up to ``overlap`` tokens of the one before; spans begin and end where a word
        does (within a word only when one word is longer than the budget), so that each span,
        tokenized alone, is the tokens it was cut from."""
        return [(a, b) for a, b, _ in self.cut_counted(text, max_tokens, overlap)]

    def cut_counted(self, text: str, max_tokens: int,
                    overlap: int) -> list[tuple[int, int, int | None]]:
        """:meth:`cut`'s spans with their token counts: the tokens a span was cut from, when
        it begins and ends where a word does; None for one cut within a word (count it).
        Encoding the line again for each span cost more than the cut itself (minified
        JavaScript: 0.24 s of django's 0.56 s of cutting)."""
        line_tokens = self._kept_tokens.pop(text, None) or self._line_tokens(text)
        starts, begins = line_tokens.starts, line_tokens.begins_word
        n = len(starts)
        if n <= max_tokens:
            return [(0, len(text), n)]

        def at_word_start(i: int) -> bool:
            return i >= n or begins[i] == 1

        def word_start(i: int, floor: int) -> int:
            """``i``, or the first token of the word it is inside, if that is above ``floor``."""
            j = i
            while j > floor and begins[j] == 0:
                j -= 1
            return j if j > floor else i

        spans: list[tuple[int, int, int | None]] = []
        start = 0
        while True:
            end = min(start + max_tokens, n)
            if end < n:
                end = word_start(end, start)
            aligned = at_word_start(start) and at_word_start(end)
            spans.append((starts[start] if start else 0,
                          starts[end] if end < n else len(text),
                          end - start if aligned else None))
            if end >= n:
                return spans
            start = word_start(max(end - overlap, start + 1), start)

    def _line_tokens(self, text: str) -> _LineTokens:
        """Where each of ``text``'s tokens starts, and whether it begins a word: compact (9
        bytes a token), and encoded a piece at a time where BERT's pre-tokenizer makes each
        piece's tokens the whole text's (another tokenizer's whole, as before)."""
        starts: array[int] = array("q")
        begins = bytearray()
        base = 0
        while base < len(text):
            end = _piece_end(text, base, self._added) if self._bert_words else len(text)
            encoding = self._tokenizer.encode(text[base:end], add_special_tokens=False)
            words = encoding.word_ids
            starts.extend([base + a for a, _ in encoding.offsets])
            begins.extend([i == 0 or w is None or w != words[i - 1] for i, w in enumerate(words)])
            base = end
        return _LineTokens(starts, begins)

    def _word_count(self, word: bytes) -> int:
        """A word's count (printable ASCII, one pre-token), from the WordPiece model alone."""
        text = word.decode("ascii")
        return len(self._tokenizer.model.tokenize(text.lower() if self._lowercase else text))

    def _encode_counts(self, texts: Sequence[str]) -> list[int]:
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]


class _LineTokens:
    """A line's tokens as ``cut_counted`` reads them: each one's first character, and 1
    where it begins a word (a pre-token), else 0."""

    __slots__ = ("starts", "begins_word")

    def __init__(self, starts: array[int], begins_word: bytearray) -> None:
        self.starts = starts
        self.begins_word = begins_word


def _piece_end(text: str, base: int, added: re.Pattern[str] | None) -> int:
    """Where the piece of ``text`` from ``base`` to encode next ends: just after the last
    space (else word end) within ``_ENCODED_CHARS``, or past a longer run of neither (one
    word: one token, [UNK], however long); never inside an added token (``[CLS]``), which
    the tokenizer matches before it splits words."""
    limit = base + _ENCODED_CHARS
    if limit >= len(text):
        return len(text)
    space = text.rfind(" ", base, limit)
    if space >= base:
        return space + 1  # (no added token holds a space)
    end = -1
    for boundary in _WORD_END.finditer(text, base, limit):
        end = boundary.end()
    if end <= base:
        after = _WORD_END.search(text, limit)
        end = after.end() if after is not None else len(text)
    if added is not None:
        for token in added.finditer(text, max(base, end - _ADDED_CHARS), end + _ADDED_CHARS):
            if token.start() < end < token.end():
                return token.end()
    return end


def _word_pieces(words: bytes) -> Iterator[bytes]:
    """``words`` (words and spaces) in pieces of about ``_ENCODED_CHARS``, cut at spaces:
    split whole, a 20 MB line's list of words took ten times its size."""
    base = 0
    while base < len(words):
        end = words.find(b" ", base + _ENCODED_CHARS)
        end = len(words) if end < 0 else end
        yield words[base:end]
        base = end


def _is_plain(text: str) -> bool:
    """Whether ``text`` is all printable ASCII and BERT's whitespace (C loops, no regular
    expression)."""
    return text.isascii() and not text.encode("ascii").translate(None, _PLAIN_BYTES)


def _bert_wordpiece_spec(tokenizer_file: Path) -> tuple[bool, re.Pattern[str] | None, bool]:
    """Whether the word shortcut holds (BERT normaliser and pre-tokeniser, WordPiece model),
    a pattern for the added tokens (``[MASK]``...), which match before pre-tokenisation: a
    line holding one is counted whole; and whether the normaliser lower-cases."""
    try:
        spec = json.loads(tokenizer_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, None, False
    normalizer = spec.get("normalizer") or {}
    bert = (
        normalizer.get("type") == "BertNormalizer"
        and (spec.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
        and (spec.get("model") or {}).get("type") == "WordPiece"
    )
    added = [t["content"] for t in spec.get("added_tokens") or () if t.get("content")]
    pattern = re.compile("|".join(map(re.escape, added)), re.IGNORECASE) if added else None
    return bert, pattern, bool(normalizer.get("lowercase", True))


@functools.lru_cache(maxsize=4)
def _counter_for(path: str) -> TokenCounter:
    return TokenCounter(Path(path))


def default_counter() -> TokenCounter:
    """The process-wide counter (loaded once: about 50 ms)."""
    override = os.environ.get(TOKENIZER_FILE_ENV)
    if override:
        return _counter_for(override)
    return _counter_for(_default_tokenizer_file(os.environ.get(MODEL_DIR_ENV)))


@functools.lru_cache(maxsize=4)
def _default_tokenizer_file(model_dir_override: str | None) -> str:
    """Where the model's tokenizer is (finding the installed package costs ~0.2 ms, once per
    chunked file without this cache)."""
    return str(tokenizer_path())


def count_tokens(text: str) -> int:
    return default_counter().count(text)
