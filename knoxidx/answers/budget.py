"""The token budgets a context answer may be asked for: the library's bound, which the CLI,
HTTP and MCP take as they are (a module of its own, so that a face's start-up reads them
without importing the context builder's search stack)."""

from __future__ import annotations

MIN_TOKENS = 64
MAX_TOKENS = 200_000
DEFAULT_TOKENS = 8000
