"""Secrets found by where they stand rather than by their own shape: the password of a
connection string or of Go's MySQL DSN, an Azure key, ``Authorization: Basic``/``Bearer``
credentials, an unquoted value on a configuration line, and a shape split over adjacent
string literals. Part of :func:`knoxidx.retrieval.secrets.find_secrets`.

Each detector starts from a literal it needs (``password``, ``authorization``, ``@tcp(``...),
found with ``str.find``, and matches a bounded pattern there: a text without the literal
costs one scan, and a hostile one costs linear time.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterator, Sequence

from knoxidx.retrieval.masking_words import (
    PLACEHOLDER,
    Finding,
    documented,
    named,
    plausible_password,
    random_looking,
    secret_name,
)

Shape = tuple[str, tuple[str, ...], re.Pattern[str]]


def lowered_ascii(text: str) -> str:
    """``text`` in lower case, position for position (``str.lower`` lengthens a few
    characters, such as "İ")."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _positions(haystack: str, needle: str) -> Iterator[int]:
    at = haystack.find(needle)
    while at >= 0:
        yield at
        at = haystack.find(needle, at + 1)


def find_in_context(text: str, lowered: str) -> Iterator[Finding]:
    """Every finding of this module in ``text`` (``lowered``: it in lower case); each needs
    one of ``CONTEXT_TRIGGERS`` in ``lowered``."""
    if "password" in lowered or "pwd" in lowered:
        yield from _connection_passwords(text, lowered)
    yield from _dsn_passwords(text)
    yield from _azure_keys(text)
    if "basic" in lowered or "auth" in lowered:
        yield from _basic_credentials(text, lowered)
    if "authorization" in lowered:
        yield from _bearer_tokens(text, lowered)
    yield from _bare_assignments(text, lowered)


# ---- connection strings ----------------------------------------------------------------------

# After `password`/`pwd` (the key of an ADO.NET, ODBC or JDBC string): `=` and the value, bare
# or ODBC's `{...}` (which may hold `;`), and what ends it.
_CONN_VALUE = re.compile(
    r"[ \t]*=[ \t]*(?P<value>\{[^{}\n]{1,128}\}|[^;\"'`\s{}]{1,128})(?P<end>[;\"'`\s]|\Z)")
# C#'s {config.Password}, String.Format's {3}
_INTERPOLATION = re.compile(r"\{[\w$.:]*(?:\(\))?\}")
_KEY_LEAD = re.compile(r"[ \t]*(?P<lead>[;?&\"'`])\Z")


def _connection_passwords(text: str, lowered: str) -> Iterator[Finding]:
    """``Password=...;`` / ``Pwd=...;``: a key after ``;`` (or after a JDBC URL's ``?`` or
    ``&``), or at the start of a quoted string and then ended by ``;``."""
    for key in ("password", "pwd"):
        for at in _positions(lowered, key):
            lead = _KEY_LEAD.search(text, max(0, at - 8), at)
            match = _CONN_VALUE.match(text, at + len(key)) if lead else None
            if lead is None or match is None:
                continue
            value = match["value"]
            if lead["lead"] in "\"'`" and match["end"] != ";":
                continue  # `"password=..."` alone is no connection string
            if lead["lead"] in "?&":  # a URL's query: the next parameter ends it
                value = value.partition("&")[0]
            if not value or _INTERPOLATION.fullmatch(value) or PLACEHOLDER.match(value) or \
                    not plausible_password(value.strip("{}")):
                continue
            start = match.start("value")
            yield Finding("connection-password", start, start + len(value))


# Go's MySQL driver: user:password@tcp(host:3306)/db, no scheme; read back from the `@`
_DSN_BEFORE = re.compile(r"(?<![\w/:@.-])[\w.-]{1,64}:(?P<value>[^\s/@'\"`:]{3,128})\Z")
_DSN_PROTOCOLS = ("@tcp(", "@unix(", "@udp(")


def _dsn_passwords(text: str) -> Iterator[Finding]:
    for protocol in _DSN_PROTOCOLS:
        for at in _positions(text, protocol):
            match = _DSN_BEFORE.search(text, max(0, at - 200), at)
            if match is not None and plausible_password(match["value"]):
                yield Finding("url-password", match.start("value"), match.end("value"))


