"""One tree-sitter parse under a CPU deadline: ``parse_tree(parser, source)``.

Kept out of the modules setup.py compiles: py-tree-sitter calls the parse's read and progress
callbacks for every few hundred bytes, and with the callbacks compiled by mypyc the process
kept memory on every call (about 0.8 byte per byte parsed, for ever in a long-lived parse
worker); as plain Python functions they keep none.
"""

from __future__ import annotations

import time
from typing import Any

# Every parse has a deadline in CPU seconds of the parsing thread (so a busy machine does not
# make a normal file miss it): tree-sitter's error recovery is not linear, and a 74 KB file of
# repeated unterminated `/**` comments takes a minute. Real files parse at over 1 MB/s.
PARSE_SECONDS = 1.0
PARSE_SECONDS_PER_MB = 4.0
# What the read callback returns at a time: while parsing, large reads (in 256-byte ones py-
# tree-sitter 0.26 kept about the size of each file parsed); afterwards, for `node.text`,
# short ones (see parse_tree).
PARSE_READ_CHUNK = 1 << 20
READ_CHUNK = 256


class ParseTimeoutError(Exception):
    """tree-sitter did not finish within the deadline for this file's size."""


def parse_budget(size: int) -> float:
    """CPU seconds a parse of ``size`` bytes may take."""
    return PARSE_SECONDS + PARSE_SECONDS_PER_MB * size / 1e6


def parse_tree(parser: Any, source: bytes, old_tree: Any = None) -> Any:
    """``parser``'s tree of ``source``; ParseTimeoutError past ``parse_budget``. ``old_tree``,
    an earlier version's tree edited (``Tree.edit``) to where ``source`` differs from it, lets
    tree-sitter reuse what did not change."""
    size = len(source)
    budget = parse_budget(size)
    deadline = time.thread_time() + budget

    # The tree keeps `read` to produce each node's text, so once the parse is done the reads
    # get short, which keeps `node.text` cheap (with 64 KiB reads, 12,000 identifiers' texts
    # took 10 s instead of 0.1). Extraction slices texts from the source itself; what still
    # reads through here is py-tree-sitter's own `#eq?`/`#match?` predicates.
    chunk = PARSE_READ_CHUNK

    def read(offset: int, _point: Any) -> bytes:
        return source[offset : offset + chunk] if offset < size else b""

    calls = 0

    def progress(_offset: int, _has_error: bool) -> bool:  # True cancels the parse
        nonlocal calls
        calls += 1
        # tree-sitter calls this every ~200 bytes of input; the CPU clock is a system call
        # (a tenth of the parse when read every time), so every 16th call reads it
        return not calls & 15 and time.thread_time() > deadline

    # (a bytes source would ignore the progress callback: tree-sitter reads through `read`)
    try:
        if old_tree is None:  # (py-tree-sitter takes no None for it)
            tree = parser.parse(read, progress_callback=progress)
        else:
            tree = parser.parse(read, old_tree, progress_callback=progress)
    except ValueError:  # how py-tree-sitter 0.26 reports a cancelled parse
        if time.thread_time() <= deadline:
            parser.reset()
            raise
        tree = None
    except BaseException:
        # An exception out of a callback (a MemoryError near the worker's cap, Ctrl-C) stops
        # the parse half-way, and tree-sitter resumes a stopped parse on the next call: the
        # next file read as the rest of this one (found by bench.fuzz).
        parser.reset()
        raise
    finally:
        chunk = READ_CHUNK
    if tree is None:
        parser.reset()
        raise ParseTimeoutError(
            f"parsing took over {budget:.1f} s of CPU (pathological input?); not indexed")
    return tree
