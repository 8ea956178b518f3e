"""What a client may be shown of the repository: the egress gate's never-send rules and secret
masking (:mod:`.egress`, :mod:`.secrets`), applied to every read an answer carries out of the
process — ``Index.read_source`` (HTTP ``/source``, MCP ``read_code``), ``Index.search`` (HTTP
``/search``, MCP ``search_code``, CLI ``search``: the snippets) and ``Index.context`` (HTTP
``/context``, MCP ``build_context``, CLI ``context``). The faces call those and nothing else,
so the rules hold for all three.

- A never-send file asked for by path is refused with :class:`NeverSendError` (HTTP 403
  ``never_send``, an MCP tool error, CLI exit 2) naming the rule that refuses it.
- In search and context answers its chunks are withheld; ``withheld`` says how many.
- Likely secrets in what is shown become ``«secret:KIND»`` (lines kept); ``masked`` counts
  them by kind.

The rules are the index's egress settings (``knoxidx.toml``'s ``[egress]`` and the
environment), read for each answer so that an edit applies at once.
"""

from __future__ import annotations

import bisect
import functools
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knoxidx.core.config import NEVER_SEND_ENV, load_settings

# from core, not parse.source: a graph answer's masking must not import discovery (pathspec)
from knoxidx.core.errors import ForbiddenPathError
from knoxidx.retrieval.egress import DEFAULT_NEVER_SEND, EgressPolicy
from knoxidx.retrieval.secrets import MARK, find_secrets, mask_findings

SNIPPET_CUT = "…"
# a function's signature as data on its node (knoxidx.parse.signatures.as_json's keys)
SIGNATURE_DATA_KEYS = ("parameters", "returns", "type_parameters", "decorators")


class NeverSendError(ForbiddenPathError):
    """A never-send file asked for by path (HTTP 403)."""


@dataclass(frozen=True, slots=True)
class MaskedText:
    text: str
    secrets: tuple[tuple[int, str], ...]  # (0-based line, kind) of each secret masked

    def counts(self, first_line: int = 0, last_line: int | None = None) -> Counter[str]:
        """How many secrets of each kind were masked on lines ``first_line``..``last_line``
        (0-based, inclusive; default: all)."""
        return Counter(kind for line, kind in self.secrets
                       if line >= first_line and (last_line is None or line <= last_line))


@dataclass(frozen=True, slots=True)
class Disclosure:
    policy: EgressPolicy

    @classmethod
    def for_root(cls, root: Path | str | None) -> Disclosure:
        """The rules for the repository at ``root`` (None: the environment's alone): the
        default never-send patterns, those its settings add, and whether secrets are
        masked."""
        settings = load_settings(root)
        return cls(EgressPolicy(never_send=(*DEFAULT_NEVER_SEND, *settings.never_send),
                                mask_secrets=settings.mask_secrets))

    # ---- never-send files ------------------------------------------------------------------

    def allows(self, path: str) -> bool:
        return self.policy.allows(path)

    def check(self, path: str) -> None:
        """Refuse ``path`` (repository-relative) if a never-send rule covers it."""
        rule = self.policy.refusing_rule(path)
        if rule is not None:
            raise NeverSendError(
                f"{path!r} matches the never-send rule {rule!r}: its content is not shown to "
                "clients (the rules are the defaults, [egress] never_send and "
                "$KNOXIDX_NEVER_SEND; `knoxidx egress --json` lists them)"
            )

    # ---- secrets ---------------------------------------------------------------------------

    def mask(self, text: str) -> MaskedText:
        """``text`` with likely secrets masked (as it is when masking is off), and where."""
        if not self.policy.mask_secrets or not text:
            return MaskedText(text, ())
        findings = find_secrets(text)
        if not findings:
            return MaskedText(text, ())
        masked, counted = mask_findings(text, findings)
        newlines = _newline_offsets(text)
        return MaskedText(masked, tuple((bisect.bisect_left(newlines, f.start), f.kind)
                                        for f in counted))

    # ---- answers ---------------------------------------------------------------------------

    def source(self, answer: dict[str, Any]) -> dict[str, Any]:
        """A ``read_source`` answer with its text masked and ``masked`` added."""
        shown = self.mask(answer["text"])
        return {**answer, "text": shown.text, "masked": dict(shown.counts())}

    def search_results(self, results: Sequence[dict[str, Any]]) -> tuple[
            list[dict[str, Any]], int, Counter[str]]:
        """The results a client may see (never-send files' withheld), their snippets masked:
        ``(shown, withheld, masked by kind)``."""
        shown: list[dict[str, Any]] = []
        withheld = 0
        masked: Counter[str] = Counter()
        for result in results:
            if not self.allows(result["path"]):
                withheld += 1
                continue
            snippet = self.mask(_whole_tokens(result["snippet"]))
            masked.update(snippet.counts())
            shown.append({**result, "snippet": snippet.text})
        return shown, withheld, masked


