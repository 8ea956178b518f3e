"""Rust crates and modules from file paths: the innermost Cargo.toml above a file names its
crate, and ``<crate>/src/a/b.rs`` (or ``a/b/mod.rs``) is the module ``crate::a::b``."""

from __future__ import annotations

import posixpath
from typing import Any

# a `mod` whose file a `#[path]` attribute names: the import's module is that path, as written
PATH_MODULE = "#path:"


def crate_of(path: str, layout: Any) -> tuple[str, str]:
    """(crate directory, crate name) of the innermost Cargo.toml above ``path``; memoised per
    directory in the layout (resolution asks for every path it meets, many times)."""
    directory = posixpath.dirname(path)
    key = ("rust-crate", directory)
    hit: tuple[str, str] | None = layout.cache.get(key)
    if hit is None:
        hit = layout.cache[key] = _innermost_crate(directory, layout)
    return hit


def _innermost_crate(directory: str, layout: Any) -> tuple[str, str]:
    best = ("", layout.cargo_crates.get("", layout.root_name.replace("-", "_")))
    for crate_dir, name in layout.cargo_crates.items():
        if crate_dir and (directory == crate_dir or directory.startswith(crate_dir + "/")):
            if len(crate_dir) > len(best[0]):
                best = (crate_dir, name)
    return best


def module_path(path: str, layout: Any) -> str:
    """``crate_name::a::b`` for ``<crate>/src/a/b.rs`` (and ``a/mod.rs``, ``lib.rs``)."""
    key = ("rust-module", path)
    hit: str | None = layout.cache.get(key)
    if hit is None:
        hit = layout.cache[key] = _module_path(path, layout)
    return hit


def _module_path(path: str, layout: Any) -> str:
    crate_dir, crate = crate_of(path, layout)
    rel = path[len(crate_dir) + 1:] if crate_dir else path
    rel = rel.removeprefix("src/")
    parts = rel[:-3].split("/") if rel.endswith(".rs") else rel.split("/")
    if parts and parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return "::".join([crate, *[p for p in parts if p]])
