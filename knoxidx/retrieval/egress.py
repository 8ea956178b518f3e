"""What may leave the machine, and the record of what did.

Every text a remote service receives (chunks to embed, a query to embed, documents to rerank)
passes through :meth:`Egress.outgoing` just before the request is made:

- a text from a file matching a **never-send** pattern is refused (:class:`EgressBlockedError`).
  Callers filter such chunks out first (they stay lexical-only, see ``pipeline.embed_pending``
  and ``search.HybridSearch``); the check here is the backstop that makes a missed filter a
  loud bug instead of a leak;
- likely secrets are **masked** (``secrets.mask_secrets``) unless ``mask_secrets`` is off;
- the request is written to the **ledger** (``ledger.EgressLedger``) *before* it is sent, so a
  crash can over-count a request but never hide one. If the ledger cannot be written, nothing
  is sent.

Never-send patterns use ``.gitignore`` syntax, matched against the repository-relative path:
``*.pem`` matches at any depth, a pattern matching a directory covers everything under it, and
``!pattern`` re-allows what an earlier pattern refused; case is ignored (``*secret*`` also
refuses ``AppSecrets.java``).
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.core.config import offline_from_env  # noqa: F401  (re-exported for the Voyage clients)
from knoxidx.parse.ignore_regex import ignore_spec
from knoxidx.retrieval.errors import RetrievalError, ServiceError
from knoxidx.retrieval.secrets import mask_secrets

if TYPE_CHECKING:
    from knoxidx.graph.protocol import IndexedGraph

log = logging.getLogger(__name__)

LEDGER_FILE = "egress.jsonl"

# Files that hold credentials by name. Mostly not source code (and so never chunked), but a
# `secrets.py`, `credentials.ts` or a key embedded in a source tree is.
DEFAULT_NEVER_SEND: tuple[str, ...] = (
    ".env*", "*.env",
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.asc", "*.gpg",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    "*secret*",
    "credentials*", "*credentials.*", ".aws/credentials", ".aws/config",
    ".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".htpasswd", ".pgpass",
    ".docker/config.json", "*.tfstate", "*.tfstate.*", "*.tfvars",
    "service-account*.json", "*-sa-key.json",
)



class EgressBlockedError(RetrievalError):
    """Text from a never-send file reached a remote call: refused (a caller forgot to filter)."""


@dataclass(frozen=True, slots=True)
class EgressPolicy:
    """Which files may be sent, and whether secrets are masked in what is."""

    never_send: tuple[str, ...] = DEFAULT_NEVER_SEND
    mask_secrets: bool = True
    _spec: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        spec = ignore_spec([p.lower() for p in self.never_send])  # a repository's own too
        object.__setattr__(self, "_spec", spec)

    def allows(self, path: str) -> bool:
        """Whether chunks of the repository-relative ``path`` may be sent."""
        return not self._spec.match_file(path.replace(os.sep, "/").lstrip("/").lower())

    def refused(self, paths: Iterable[str]) -> list[str]:
        return sorted({p for p in paths if p and not self.allows(p)})

    def refusing_rule(self, path: str) -> str | None:
        """The pattern that refuses ``path`` (the last that matches decides), or None."""
        result = self._spec.check_file(path.replace(os.sep, "/").lstrip("/").lower())
        if not result.include:
            return None
        return self.never_send[result.index] if result.index is not None else "?"


@dataclass(frozen=True, slots=True)
class Outgoing:
    """The texts of one request as they will be sent, and what the ledger records of it."""

    texts: list[str]
    paths: list[str]  # the source file of each text ("" for a query)
    masked: Counter[str]

    @property
    def bytes(self) -> int:
        return sum(len(t.encode("utf-8", errors="surrogatepass")) for t in self.texts)


class Egress:
    """The gate every remote request goes through (one per remote client)."""

    def __init__(self, policy: EgressPolicy | None = None, ledger: Any = None) -> None:
        self.policy = policy or EgressPolicy()
        self.ledger = ledger  # an EgressLedger, or None: not recorded (tests, library use)

    def outgoing(self, texts: Sequence[str], paths: Sequence[str] | None = None) -> Outgoing:
        """Check and mask ``texts`` (``paths``: each text's file, when it comes from one)."""
        paths = list(paths) if paths is not None else [""] * len(texts)
        if len(paths) != len(texts):
            raise ValueError("one path per text")
        refused = self.policy.refused(paths)
        if refused:
            raise EgressBlockedError(
                f"refusing to send {len(refused)} never-send file(s) to a remote service: "
                f"{', '.join(refused[:3])}"
            )
        if not self.policy.mask_secrets:
            return Outgoing(list(texts), paths, Counter())
        masked: Counter[str] = Counter()
        out = []
        for text in texts:
            clean, counts = mask_secrets(text)
            masked.update(counts)
            out.append(clean)
        return Outgoing(out, paths, masked)

    def record(self, service: str, endpoint: str, model: str, outgoing: Outgoing, *,
               chunks: int) -> None:
        """Write one request to the ledger before it is sent; if that fails, the request must
        not be made (raised as a non-retryable :class:`ServiceError`)."""
        if self.ledger is None:
            return
        try:
            self.ledger.append(
                service=service, endpoint=endpoint, model=model, texts=len(outgoing.texts),
                chunks=chunks, bytes=outgoing.bytes,
                files=sorted({p for p in outgoing.paths if p}), masked=dict(outgoing.masked),
            )
        except OSError as exc:
            raise ServiceError(
                f"cannot record the request in {self.ledger.path} ({exc.strerror or exc}); "
                "nothing was sent",
                retryable=False,
            ) from exc


def ledger_path(index_dir: Path) -> Path:
    return index_dir / LEDGER_FILE


def index_services(index: IndexedGraph) -> tuple[dict[str, Any], Egress]:
    """For an open index: the embedder/reranker settings (the user's and the repository's
    ``knoxidx.toml``, the environment) and the gate its remote calls go through, recording to ``.knoxidx/egress.jsonl``."""
    from knoxidx.core.config import load_settings

    settings = load_settings(index.root)
    if hasattr(index.store, "url"):  # PostgreSQL: the ledger's folder is a local cache one
        index.store.path.parent.mkdir(parents=True, exist_ok=True)
    gate = egress_for(index.store.path.parent, never_send=settings.never_send,
                      mask=settings.mask_secrets)
    return settings.embedder_config(), gate


def egress_for(index_dir: Path | None, *, never_send: Sequence[str] = (),
               mask: bool = True) -> Egress:
    """The gate for an index (its ledger in ``index_dir``), with ``never_send`` extending the
    defaults."""
    from knoxidx.retrieval.ledger import EgressLedger

    policy = EgressPolicy(never_send=(*DEFAULT_NEVER_SEND, *never_send), mask_secrets=mask)
    ledger = EgressLedger(ledger_path(index_dir)) if index_dir is not None else None
    return Egress(policy, ledger)


# ---- reports -------------------------------------------------------------------------------


def egress_report(index: IndexedGraph, days: int = 30) -> dict[str, Any]:
    """What left the machine for this index, by UTC day over the last ``days`` days (from the
    ledger), the settings that govern it, and the chunks withheld as never-send."""
    from knoxidx.core.config import load_settings
    from knoxidx.retrieval.ledger import EgressLedger
    from knoxidx.retrieval.store import ChunkStore
    from knoxidx.retrieval.store_schema import has_schema

    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        from knoxidx.retrieval.errors import SearchInputError

        raise SearchInputError(f"days must be a whole number of 1 or more, not {days!r}")
    settings = load_settings(index.root)
    path = ledger_path(index.store.path.parent)
    withheld, withheld_files = 0, list[str]()
    if has_schema(index.store.conn):
        withheld, withheld_files = ChunkStore(index.store.conn).withheld()
    return {
        "root": str(index.root),
        "ledger": str(path),
        "offline": settings.offline,
        "offline_because": settings.offline_because,
        "embedder": "local" if settings.offline else settings.embedder,
        "mask_secrets": settings.mask_secrets,
        "never_send": [*DEFAULT_NEVER_SEND, *settings.never_send],
        "config": settings.source,
        "user_config": settings.user_source,
        "withheld": {"chunks": withheld, "files": withheld_files},
        **EgressLedger(path).summary(days),
    }


def egress_status(index: IndexedGraph) -> dict[str, Any]:
    """The short form for ``/status`` and MCP ``index_status``: today and the last 30 days."""
    from knoxidx.core.config import ConfigError

    try:
        report = egress_report(index, 30)
    except (ConfigError, RetrievalError) as exc:  # /status must answer even so
        return {"error": str(exc)}
    today = report["days"][0] if report["days"] and report["days"][0]["day"] == _utc_today() \
        else None
    keys = ("requests", "chunks", "bytes", "files")
    return {
        "offline": report["offline"],
        "embedder": report["embedder"],
        "today": {k: today[k] if today else 0 for k in keys},
        "last_30_days": {k: report["total"][k] for k in keys},
        "withheld_chunks": report["withheld"]["chunks"],
        "ledger": report["ledger"],
    }


def _utc_today() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).date().isoformat()
