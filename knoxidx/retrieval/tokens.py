"""Token counting with a real tokenizer that works offline.

The default is the WordPiece tokenizer of the bundled local model (``tokenizer.json`` shipped in
the installed weights package), loaded with Hugging Face ``tokenizers``. A different
``tokenizer.json`` can be named with ``$KNOXIDX_TOKENIZER_FILE``.

WordPiece never lets a token span a newline (it splits on whitespace first), so a chunk's count
is exactly the sum of its lines' counts: the chunker counts each line once and adds ranges.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from knoxidx.retrieval.errors import ModelUnavailableError

TOKENIZER_FILE_ENV = "KNOXIDX_TOKENIZER_FILE"


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

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]


@functools.lru_cache(maxsize=4)
def _counter_for(path: str) -> TokenCounter:
    return TokenCounter(Path(path))


def default_counter() -> TokenCounter:
    """The process-wide counter (loaded once: about 50 ms)."""
    override = os.environ.get(TOKENIZER_FILE_ENV)
    if override:
        return _counter_for(override)
    from knoxidx.retrieval.minilm import tokenizer_path

    return _counter_for(str(tokenizer_path()))


def count_tokens(text: str) -> int:
    return default_counter().count(text)
