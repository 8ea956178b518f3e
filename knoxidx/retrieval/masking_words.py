"""What secret masking judges a name or a value by: whether a name says it holds a secret,
whether a value looks generated rather than written (a word, an identifier, a path, a
placeholder). Shared by the detectors of :mod:`.secrets` and :mod:`.masking_contexts`."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

MIN_ENTROPY = 3.0  # bits per character


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int  # span of the value in the text
    end: int
    continues: bool = False  # the next piece of a secret split over string literals


_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "pwd", "secret", "secrets", "token", "credential",
    "credentials", "apikey",
})
_KEY_QUALIFIERS = frozenset({
    "api", "secret", "private", "access", "signing", "encryption", "master", "auth", "client",
    "app", "license", "session", "hmac",
})
_PASS_QUALIFIERS = frozenset({"db", "user", "admin", "root", "smtp", "mail", "ftp", "proxy"})
# a name ``secret_name`` accepts holds one of these (in lower case)
SECRET_NAME_WORDS: tuple[str, ...] = (*sorted(_SECRET_WORDS), "key", "pass")
PLACEHOLDER = re.compile(
    r"(?i)^(?:x+|\*+|\.+|-+|#+|0+|<[^>]*>|\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{[^}]*\}\}|"
    r"%\([^)]*\)s|%s|\{\w*\}|changeme|change_me|password\d*|secret\d*|token|example\w*|"
    r"dummy\w*|fake\w*|test\w*|sample\w*|your[_-]?\w+|placeholder\w*|redacted|todo|fixme|none|"
    r"null|undefined|true|false)$"
)
_WORDLIKE = re.compile(
    r"^(?:[a-z]+(?:[_.:-][a-z]+)*|[A-Z]+(?:[_.:-][A-Z]+)*|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|"
    r"[A-Za-z]+(?:[-_.:][A-Za-z]+)+)$"
)
_DIGITS = re.compile(r"[0-9]+")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_FILE_SUFFIX = re.compile(r"\.(?:pem|key|crt|json|ya?ml|txt|env|p12|pfx|cfg|ini|toml)$",
                          re.IGNORECASE)


def secret_name(name: str) -> bool:
    """Whether a variable, key or field called ``name`` holds a secret by its last word(s):
    ``db_password``, ``apiKey``, ``AWS_SECRET_ACCESS_KEY``, ``clientSecret``, ``GITHUB_TOKEN``;
    not ``tokenizer``, ``secret_name``, ``TOKEN_URL``, ``cache_key``."""
    last = name.rsplit(".", 1)[-1].replace("-", "_")
    parts = [p.lower() for piece in last.split("_") for p in _PART.findall(piece)]
    if not parts:
        return False
    word = parts[-1]
    before = parts[-2] if len(parts) > 1 else ""
    if word in _SECRET_WORDS or before + word in ("apikey", "privatekey", "secretkey"):
        return True
    if word == "key" and before in _KEY_QUALIFIERS:
        return True
    return word == "pass" and before in _PASS_QUALIFIERS


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def wordlike(value: str) -> bool:
    """Words joined by ``_ - . :`` or camel case (``_auth_user_id``, ``X-Auth-Token``)."""
    return bool(_WORDLIKE.match(value.strip("_-.:")))


def named(identifier: str) -> bool:
    """Words in snake or camel case with a number or two (``new_password_v2``,
    ``sha256Digest``), as a name is; a generated value mixes cases at random
    (``hgfjmQYsekNv``) or strews digits through (``k3j9x8q2``)."""
    if len(_DIGITS.findall(identifier)) > 2:
        return False
    letters = _DIGITS.sub("", identifier)
    parts = [p for piece in letters.split("_") for p in _PART.findall(piece)]
    words = [p for p in parts if len(p) > 1]
    # camel case with acronyms (DSAPrivateKey) has no one-letter part; random case has many
    if not wordlike(letters) and len(words) < len(parts):
        return False
    # most words of a name have a vowel; abbreviations (db, pwd, ctx) are the few that do not
    silent = sum(1 for w in words if not _VOWEL.search(w))
    return silent <= 1 or 3 * silent <= len(words)


def random_looking(value: str) -> bool:
    """A value that could be a credential rather than a word, name, path or template."""
    if PLACEHOLDER.match(value) or wordlike(value):
        return False
    if "://" in value or value.startswith(("./", "../", "~/")):
        return False
    if value.startswith("/") and named(re.sub(r"[/.-]", "_", value)):
        return False  # a path, not base64 that begins with "/"
    if _FILE_SUFFIX.search(value) or documented(value):
        return False
    return entropy(value) >= MIN_ENTROPY


def plausible_password(value: str) -> bool:
    """Not a placeholder, and not a short plain word (``myPassword``, ``tiger``: the
    examples of documentation)."""
    return not PLACEHOLDER.match(value) and not (wordlike(value) and len(value) < 12) \
        and not documented(value)


def documented(value: str) -> bool:
    """A vendor's documented example (AWS's ``AKIAIOSFODNN7EXAMPLE`` and
    ``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``), not a credential."""
    return "example" in value.lower()
