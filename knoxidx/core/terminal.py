"""What the CLI prints passes through here on its way to a terminal.

A cloned repository's file names, symbol names and doc comments are untrusted text, and a
control character in one is a command to the terminal: ``ESC]0;…BEL`` retitles the window,
``ESC[2J`` clears the screen, a C1 ``CSI`` (U+009B) does what ``ESC[`` does, a newline in a
file name forges a line of output, and a bidirectional override reorders what is shown. Human
output shows each of them as a visible escape (``\\x1b``, ``\\n``, ``\\u202e``); JSON output keeps
every string exact (``json`` escapes C0 characters itself, :func:`json_text` the rest).
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0, DEL, C1, and every bidirectional control (Unicode's Bidi_Control: the embeddings,
# overrides and isolates, and the marks ALM, LRM, RLM, which reorder what is around them too)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# in JSON text those not escaped by json.dumps(ensure_ascii=False): all inside strings
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# answer fields that hold many lines of code or markdown: their newlines and tabs are layout
MULTILINE_KEYS = frozenset({"snippet", "markdown", "text"})


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character as a visible escape (``multiline``: newlines and
    tabs kept as they are)."""
    if not _UNSAFE.search(text):
        return text

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if multiline and char in "\n\t":
            return char
        code = ord(char)
        return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")

    return _UNSAFE.sub(escape, text)


def for_terminal(data: Any, key: str | None = None) -> Any:
    """``data`` (an answer: dicts, lists, strings, numbers) with every string made
    :func:`visible`; strings under :data:`MULTILINE_KEYS` keep their line breaks."""
    if isinstance(data, str):
        return visible(data, multiline=key in MULTILINE_KEYS)
    if isinstance(data, dict):
        if isinstance(data.get("markdown"), str) and isinstance(data.get("blocks"), list):
            data = {**data, "markdown": _headers_escaped(data["markdown"], data["blocks"])}
        return {k: for_terminal(v, k if isinstance(k, str) else None) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [for_terminal(v, key) for v in data]
    return data


def _headers_escaped(markdown: str, blocks: list[Any]) -> str:
    """A context's markdown with each block's header line (``path:start-end (…)``, a path that
    may hold a newline) escaped as one line, before the rest keeps its line breaks."""
    for block in blocks:
        header = block.get("header") if isinstance(block, dict) else None
        if isinstance(header, str) and header:
            markdown = markdown.replace(header, visible(header))
    return markdown


def character_references(text: str, keep: str = "\n") -> str:
    """``text`` with every control character but those in ``keep`` as an XML character
    reference (``&#27;``), which Graphviz and XML readers take as the character itself."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else f"&#{ord(m.group())};",
                       text)


def json_text(data: Any, indent: int | None = None) -> str:
    """``data`` as JSON (non-ASCII text as it is), every control character escaped: the same
    JSON value, which a terminal shows without obeying."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, default=str)
    if text.isascii():  # no C1 or bidi character: the export's every line, at no scan's cost
        return text
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