def declaration_shown(node: dict[str, Any]) -> dict[str, Any]:
    """A definition in a graph answer (``symbols``, ``callers``' symbol, ...) as a client may
    see it: the signature, doc line and signature data (parameters, return type, type
    parameters, decorators) of one in a never-send file left out (a constant's signature is
    its value), likely secrets masked in the others. A graph answer does not know its
    repository's root, so the never-send rules are the defaults and the environment's."""
    signature, doc = node.get("signature") or "", node.get("doc") or ""
    has_data = any(key in node for key in SIGNATURE_DATA_KEYS)
    if not signature and not doc and not has_data:
        return node
    disclosure = _environment_disclosure(os.environ.get(NEVER_SEND_ENV, ""))
    if not disclosure.allows(node.get("path") or ""):
        hidden = {k: v for k, v in node.items() if k not in SIGNATURE_DATA_KEYS}
        return {**hidden, "signature": "", "doc": ""}
    shown = {**node, "signature": disclosure.mask(signature).text,
             "doc": disclosure.mask(doc).text}
    if disclosure.policy.mask_secrets:
        in_signature = _secrets_in(signature)
        shown["signature"] = _masked_again(shown["signature"], in_signature)
        shown["doc"] = _masked_again(shown["doc"], in_signature)
        if has_data:
            shown.update(_signature_data_shown(node, disclosure, in_signature))
    return shown


def _secrets_in(signature: str) -> list[tuple[str, str]]:
    """The (text, kind) of each secret found in ``signature``, longest first, then by text
    and kind: one order in every process (a set's depends on the hash seed), so that the
    same graph is masked, and exported, the same."""
    return sorted({(signature[f.start:f.end], f.kind) for f in find_secrets(signature)},
                  key=lambda found: (-len(found[0]), found))


def _masked_again(text: str, secrets: list[tuple[str, str]]) -> str:
    """``text`` with each of ``secrets`` masked wherever it recurs: a value found beside a
    secret's name (``api_key="..."``) is the same secret where no name says so."""
    for value, kind in secrets:
        text = text.replace(value, MARK.format(kind=kind))
    return text


def _signature_data_shown(node: dict[str, Any], disclosure: Disclosure,
                          in_signature: list[tuple[str, str]]) -> dict[str, Any]:
    """A node's signature data with what masking finds masked. A default value is masked with
    its parameter's name before it (``password="..."`` is a secret where ``"..."`` alone is
    not), and whatever was masked in the signature (``in_signature``) is masked wherever it
    recurs here (the signature may hold the context that a piece of it lacks)."""

    def shown(text: str | None, named: str | None = None) -> str | None:
        if not text:
            return text
        prefix = f"{named}=" if named else ""
        masked = disclosure.mask(prefix + text).text
        masked = masked[len(prefix):] if masked.startswith(prefix) else \
            disclosure.mask(text).text
        return _masked_again(masked, in_signature)

    out: dict[str, Any] = {}
    if "parameters" in node:
        out["parameters"] = [
            {**p, "name": shown(p.get("name")), "type": shown(p.get("type")),
             "default": shown(p.get("default"), p.get("name"))}
            for p in node["parameters"]]
    if "returns" in node:
        out["returns"] = shown(node["returns"])
    for key in ("type_parameters", "decorators"):
        if key in node:
            out[key] = [shown(item) for item in node[key]]
    return out


@functools.lru_cache(maxsize=4)
def _environment_disclosure(never_send: str) -> Disclosure:
    return Disclosure.for_root(None)  # `never_send`: the cache's key, read again inside


def _newline_offsets(text: str) -> list[int]:
    offsets = []
    at = text.find("\n")
    while at >= 0:
        offsets.append(at)
        at = text.find("\n", at + 1)
    return offsets


def _whole_tokens(snippet: str, cut_at: int = 600) -> str:
    """A snippet cut at ``cut_at`` characters (search's limit) ends inside a token, which
    could be the first half of a secret its pattern no longer recognises: that token is
    dropped."""
    if len(snippet) < cut_at:
        return snippet
    head = snippet.rstrip()
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return (head[:cut + 1] if cut >= 0 else "") + SNIPPET_CUT
