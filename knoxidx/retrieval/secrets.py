"""Likely secrets inside code, found and masked before text is sent to a remote service.

Two families of detectors:

- **Shapes** that are secrets wherever they appear: PEM private keys, AWS access key ids,
  GitHub/GitLab/Slack/OpenAI/Anthropic/Stripe/Google/npm/PyPI/Hugging Face tokens, JWTs,
  passwords inside URLs (``scheme://user:pass@host``, Go's ``user:pass@tcp(host)``), the
  ``Password=``/``Pwd=`` of ADO.NET, ODBC and JDBC connection strings, Azure ``AccountKey=``
  and SAS ``sig=``, ``Authorization: Basic`` credentials (base64 of ``user:password``) and
  ``Authorization: Bearer`` tokens. A shape split over adjacent string literals
  (``"AKIA" "Y8W2..."``, ``"AKIA" + "..."``) is found in their joined text.
- **Assignments** of a quoted value to a name whose last word says secret (``password``,
  ``api_key``, ``clientSecret``, ``GITHUB_TOKEN`` …), when the value looks random: no spaces,
  8+ characters, not a word or identifier, not a placeholder (``<token>``, ``${PASSWORD}``,
  ``changeme``), not a path or URL, and at least 3 bits of entropy per character. Random-looking
  strings assigned to other names (hashes, UUIDs, base64 test data) are left alone: that is
  what keeps false positives low (measured in ``bench/egress_masking.py``, and on a corpus of
  secret shapes and look-alikes in ``bench/secrets_corpus.py``). Unquoted values count on
  configuration-shaped lines only (``DB_PASSWORD=...``, ``password: ...``), where code
  (calls, dotted names, identifiers) is not taken for a secret.

Every pattern is bounded (no nested unbounded repetition), so a hostile line costs linear time.
Every detector starts from a literal (a shape's prefix, ``password``, ``://``, a secret name's
last word...): a text holding none of them (most code) costs one scan (``may_hold_secret``).

Only the value is replaced, by ``«secret:KIND»``; newlines inside a masked span are kept, so the
masked text has the same lines as the original.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator

from knoxidx.retrieval.masking_contexts import (
    CONTEXT_TRIGGERS,
    find_in_context,
    lowered_ascii,
    split_shapes,
)
from knoxidx.retrieval.masking_words import (  # noqa: F401  (entropy: re-exported)
    MIN_ENTROPY,
    SECRET_NAME_WORDS,
    Finding,
    documented,
    entropy,
    plausible_password,
    random_looking,
    secret_name,
    wordlike,
)

MARK = "«secret:{kind}»"

# ---- shapes ----------------------------------------------------------------------------------

# (kind, literals one of which a match contains, pattern). The literals are checked first with
# `in`, which is far faster than a regex scan: most texts contain none of them.
_SHAPE_TABLE: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("aws-access-key",
     ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA",
      "ASCA"),
     (r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)"
      r"[A-Z0-9]{16}(?![A-Z0-9])")),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,})(?![\w-])"),
    ("gitlab-token", ("glpat-",), r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}(?![\w-])"),
    ("slack-token", ("xox", "xapp-"),
     (r"(?<![\w-])(?:xox[abposre]-(?:\d+-)+[0-9A-Za-z]{8,}|"
      r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{16,})(?![\w-])")),
    ("slack-webhook", ("hooks.slack.com/",),
     r"(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"),
    ("anthropic-key", ("sk-ant-",),
     r"(?<![\w-])sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{40,}(?![\w-])"),
    ("openai-key", ("sk-",),
     (r"(?<![\w-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|"
      r"[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48})(?![\w-])")),
    ("stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"),
     (r"(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}(?![\w-])"
      r"|(?<![\w-])whsec_[A-Za-z0-9]{32,}(?![\w-])")),
    ("google-api-key", ("AIza",), r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"),
    ("google-oauth", ("GOCSPX-", "ya29."),
     r"(?<![\w-])(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{40,})(?![\w-])"),
    ("npm-token", ("npm_",), r"(?<![\w-])npm_[A-Za-z0-9]{36}(?![\w-])"),
    ("pypi-token", ("pypi-",), r"(?<![\w-])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}(?![\w-])"),
    ("huggingface-token", ("hf_",), r"(?<![\w-])hf_[A-Za-z0-9]{34,}(?![\w-])"),
    ("sendgrid-key", ("SG.",), r"(?<![\w-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])"),
    ("jwt", ("eyJ",), r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)
_SHAPES: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (kind, needles, re.compile(pattern)) for kind, needles, pattern in _SHAPE_TABLE
)

# scheme://user:password@host (the user may be empty: redis://:pw@host): the password only
# (starts with a literal: a fast scan)
_URL_PASSWORD = re.compile(r"://[^\s/:@'\"`]{0,64}:(?P<value>[^\s/@'\"`]{3,128})@")
# ---- PEM private keys ------------------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----")
# What may sit between the markers: base64, whitespace, escaped newlines, quotes and `+` of a
# literal split over lines, and the PEM headers of an encrypted key.
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=\\\s\"'`,]|Proc-Type:[^\n]*|DEK-Info:[^\n]*)*")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{16,}")
_BASE64_LINE_RUN = re.compile(r"[A-Za-z0-9+/=]{40,}")


def _private_keys(text: str) -> Iterator[Finding]:
    """The base64 runs of each private key's body (a key cut off by the end of the text, or
    whose BEGIN line is in an earlier chunk, included)."""
    covered_to = 0
    for begin in _PEM_BEGIN.finditer(text):
        body = _PEM_BODY.match(text, begin.end())
        assert body is not None  # the pattern matches the empty string
        runs = [m for m in _BASE64_RUN.finditer(text, body.start(), body.end())]
        if sum(m.end() - m.start() for m in runs) >= 64:
            for run in runs:
                yield Finding("private-key", run.start(), run.end())
        covered_to = body.end()
    for end in _PEM_END.finditer(text):
        if end.start() < covered_to:
            continue
        # an END without its BEGIN: mask the base64 lines right above it
        lines_start = text.rfind("\n", 0, end.start()) + 1
        cursor = lines_start
        while cursor > 0:
            prev = text.rfind("\n", 0, cursor - 1) + 1
            line_runs = list(_BASE64_LINE_RUN.finditer(text, prev, cursor))
            if not line_runs:
                break
            for run in line_runs:
                yield Finding("private-key", run.start(), run.end())
            cursor = prev
        for run in _BASE64_LINE_RUN.finditer(text, lines_start, end.start()):
            yield Finding("private-key", run.start(), run.end())


# ---- assignments to secret-named variables ---------------------------------------------------

# Found from the value backwards: quoted runs without spaces first (a fast scan), then, only
# for the rare random-looking ones, the name and operator just before the opening quote.
_QUOTED = re.compile(r"([\"'`])([^\"'`\s\\]{8,256})\1")
_NAME_BEFORE = re.compile(
    r"(?<![\w$.])(?P<name>[A-Za-z_$][\w$]*(?:[.-][A-Za-z_$][\w$]*)*)[\"'`]?"
    r"(?:\s*:\s*[&\w\[\]<>, .']{1,40}?)?"  # a type annotation (Python, Rust, TS)
    r"\s*(?::=|=>|\?\?=|\|\|=|=|:)\s*(?:[rbuRBU]{1,2})?\Z"
)
_LOOK_BACK = 120
# a call's quoted first argument naming the second: define('DB_PASSWORD', '...'),
# os.getenv("API_TOKEN", "..."), config.set("password", "...")
_QUOTED_NAME_COMMA = re.compile(
    r"\([ \t]*([\"'])(?P<name>[A-Za-z_][\w.-]{0,80})\1[ \t]*,[ \t]*\Z")


def _assignments(text: str) -> Iterator[Finding]:
    for match in _QUOTED.finditer(text):
        if not random_looking(match[2]):
            continue
        before = text[max(0, match.start() - _LOOK_BACK) : match.start()]
        name = _NAME_BEFORE.search(before) or _QUOTED_NAME_COMMA.search(before)
        if name is not None and secret_name(name["name"]):
            yield Finding("assigned-secret", match.start(2), match.end(2))


# ---- finding and masking ---------------------------------------------------------------------

def _literal_alternation(literals: set[str]) -> str:
    """A pattern matching any of ``literals``, grouped by first character: ``re`` tries each
    branch at each position, so 15 groups scan 4x faster than 50 plain branches."""
    # a literal holding another is redundant: the shorter one matches wherever it does
    kept = sorted(w for w in literals if not any(o != w and o in w for o in literals))
    branches = []
    for first, group in itertools.groupby(kept, key=lambda w: w[0]):
        rests = [re.escape(w[1:]) for w in group]
        branches.append(re.escape(first) + (f"(?:{'|'.join(rests)})" if len(rests) > 1
                                            else rests[0]))
    return "|".join(branches)


# The literals every detector needs (in any case): a private key's marker, a shape's needles,
# a URL's `://`, the context detectors' keys, the last word of a secret name.
_TRIGGERS = re.compile(_literal_alternation(
    {"private key", "://", *CONTEXT_TRIGGERS, *SECRET_NAME_WORDS}
    | {needle.lower() for _, needles, _ in _SHAPES for needle in needles}))


def may_hold_secret(text: str) -> bool:
    """Whether ``text`` holds a literal some detector needs: one scan that spares the dozens
    of detectors most code (a signature, a snippet) would run for nothing."""
    return _TRIGGERS.search(text.lower()) is not None


def find_secrets(text: str) -> list[Finding]:
    """Likely secrets in ``text``, by position, without overlaps (the earlier and longer
    finding wins)."""
    return _detect(text) if may_hold_secret(text) else []


def _detect(text: str) -> list[Finding]:
    """``find_secrets`` without its prefilter (every detector run)."""
    found: list[Finding] = list(_private_keys(text)) if "PRIVATE KEY" in text else []
    shaped = False
    for kind, needles, pattern in _SHAPES:
        if any(needle in text for needle in needles):
            shaped = True
            found.extend(Finding(kind, m.start(), m.end()) for m in pattern.finditer(text)
                         if not documented(m[0]))
    if shaped:
        found.extend(split_shapes(text, _SHAPES))
    for m in _URL_PASSWORD.finditer(text):
        # `scott:tiger@`, `user:pass@`: a short plain word in a URL is a documentation example
        if plausible_password(m["value"]):
            found.append(Finding("url-password", m.start("value"), m.end("value")))
    found.extend(find_in_context(text, lowered_ascii(text)))
    found.extend(_assignments(text))
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Finding] = []
    for finding in found:
        if out and finding.start < out[-1].end:
            continue
        out.append(finding)
    return out


def mask_secrets(text: str) -> tuple[str, Counter[str]]:
    """``text`` with each likely secret replaced by ``«secret:KIND»`` (its newlines kept), and
    how many of each kind were masked. A private key counts once however many runs it has."""
    findings = find_secrets(text)
    if not findings:
        return text, Counter()
    masked, counted = mask_findings(text, findings)
    return masked, Counter(f.kind for f in counted)


def mask_findings(text: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    """``text`` with ``findings`` (``find_secrets``'s) masked, and the findings that count as
    one secret each: the first run of a private key, the first piece of a split one."""
    pieces: list[str] = []
    counted: list[Finding] = []
    cursor = 0
    previous: Finding | None = None
    for f in findings:
        pieces.append(text[cursor : f.start])
        pieces.append(MARK.format(kind=f.kind) + "\n" * text.count("\n", f.start, f.end))
        cursor = f.end
        same_key = previous is not None and f.kind == previous.kind and (
            f.continues
            or f.kind == "private-key" and not _PEM_BEGIN.search(text, previous.end, f.start)
        )
        if not same_key:
            counted.append(f)
        previous = f
    pieces.append(text[cursor:])
    return "".join(pieces), counted
