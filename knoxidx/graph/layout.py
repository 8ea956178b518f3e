"""Project-wide facts that decide how import paths map to files.

Built from the list of indexed paths plus a few configuration files (``go.mod``,
``tsconfig.json``/``jsconfig.json``, ``Cargo.toml``). When the layout's fingerprint changes
(a package gains an ``__init__.py``, ``go.mod`` is edited), every file is re-resolved.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import xxhash

from knoxidx.core.files import read_regular_text
from knoxidx.languages.registry import CONFIGS

CONFIG_NAMES = CONFIGS  # what the languages' resolution reads (go.mod, tsconfig.json...)
_GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
_CARGO_NAME = re.compile(r'^\s*name\s*=\s*"([^"]+)"', re.MULTILINE)
_JSON_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@dataclass(slots=True)
class TsPaths:
    """``compilerOptions.baseUrl`` and ``paths`` of one tsconfig, relative to the repo root."""

    directory: str
    base_url: str | None
    paths: dict[str, list[str]]


@dataclass(slots=True)
class Layout:
    root_name: str
    python_packages: frozenset[str]  # directories (repo-relative) holding an __init__.py
    go_modules: dict[str, str] = field(default_factory=dict)  # dir of go.mod -> module path
    cargo_crates: dict[str, str] = field(default_factory=dict)  # dir of Cargo.toml -> crate name
    ts_configs: list[TsPaths] = field(default_factory=list)
    # per-layout memo for the language modules (module names of a path never change under
    # one layout); not part of the fingerprint
    cache: dict = field(default_factory=dict)

    def fingerprint(self) -> str:
        h = xxhash.xxh64()
        h.update(self.root_name.encode())
        for part in sorted(self.python_packages):
            h.update(b"p" + part.encode())
        h.update(json.dumps(self.go_modules, sort_keys=True).encode())
        h.update(json.dumps(self.cargo_crates, sort_keys=True).encode())
        h.update(
            json.dumps([(t.directory, t.base_url, t.paths) for t in self.ts_configs]).encode()
        )
        return h.hexdigest()


def build_layout(root: Path, paths: list[str], config_paths: list[str]) -> Layout:
    return layout_from(root.name, python_packages(paths), read_configs(root, config_paths))


def python_packages(paths: list[str]) -> frozenset[str]:
    """Directories holding an ``__init__.py`` (paths are discovery's: posix, relative)."""
    return frozenset(
        p.rpartition("/")[0]
        for p in paths
        if p.endswith(("/__init__.py", "/__init__.pyi")) or p in ("__init__.py", "__init__.pyi")
    )


def read_configs(root: Path, config_paths: list[str]) -> tuple[tuple[str, str], ...]:
    """(path, content) of the readable configuration files, sorted by path: with the package
    directories, everything a layout is made from."""
    out = []
    for rel in sorted(config_paths):
        try:  # discovery listed regular files; one replaced since by a FIFO is not waited on
            out.append((rel, read_regular_text(root / rel)))
        except OSError:
            continue
    return tuple(out)


def layout_from(root_name: str, packages: frozenset[str],
                configs: tuple[tuple[str, str], ...]) -> Layout:
    layout = Layout(root_name=root_name, python_packages=packages)
    for rel, content in configs:
        directory = str(PurePosixPath(rel).parent) if "/" in rel else ""
        name = PurePosixPath(rel).name
        if name == "go.mod":
            match = _GO_MODULE.search(content)
            if match:
                layout.go_modules[directory] = match.group(1)
        elif name == "Cargo.toml":
            match = _CARGO_NAME.search(content)
            if match:
                layout.cargo_crates[directory] = match.group(1).replace("-", "_")
        else:
            options = _read_jsonc(content).get("compilerOptions") or {}
            base_url = options.get("baseUrl")
            ts_paths = options.get("paths") or {}
            if base_url is not None or ts_paths:
                layout.ts_configs.append(
                    TsPaths(directory, base_url, {k: list(v) for k, v in ts_paths.items()})
                )
    return layout


def _read_jsonc(content: str) -> dict:
    try:
        data = json.loads(content)
    except ValueError:  # tsconfig allows comments and trailing commas
        try:
            data = json.loads(_TRAILING_COMMA.sub(r"\1", _JSON_COMMENT.sub("", content)))
        except ValueError:
            return {}
    return data if isinstance(data, dict) else {}
