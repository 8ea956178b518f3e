"""Settings: an optional ``knoxidx.toml`` (or ``.knoxidx.toml``) at the repository root, merged
with the environment. Every key is optional::

    embedder = "local"        # local (default) | voyage;  $KNOXIDX_EMBEDDER overrides
    reranker = "none"         # voyage | none;  default: voyage with the voyage embedder
    offline = false           # true: no network call at all (also $KNOXIDX_OFFLINE=1, --offline)

    [voyage]
    model = "voyage-code-3"
    dimension = 1024          # 256 | 512 | 1024 | 2048
    base_url = "https://api.voyageai.com/v1"

    [local]
    view = "condensed-v2"     # condensed-v2 (default) | condensed | full
    adapter = "code-v1"       # code-v1 (default) | none;  $KNOXIDX_LOCAL_ADAPTER overrides

    [egress]
    never_send = ["internal/**", "*.sql"]  # gitignore patterns, added to the defaults
    mask_secrets = true       # mask likely secrets in text sent to a remote service

``offline`` is on if *any* source turns it on (file, environment, flag): a project can demand it
and so can a user, and neither can switch the other's demand off. The Voyage API key is read
from ``$VOYAGE_API_KEY`` only: a key in a file inside the repository is a leak waiting to
happen, so the file refuses one. Unknown keys are errors, so that a typo in a safety setting
(``never-send``) is not silently ignored.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib

from knoxidx.errors import KnoxidxError
from knoxidx.files import read_regular

CONFIG_FILES = ("knoxidx.toml", ".knoxidx.toml")
EMBEDDER_ENV = "KNOXIDX_EMBEDDER"
OFFLINE_ENV = "KNOXIDX_OFFLINE"
NEVER_SEND_ENV = "KNOXIDX_NEVER_SEND"  # extra never-send patterns, separated by commas

# key -> (type, allowed values or None)
_TOP: dict[str, tuple[type, tuple[Any, ...] | None]] = {
    "embedder": (str, ("local", "voyage")),
    "reranker": (str, ("voyage", "none")),
    "offline": (bool, None),
}
_SECTIONS: dict[str, dict[str, tuple[type, tuple[Any, ...] | None]]] = {
    "voyage": {"model": (str, None), "dimension": (int, (256, 512, 1024, 2048)),
               "base_url": (str, None)},
    "local": {"view": (str, ("condensed-v2", "condensed", "full")),
              "adapter": (str, ("code-v1", "none"))},
    "egress": {"never_send": (list, None), "mask_secrets": (bool, None)},
}


class ConfigError(KnoxidxError):
    exit_code = 2


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def offline_from_env(env: Mapping[str, str] | None = None) -> bool:
    return truthy((os.environ if env is None else env).get(OFFLINE_ENV))


@dataclass(frozen=True, slots=True)
class Settings:
    embedder: str = "local"
    reranker: str | None = None  # None: voyage with the voyage embedder, else none
    offline: bool = False
    offline_because: str = ""  # which source switched offline on
    voyage_model: str = "voyage-code-3"
    voyage_dimension: int | None = None
    voyage_base_url: str | None = None
    local_view: str = "condensed-v2"
    local_adapter: str | None = None  # None: the default adapter
    never_send: tuple[str, ...] = ()  # extra patterns (the defaults always apply)
    mask_secrets: bool = True
    source: str | None = None  # the file read, if any

    def embedder_config(self) -> dict[str, Any]:
        """The mapping ``embedders.select_embedder`` / ``select_reranker`` read."""
        config: dict[str, Any] = {
            "embedder": self.embedder, "local_view": self.local_view,
            "voyage_model": self.voyage_model, "offline": self.offline,
        }
        if self.local_adapter:
            config["local_adapter"] = self.local_adapter
        if self.reranker:
            config["reranker"] = self.reranker
        if self.voyage_dimension:
            config["voyage_dimension"] = str(self.voyage_dimension)
        if self.voyage_base_url:
            config["voyage_base_url"] = self.voyage_base_url
        return config


def find_config(root: Path) -> Path | None:
    for name in CONFIG_FILES:
        candidate = root / name
        if candidate.is_file():
            return candidate
        if candidate.exists():  # its never-send patterns would go unapplied without a word
            raise ConfigError(f"{candidate}: not a regular file; the settings are not read")
    return None


def load_settings(root: Path | str | None, env: Mapping[str, str] | None = None) -> Settings:
    """The settings for the repository at ``root`` (None: environment only)."""
    env = os.environ if env is None else env
    path = find_config(Path(root)) if root is not None else None
    data = _read(path) if path is not None else {}
    voyage, local, egress = (data.get(s, {}) for s in ("voyage", "local", "egress"))
    sources = []
    if path is not None and data.get("offline"):
        sources.append(path.name)
    if truthy(env.get(OFFLINE_ENV)):
        sources.append(f"${OFFLINE_ENV}")
    extra = tuple(p.strip() for p in (env.get(NEVER_SEND_ENV) or "").split(",") if p.strip())
    embedder = (env.get(EMBEDDER_ENV) or data.get("embedder") or "local").strip().lower()
    return Settings(
        embedder=embedder,
        reranker=data.get("reranker"),
        offline=bool(sources),
        offline_because=" and ".join(sources),
        voyage_model=voyage.get("model", "voyage-code-3"),
        voyage_dimension=voyage.get("dimension"),
        voyage_base_url=voyage.get("base_url"),
        local_view=local.get("view", "condensed-v2"),
        local_adapter=local.get("adapter"),
        never_send=(*egress.get("never_send", ()), *extra),
        mask_secrets=egress.get("mask_secrets", True),
        source=str(path) if path else None,
    )


def _read(path: Path) -> dict[str, Any]:
    try:  # not a FIFO (it would wait for a writer for ever), not over a MiB
        data = tomllib.loads(read_regular(path).decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: invalid UTF-8 at byte {exc.start}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: unreadable: {exc.strerror or exc}") from None
    _check(path, data)
    return data


def _check(path: Path, data: dict[str, Any]) -> None:
    for key, value in data.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: [{key}] must be a table")
            for sub, subvalue in value.items():
                _check_value(path, f"{key}.{sub}", _SECTIONS[key].get(sub), subvalue)
        else:
            _check_value(path, key, _TOP.get(key), value)


def _check_value(path: Path, key: str, rule: tuple[type, tuple[Any, ...] | None] | None,
                 value: Any) -> None:
    if "api_key" in key or key.endswith("key"):
        raise ConfigError(f"{path}: {key}: put API keys in the environment ($VOYAGE_API_KEY), "
                          "never in a file inside the repository")
    if rule is None:
        known = [*_TOP, *(f"{s}.{k}" for s, keys in _SECTIONS.items() for k in keys)]
        raise ConfigError(f"{path}: unknown setting {key!r}; known: {', '.join(known)}")
    kind, allowed = rule
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{path}: {key} must be a {kind.__name__}, not {value!r}")
    if isinstance(value, list) and not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{path}: {key} must be a list of non-empty strings")
    if allowed is not None and value not in allowed:
        raise ConfigError(f"{path}: {key} must be one of {', '.join(map(str, allowed))}, "
                          f"not {value!r}")
