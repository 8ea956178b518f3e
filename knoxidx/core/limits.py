"""How long a text argument may be and how numbers are written, on every face: the HTTP API and
the MCP server (:mod:`knoxidx.api.schemas`) and the CLI (:mod:`knoxidx.cli.options`) refuse the
same inputs, in the same words."""

from __future__ import annotations

import re

MAX_QUERY_CHARS = 2000  # a search or context query
MAX_NAME_CHARS = 1000  # a symbol: a name, qualified name or path:line
MAX_TYPE_CHARS = 200  # a type name the --returns / --param-type filters search for
MAX_PATH_CHARS = 4096  # a path, a path filter, a dependency target
MAX_PLACE_CHARS = MAX_PATH_CHARS + 12  # PATH:LINE
MAX_REVISION_CHARS = 200  # a commit, branch or tag
MAX_DEPTH = 10
MAX_K = 100

# ASCII digits only: int() and float() also take '١٠', fullwidth digits and '1_000'
WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
DECIMAL_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(value: str, max_chars: int | None) -> str:
    """Why ``value`` is no text argument ("" if it is one): a surrogate (a JSON "\\ud800", or
    a byte of a command line that is not UTF-8), or more than ``max_chars`` characters."""
    if _SURROGATE.search(value):
        return "holds an unpaired UTF-16 surrogate or a byte that is not UTF-8; send valid Unicode"
    if max_chars is not None and len(value) > max_chars:
        return f"is longer than {max_chars} characters"
    return ""
