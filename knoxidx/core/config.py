"""Settings: the user's own ``knoxidx.toml`` (``$KNOXIDX_CONFIG``, else
``$XDG_CONFIG_HOME/knoxidx/config.toml``, else ``~/.config/knoxidx/config.toml``), an optional
``knoxidx.toml`` (or ``.knoxidx.toml``) at the repository root, and the environment. Every key
is optional::

    embedder = "local"        # local (default) | voyage;  $KNOXIDX_EMBEDDER overrides
    reranker = "none"         # voyage | none;  default: voyage with the voyage embedder
    offline = false           # true: no network call at all (also $KNOXIDX_OFFLINE=1, --offline)

    [voyage]
    model = "voyage-code-3"
    dimension = 1024          # 256 | 512 | 1024 | 2048
    base_url = "https://api.voyageai.com/v1"

    [local]
    view = "condensed-v2"     # condensed-v2 (default) | full
    adapter = "code-v1"       # code-v1 (default) | none;  $KNOXIDX_LOCAL_ADAPTER overrides

    [egress]
    never_send = ["internal/**", "*.sql"]  # gitignore patterns, added to the defaults
    mask_secrets = true       # mask likely secrets in text sent to a remote service

    [index]
    minified = false          # true: index minified JavaScript too (skipped by default)

A repository is untrusted (a clone of anyone's code), so its file may not decide where code
and the user's key go: ``embedder = "voyage"``, ``reranker = "voyage"``, ``voyage.base_url``,
``mask_secrets = false`` and ``!`` (re-allowing) never-send patterns are taken only from the
user's file or the environment; a repository that sets them gets one warning and they are
ignored. What keeps code on the machine (``embedder = "local"``, ``reranker = "none"``,
``offline``, more never-send patterns) a repository may choose, as it may have more of its own
files indexed (``index.minified``), and its other settings win over the user's. A
``base_url`` must be ``https://``; plain ``http://`` only to a loopback address. The
repository's file is its own: one that links out of the repository (or into ``.git``) is not
read.

``offline`` is on if *any* source turns it on (file, environment, flag): a project can demand it
and so can a user, and neither can switch the other's demand off. The Voyage API key is read
from ``$VOYAGE_API_KEY`` only: a key in a file is a leak waiting to happen, so both files refuse
one. Unknown keys are errors, so that a typo in a safety setting (``never-send``) is not
silently ignored.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tomllib

from knoxidx.core.errors import KnoxidxError
from knoxidx.core.files import OutsideRootError, confined, read_regular
from knoxidx.core.limits import DECIMAL_NUMBER

log = logging.getLogger(__name__)

CONFIG_FILES = ("knoxidx.toml", ".knoxidx.toml")
USER_CONFIG_ENV = "KNOXIDX_CONFIG"  # the user's own settings file
EMBEDDER_ENV = "KNOXIDX_EMBEDDER"
OFFLINE_ENV = "KNOXIDX_OFFLINE"
EMBED_ENV = "KNOXIDX_EMBED"  # 0: `knoxidx index` leaves the new chunks pending (as --no-embed)
NEVER_SEND_ENV = "KNOXIDX_NEVER_SEND"  # extra never-send patterns, separated by commas
QUERY_DEADLINE_ENV = "KNOXIDX_QUERY_DEADLINE"  # seconds a question waits for a remote service

# key -> (type, allowed values or None)
_TOP: dict[str, tuple[type, tuple[Any, ...] | None]] = {
    "embedder": (str, ("local", "voyage")),
    "reranker": (str, ("voyage", "none")),
    "offline": (bool, None),
}
_SECTIONS: dict[str, dict[str, tuple[type, tuple[Any, ...] | None]]] = {
    "voyage": {"model": (str, None), "dimension": (int, (256, 512, 1024, 2048)),
               "base_url": (str, None)},
    "local": {"view": (str, ("condensed-v2", "full")),
              "adapter": (str, ("code-v1", "none")),
              "precision": (str, ("int8", "fp32"))},
    "egress": {"never_send": (list, None), "mask_secrets": (bool, None)},
    "index": {"minified": (bool, None)},
}
# Settings that decide where code and the API key go, and the values of each that a
# repository's own file may still set: those that keep code on the machine.
_USER_ONLY: dict[str, tuple[Any, ...]] = {
    "embedder": ("local",),
    "reranker": ("none",),
    "voyage.base_url": (),
    "egress.mask_secrets": (True,),
}
# a model's name goes into requests, logs and answers: no escape, no path, no URL
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_warned: set[tuple[str, tuple[str, ...]]] = set()  # (file, keys) already warned about


class ConfigError(KnoxidxError):
    exit_code = 2


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def falsy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("0", "false", "no", "off")


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
    local_precision: str | None = None  # None: the default (backends.DEFAULT_PRECISION)
    never_send: tuple[str, ...] = ()  # extra patterns (the defaults always apply)
    mask_secrets: bool = True
    source: str | None = None  # the repository's file read, if any
    user_source: str | None = None  # the user's file read, if any
    query_deadline: float | None = None  # None: the default (resilience.QUERY_DEADLINE)
    index_minified: bool = False  # index minified files rather than skip them

    def embedder_config(self) -> dict[str, Any]:
        """The mapping ``backends.select_embedder`` / ``select_reranker`` read."""
        config: dict[str, Any] = {
            "embedder": self.embedder, "local_view": self.local_view,
            "voyage_model": self.voyage_model, "offline": self.offline,
        }
        if self.local_adapter:
            config["local_adapter"] = self.local_adapter
        if self.local_precision:
            config["local_precision"] = self.local_precision
        if self.reranker:
            config["reranker"] = self.reranker
        if self.voyage_dimension:
            config["voyage_dimension"] = str(self.voyage_dimension)
        if self.voyage_base_url:
            config["voyage_base_url"] = self.voyage_base_url
        if self.query_deadline is not None:
            config["query_deadline"] = self.query_deadline
        return config


def find_config(root: Path) -> Path | None:
    for name in CONFIG_FILES:
        candidate = root / name
        if candidate.is_file():
            try:  # a link to a file outside (the user's own, /proc/self/environ) is not the
                confined(root, name)  # repository's to read, nor one into .git
            except OutsideRootError as exc:
                raise ConfigError(f"{candidate}: a link that {exc.strerror}; the settings are "
                                  "not read") from None
            return candidate
        if candidate.exists():  # its never-send patterns would go unapplied without a word
            raise ConfigError(f"{candidate}: not a regular file; the settings are not read")
    return None


def user_config_path(env: Mapping[str, str]) -> Path:
    """Where the user's own settings are (the file need not exist)."""
    explicit = env.get(USER_CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "knoxidx" / "config.toml"


def find_user_config(env: Mapping[str, str]) -> Path | None:
    path = user_config_path(env)
    if path.is_file():
        return path
    if path.exists():
        raise ConfigError(f"{path}: not a regular file; the settings are not read")
    if env.get(USER_CONFIG_ENV):  # named on purpose: a typo must not pass for "no settings"
        raise ConfigError(f"{path} (${USER_CONFIG_ENV}): no such file")
    return None


def load_settings(root: Path | str | None, env: Mapping[str, str] | None = None) -> Settings:
    """The settings for the repository at ``root`` (None: the user's and the environment's)."""
    env = os.environ if env is None else env
    user_path = find_user_config(env)
    user = _flat(_read(user_path)) if user_path is not None else {}
    repo_path = find_config(Path(root)) if root is not None else None
    repo = _flat(_read(repo_path)) if repo_path is not None else {}
    if repo_path is not None:
        repo = _without_user_only(repo_path, repo, user_path or user_config_path(env))
    base_url = user.get("voyage.base_url")
    if base_url is not None:
        problem = endpoint_problem(base_url)
        if problem:
            raise ConfigError(f"{user_path}: voyage.base_url: {problem}")
    sources = [path.name if path == repo_path else str(path)
               for path, data in ((repo_path, repo), (user_path, user))
               if path is not None and data.get("offline")]
    if truthy(env.get(OFFLINE_ENV)):
        sources.append(f"${OFFLINE_ENV}")
    extra = tuple(p.strip() for p in (env.get(NEVER_SEND_ENV) or "").split(",") if p.strip())
    merged = {**user, **repo}  # the project's own choices win over the user's defaults
    embedder = (env.get(EMBEDDER_ENV) or merged.get("embedder") or "local").strip().lower()
    return Settings(
        embedder=embedder,
        reranker=merged.get("reranker"),
        offline=bool(sources),
        offline_because=" and ".join(sources),
        voyage_model=merged.get("voyage.model", "voyage-code-3"),
        voyage_dimension=merged.get("voyage.dimension"),
        voyage_base_url=base_url,
        local_view=merged.get("local.view", "condensed-v2"),
        local_adapter=merged.get("local.adapter"),
        local_precision=merged.get("local.precision"),
        # the user's patterns after the repository's: a user's "!" has the last word
        never_send=(*repo.get("egress.never_send", ()), *user.get("egress.never_send", ()),
                    *extra),
        mask_secrets=merged.get("egress.mask_secrets", True),
        source=str(repo_path) if repo_path else None,
        user_source=str(user_path) if user_path else None,
        query_deadline=_query_deadline(env),
        index_minified=merged.get("index.minified", False),
    )


def _query_deadline(env: Mapping[str, str]) -> float | None:
    value = (env.get(QUERY_DEADLINE_ENV) or "").strip()
    if not value:
        return None
    # digits 0-9 only: float() also reads 'nan', 'inf', '٣' and '1_0'
    seconds = float(value) if DECIMAL_NUMBER.fullmatch(value) else 0.0
    if not 0 < seconds <= 600:
        raise ConfigError(f"${QUERY_DEADLINE_ENV} must be a number of seconds above 0 and up to "
                          f"600, not {value!r}")
    return seconds


def endpoint_problem(url: str) -> str:
    """Why ``url`` may not receive code and an API key ("" if it may): https only, plain http
    only to this machine (nothing on the way can read it there)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return ""
    if parts.scheme == "http" and _is_loopback(host):
        return ""
    return (f"{url!r} is refused: the API key and code must go over https:// "
            "(plain http:// only to 127.0.0.1, ::1 or localhost)")


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _flat(data: dict[str, Any]) -> dict[str, Any]:
    """``{"voyage": {"model": m}}`` as ``{"voyage.model": m}``."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SECTIONS:
            out.update({f"{key}.{sub}": subvalue for sub, subvalue in value.items()})
        else:
            out[key] = value
    return out


def _without_user_only(path: Path, repo: dict[str, Any], user_path: Path) -> dict[str, Any]:
    """The repository's settings less what only the user may set, with one warning per file
    and process naming what was ignored."""
    kept = dict(repo)
    ignored: list[str] = []
    for key, allowed in _USER_ONLY.items():
        if key in kept and kept[key] not in allowed:
            ignored.append(f"{key} = {json.dumps(kept.pop(key))}")
    patterns = kept.get("egress.never_send", [])
    reallowed = [p for p in patterns if p.lstrip().startswith("!")]
    if reallowed:
        kept["egress.never_send"] = [p for p in patterns if p not in reallowed]
        ignored.append(f"egress.never_send {', '.join(map(json.dumps, reallowed))}")
    if ignored and (str(path), tuple(ignored)) not in _warned:
        _warned.add((str(path), tuple(ignored)))
        log.warning("%s: ignoring %s: a repository's own settings may not choose where code "
                    "and the API key are sent; set them in %s or the environment if you mean "
                    "them", path, "; ".join(ignored), user_path)
    return kept


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
                          "never in a settings file")
    if rule is None:
        known = [*_TOP, *(f"{s}.{k}" for s, keys in _SECTIONS.items() for k in keys)]
        raise ConfigError(f"{path}: unknown setting {key!r}; known: {', '.join(known)}")
    kind, allowed = rule
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{path}: {key} must be a {kind.__name__}, not {value!r}")
    if isinstance(value, list) and not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{path}: {key} must be a list of non-empty strings")
    if key == "voyage.model" and not _MODEL_NAME.fullmatch(str(value)):
        raise ConfigError(f"{path}: {key} must be a model name such as voyage-code-3 (letters, "
                          f"digits, '.', '_' and '-'), not {value!r}")
    if allowed is not None and value not in allowed:
        raise ConfigError(f"{path}: {key} must be one of {', '.join(map(str, allowed))}, "
                          f"not {value!r}")
