"""Mutations of real source files for fuzzing the extractor (``bench/fuzz.py``, and the
hypothesis tests in ``tests/test_fuzz_extract.py``).

A mutation is a list of plain tuples, so hypothesis can draw and shrink them and the runner can
derive them from a seed: the same (seed file, ops) always gives the same bytes, and a finding is
replayed from its numbers alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from knoxidx.languages.registry import LANGUAGES, language_for_path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
LANGUAGE_NAMES = tuple(spec.name for spec in LANGUAGES)
# The corpus directories (``~/.cache/knoxidx-corpus/<dir>``) that hold each language's files.
CORPUS_DIRS = {"python": "python", "typescript": "ts", "tsx": "tsx", "javascript": "js",
               "go": "go", "rust": "rust", "java": "java"}

# What a mutation may insert: brackets that build nesting, quotes and comment markers that
# swallow the rest of a file, keywords that start declarations, and bytes that are not UTF-8
# or are easy to mishandle (NUL, CR, a right-to-left override, a lone continuation byte).
TOKENS: tuple[bytes, ...] = (
    b"(", b")", b"{", b"}", b"[", b"]", b"<", b">", b"\"", b"'", b"`", b"'''", b'"""',
    b"/*", b"*/", b"//", b"#", b"\\", b"\n", b"\r\n", b"\r", b"\t", b"    ", b";", b",",
    b".", b"::", b"->", b"=>", b"?.", b"@", b"$", b"${", b"<div>", b"</div>", b"/>",
    b"def ", b"class ", b"fn ", b"func ", b"function ", b"interface ", b"impl ", b"trait ",
    b"struct ", b"enum ", b"import ", b"from ", b"export ", b"package ", b"return ", b"new ",
    b"this.", b"self.", b"super()", b"async ", b"await ", b"yield ", b"lambda ", b"type ",
    b"var ", b"let ", b"const ", b"static ", b"public ", b"mod ", b"use ", b"extends ",
    b"implements ", b"x", b"Foo", b"0x", b"1e", b"\x00", b"\xff", b"\xc3", b"\x80",
    "\u202e".encode(), "é".encode(), "𝔘".encode(), b"\xef\xbb\xbf",
)
OP_KINDS = ("flip", "truncate", "delete", "insert", "splice", "repeat", "random")
MAX_REPEAT = 12000

Op = tuple[str, int, int, int]  # (kind, position, size, value); read by apply()


def apply(data: bytes, ops: Sequence[Op], donors: Sequence[bytes] = ()) -> bytes:
    """``data`` changed by each op in turn. Positions and sizes are taken modulo what the
    current data allows, so any tuple of numbers is a valid op."""
    buf = bytearray(data)
    for kind, pos, size, value in ops:
        n = len(buf)
        at = pos % (n + 1)
        if kind == "flip" and n:
            buf[at % n] ^= (value % 255) + 1
        elif kind == "truncate":
            del buf[at:]
        elif kind == "delete":
            del buf[at : at + size % 512]
        elif kind == "insert":
            buf[at:at] = TOKENS[value % len(TOKENS)] * (1 + size % 4)
        elif kind == "splice" and donors:
            donor = donors[value % len(donors)]
            start = size % (len(donor) + 1)
            buf[at:at] = donor[start : start + 1 + (value >> 8) % 2048]
        elif kind == "repeat":
            # a short run repeated many times: deep nesting, long lines, long token runs
            piece = bytes(buf[at : at + 1 + value % 8]) or TOKENS[value % len(TOKENS)]
            buf[at:at] = piece * (1 + size % MAX_REPEAT)
        elif kind == "random":
            rng = random.Random(value)
            buf[at : at + size % 64] = rng.randbytes(size % 64)
    return bytes(buf)


def random_ops(rng: random.Random, count: int) -> list[Op]:
    return [(rng.choice(OP_KINDS), rng.randrange(1 << 20), rng.randrange(1 << 16),
             rng.randrange(1 << 24)) for _ in range(count)]


def fixture_files(language: str) -> list[Path]:
    """The fixture files of ``language`` (fixtures/typescript holds the tsx and js ones too)."""
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and _language(p) == language)


def corpus_files(corpus: Path, language: str, limit: int = 400) -> list[Path]:
    """Up to ``limit`` files of ``language`` from the benchmark corpus, spread over it."""
    base = corpus / CORPUS_DIRS[language]
    if not base.is_dir():
        return []
    found = sorted(p for p in base.rglob("*") if p.is_file() and _language(p) == language
                   and p.stat().st_size <= 256 * 1024)
    step = max(1, len(found) // limit)
    return found[::step][:limit]


def _language(path: Path) -> str | None:
    spec = language_for_path(path.name)
    return spec.name if spec else None


def suffix(language: str) -> str:
    return next(spec.extensions[0] for spec in LANGUAGES if spec.name == language)
