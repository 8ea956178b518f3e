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
# What the read callback returns at a time: while parsing, a window's worth (below, a power of
# two); afterwards, for `node.text`, short reads (see parse_tree).
PARSE_READ_CHUNK = 1 << 16
READ_CHUNK = 256


class _Window:
    """A fixed buffer a parse reads its source through, a window at a time.

    py-tree-sitter 0.26 keeps a reference to every object a read callback returns, for ever:
    returning slices of the source kept a copy of each file parsed (100 parses of distinct
    500 kB files: +55 MiB). A read here returns one of a few views of this buffer made once,
    so what is kept stays the same whatever the bytes parsed. Each length has its view: a
    window, then near the end of the source the largest power of two that is left (views
    of each length left, made as needed, pinned pymalloc arenas: +5 MiB over 300 such
    parses), or the last 1-3 bytes whole (tree-sitter reads a UTF-8 character cut by a read's
    end again from its first byte, so a read of 4 bytes or more holds any whole character).
    The buffer's size never changes (a bytearray whose buffer is held cannot be resized).
    """

    __slots__ = ("_views",)

    def __init__(self) -> None:
        buffer = memoryview(bytearray(PARSE_READ_CHUNK))
        lengths = [1, 2, 3] + [1 << k for k in range(2, PARSE_READ_CHUNK.bit_length())]
        self._views = {length: buffer[:length] for length in lengths}

    def holding(self, source: memoryview, offset: int) -> memoryview:
        """A view of the buffer holding ``source`` from ``offset`` (not at its end) on: as
        many bytes as a view's length allows."""
        left = len(source) - offset
        if left >= PARSE_READ_CHUNK:
            length = PARSE_READ_CHUNK
        else:
            length = left if left < 4 else 1 << (left.bit_length() - 1)
        view = self._views[length]
        view[:] = source[offset : offset + length]
        return view


# Windows no parse holds: one per parse running at once (threads: watch, serve), not one per
# thread (a thread's would stay pinned after it ends). list.pop/append are atomic under the GIL.
_free_windows: list[_Window] = []


def _take_window() -> _Window:
    try:
        return _free_windows.pop()
    except IndexError:
        return _Window()


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
    # are bytes (`node.text` takes nothing else) and short, which keeps `node.text` cheap (with
    # 64 KiB reads, 12,000 identifiers' texts took 10 s instead of 0.1). Extraction slices texts
    # from the source itself; what still reads through here is py-tree-sitter's own `#eq?`/
    # `#match?` predicates.
    lent = _take_window()
    window: _Window | None = lent
    whole = memoryview(source)

    def read(offset: int, _point: Any) -> bytes | memoryview:
        if offset >= size:
            return b""
        if window is None:
            return source[offset : offset + READ_CHUNK]
        # (tree-sitter holds a read's bytes only until its next read or the parse's end)
        return window.holding(whole, offset)

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
        window = None
        whole.release()
        _free_windows.append(lent)
    if tree is None:
        parser.reset()
        raise ParseTimeoutError(
            f"parsing took over {budget:.1f} s of CPU (pathological input?); not indexed")
    return tree