# Azure storage / Service Bus / Event Hubs keys (base64), and a SAS token's signature
_AZURE_KEY_VALUE = re.compile(
    r"[ \t]*=[ \t]*(?P<value>[A-Za-z0-9+/]{20,256}={0,2})(?![A-Za-z0-9+/=])")
_AZURE_KEYS = ("AccountKey", "SharedAccessKey", "SharedSecretValue")
_SAS_SIGNATURE = re.compile(r"sig=(?P<value>[A-Za-z0-9%+/=]{20,256})")


def _azure_keys(text: str) -> Iterator[Finding]:
    for key in _AZURE_KEYS:
        for at in _positions(text, key):
            if at and (text[at - 1].isalnum() or text[at - 1] == "_"):
                continue
            match = _AZURE_KEY_VALUE.match(text, at + len(key))
            if match is not None:
                yield Finding("azure-key", match.start("value"), match.end("value"))
    if "sv=" in text:
        for at in _positions(text, "sig="):
            match = _SAS_SIGNATURE.match(text, at)
            if at and text[at - 1] in "?&;" and match is not None:
                yield Finding("azure-sas", match.start("value"), match.end("value"))


# ---- HTTP credentials ------------------------------------------------------------------------

_BASE64_CREDENTIALS = re.compile(r"(?P<value>[A-Za-z0-9+/]{6,1024}={0,2})(?![A-Za-z0-9+/=])")
_AFTER_BASIC = re.compile(r"[ \t]+")
_AFTER_AUTH_KEY = re.compile(r"[\"'][ \t]*:[ \t]*[\"']")


def _basic_credentials(text: str, lowered: str) -> Iterator[Finding]:
    """``Basic <base64 of user:password>``, or a quoted "auth" key holding one (Docker's
    config.json)."""
    starts = []
    for at in _positions(lowered, "basic"):
        gap = _AFTER_BASIC.match(text, at + 5)
        if gap is not None and not (at and (text[at - 1].isalnum() or text[at - 1] in "_-")):
            starts.append(gap.end())
    for quote in "\"'":
        for at in _positions(text, quote + "auth"):
            gap = _AFTER_AUTH_KEY.match(text, at + 5)
            if gap is not None and text[at + 5] == quote:
                starts.append(gap.end())
    for start in starts:
        match = _BASE64_CREDENTIALS.match(text, start)
        if match is not None and _decodes_to_credentials(match["value"]):
            yield Finding("basic-auth", match.start("value"), match.end("value"))


def _decodes_to_credentials(value: str) -> bool:
    try:
        plain = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        return False
    user, colon, password = plain.partition(":")
    return bool(colon and password) and plain.isprintable() and \
        plausible_password(password.replace(" ", "_"))


# after `authorization`: the header's separator, the scheme, the token
_BEARER_AFTER = re.compile(
    r"[\"'`]?[ \t]*[:=,][ \t]*[\"'`]?(?i:bearer|token)[ \t]+"
    r"(?P<value>[A-Za-z0-9._~+/-]{8,2048}=*)(?![A-Za-z0-9._~+/=-])")


def _bearer_tokens(text: str, lowered: str) -> Iterator[Finding]:
    """``Authorization: Bearer <token>`` (an HTTP file, curl, a header map, a Set call)."""
    for at in _positions(lowered, "authorization"):
        match = _BEARER_AFTER.match(text, at + len("authorization"))
        if match is not None and random_looking(match["value"]):
            yield Finding("bearer-token", match.start("value"), match.end("value"))


# ---- unquoted values on configuration lines --------------------------------------------------

# A whole line `NAME=value` / `name: value`: `.env`, shell, `.properties`, YAML
_BARE_ASSIGNMENT = re.compile(
    r"[ \t]*(?:export[ \t]+)?(?P<name>[A-Za-z_][\w.-]{0,80})(?:[ \t]*=[ \t]*|[ \t]*:[ \t]+)"
    r"(?P<value>[A-Za-z0-9+/=_.~!@#$%^&*-]{8,256})(?:[ \t]+#[^\n]*)?[ \t]*$")
_SECRET_HINTS = ("pass", "pwd", "secret", "token", "credential", "key")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")


