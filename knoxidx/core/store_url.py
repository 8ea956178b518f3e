"""Where an index lives: ``--store URL`` or ``KNOXIDX_STORE``.

No URL (or a ``sqlite:`` one) means the local default, ``<repo>/.knoxidx/index.db``; a
``postgresql://`` (or ``postgres://``) URL means the shared PostgreSQL store, where each
repository is a ``repo`` id inside one database (the directory name unless ``--repo`` says
otherwise).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from knoxidx.core.errors import KnoxidxError

STORE_ENV = "KNOXIDX_STORE"
REPO_ENV = "KNOXIDX_REPO"
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class StoreConfigError(KnoxidxError):
    """A store URL or repository id that knoxidx cannot use."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class StoreTarget:
    kind: str  # "sqlite" or "postgresql"
    url: str  # the PostgreSQL connection string ("" for sqlite)

    @property
    def is_postgres(self) -> bool:
        return self.kind == "postgresql"


def parse_store(url: str | None) -> StoreTarget:
    """``url`` from ``--store``; falls back to ``KNOXIDX_STORE``; neither: the local SQLite."""
    value = (url if url is not None else os.environ.get(STORE_ENV, "")).strip()
    if not value or value in ("sqlite", "sqlite:", "local"):
        return StoreTarget("sqlite", "")
    scheme = value.split(":", 1)[0].lower()
    if scheme in ("postgresql", "postgres"):
        return StoreTarget("postgresql", value)
    if "=" in value and "://" not in value:  # a libpq key=value string: "host=db dbname=kx"
        return StoreTarget("postgresql", value)
    raise StoreConfigError(
        f"unknown store {redact(value)!r}: use postgresql://user@host/db (or leave "
        f"{STORE_ENV} unset for the local .knoxidx index)"
    )


def repo_id(explicit: str | None, root: Path | None) -> str:
    """The repository id: ``--repo``, else ``KNOXIDX_REPO``, else the directory's name."""
    value = explicit or os.environ.get(REPO_ENV) or (root.resolve().name if root else "")
    if not value:
        raise StoreConfigError("no repository id: pass --repo NAME")
    if not _REPO_ID.match(value):
        raise StoreConfigError(
            f"bad repository id {value!r}: letters, digits, '.', '_' and '-' only (128 at most)"
        )
    return value


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", re.sub(r"password=\S+", "password=***", url))