def _bare_assignments(text: str, lowered: str) -> Iterator[Finding]:
    """Only the lines that hold a word a secret's name ends with are read."""
    lines: set[int] = set()
    for hint in _SECRET_HINTS:
        for at in _positions(lowered, hint):
            lines.add(text.rfind("\n", 0, at) + 1)
    for start in sorted(lines):
        end = text.find("\n", start)
        match = _BARE_ASSIGNMENT.match(text, start, end if end >= 0 else len(text))
        if match is None:
            continue
        value = match["value"]
        if _DOTTED.fullmatch(value) or _IDENTIFIER.fullmatch(value) and named(value):
            continue  # code (`password=db_password_v2`, `key: hashlib.sha256`), not a value
        if random_looking(value) and secret_name(match["name"]):
            yield Finding("assigned-secret", match.start("value"), match.end("value"))


# A literal (in lower case) that each detector above starts from: a text holding none of them
# has nothing for this module to find (kept beside the detectors so that a new one adds its own).
CONTEXT_TRIGGERS: tuple[str, ...] = (
    "password", "pwd", "basic", "auth", "authorization", "sv=",
    *_DSN_PROTOCOLS, *(key.lower() for key in _AZURE_KEYS), *_SECRET_HINTS,
)


# ---- shapes split over adjacent string literals ----------------------------------------------

_LITERAL = re.compile(r"([\"'])([^\"'\\\n]{1,256})\1")
# a literal's closing quote, nothing or `+` (and a line break), the next one's opening quote
# (the quote first: the scan skips to quotes, 3x faster than from the character before)
_ADJACENT = re.compile(r"[\"'](?<=[\w+/=-][\"'])[ \t]*(?:\+[ \t]*)?(?:\r?\n[ \t]*(?:\+[ \t]*)?)?"
                       r"[\"'](?=[\w+/=-])")
_MAX_GAP = 200  # characters between two literals of one concatenation
_WINDOW = 600  # characters either side of a junction: longer than any shape


def split_shapes(text: str, shapes: Sequence[Shape]) -> Iterator[Finding]:
    """``shapes`` whose value is split over adjacent literals joined by nothing or ``+``
    (``"AKIA" "Y8W2..."``, ``'ghp_' + '...'``): found in the joined text, each piece
    masked."""
    for lo, hi in _around_junctions(text):
        run: list[re.Match[str]] = []
        for literal in _LITERAL.finditer(text, lo, hi):
            if run:
                gap = text[run[-1].end() : literal.start()]
                if len(gap) > _MAX_GAP or gap.strip() not in ("", "+"):
                    yield from _shapes_across(run, shapes)
                    run = []
            run.append(literal)
        yield from _shapes_across(run, shapes)


def _around_junctions(text: str) -> list[tuple[int, int]]:
    """The whole lines within ``_WINDOW`` characters of a place where two literals meet,
    merged: all a split secret can span, and in most texts nothing."""
    spans: list[tuple[int, int]] = []
    for junction in _ADJACENT.finditer(text):
        lo = text.rfind("\n", 0, max(0, junction.start() - _WINDOW)) + 1
        hi = text.find("\n", min(len(text), junction.end() + _WINDOW))
        hi = len(text) if hi < 0 else hi
        if spans and lo <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(hi, spans[-1][1]))
        else:
            spans.append((lo, hi))
    return spans


def _shapes_across(pieces: list[re.Match[str]], shapes: Sequence[Shape]) -> Iterator[Finding]:
    if len(pieces) < 2:
        return
    joined = "".join(p[2] for p in pieces)
    offsets = []  # where each piece starts in the joined text
    at = 0
    for p in pieces:
        offsets.append(at)
        at += len(p[2])
    for kind, needles, pattern in shapes:
        if not any(needle in joined for needle in needles):
            continue
        for m in pattern.finditer(joined):
            first = bisect.bisect_right(offsets, m.start()) - 1
            last = bisect.bisect_left(offsets, m.end()) - 1
            if last <= first or documented(m[0]):
                continue  # inside one literal: the plain scan finds it
            for n, i in enumerate(range(first, last + 1)):
                piece, start = pieces[i], offsets[i]
                lo = piece.start(2) + max(m.start() - start, 0)
                hi = piece.start(2) + min(m.end() - start, len(piece[2]))
                yield Finding(kind, lo, hi, continues=n > 0)
