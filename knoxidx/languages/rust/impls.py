"""Rust: which `impl` block a definition is in (a file's impls read once), the crate's trait
impls of a type, and the types a receiver may be of, for the rules' impl and trait questions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.facts import Impl, NamePath
from knoxidx.core.symbols import DEFINITION_TAG, INSTANCE_TAG, Symbol
from knoxidx.languages.rust.crates import crate_of
from knoxidx.parse.definitions import enclosing
from knoxidx.parse.file_index import (
    CLASS,
    CONSTANT,
    FUNCTION,
    INTERFACE,
    MODULE,
    VARIABLE,
    FileIndex,
)

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolverView

FAMILY = "rust"


def in_trait_impl(r: ResolverView, path: str, method: int) -> bool:
    """Whether the method at (path, method) is written in an `impl Trait for Type` block."""
    mfi = r.index(path)
    if mfi is None:
        return False
    impls, _, around = impl_table(r, mfi)
    inner = around[method]
    return inner >= 0 and bool(impls[inner].trait_path)


def receiver_types(r: ResolverView, fi: FileIndex, scope: int, receiver: NamePath, site: int
                    ) -> list[tuple[str, Symbol | None]]:
    """The types a receiver ``receiver`` (a name path, read at ``site`` of ``scope``) may be
    of: (its name, the crate's type or None where no crate item is it). A local or a call's
    result as an instance of its type; a field or a constant by its declared type."""
    found, _ = r.resolve_path(fi, receiver, scope, site=site)
    out: list[tuple[str, Symbol | None]] = []
    for symbol in found[:4]:
        if symbol[0] == INSTANCE_TAG:
            typed: Symbol = (DEFINITION_TAG, symbol[1], symbol[2])
            d = r.definition(typed)
            if d is not None and d.kind == CLASS:
                out.append((d.name, typed))
        elif symbol[0] == DEFINITION_TAG:
            d = r.definition(symbol)
            if d is None or d.kind not in (VARIABLE, CONSTANT) or not d.type_hint:
                continue
            dfi = r.index(symbol[1])
            types, _ = r.resolve_path(dfi, d.type_hint, d.parent, want_type=True) \
                if dfi is not None else ([], "")
            crate_types = [t for t in types if t[0] == DEFINITION_TAG and _is_class(r, t)]
            out.extend((d.type_hint[-1], t) for t in crate_types)
            if not crate_types:  # `attrs: Vec<Attribute>`: std's Vec, by its name
                out.append((d.type_hint[-1], None))
    return out


def twin_lines(fi: FileIndex, name: str) -> list[int]:
    """The first lines of the structs and enums named ``name`` the file declares, in order."""
    return sorted(d.start_line for d in fi.facts.defs if d.name == name and d.kind == CLASS)


def _is_class(r: ResolverView, symbol: Symbol) -> bool:
    d = r.definition(symbol)
    return d is not None and d.kind == CLASS


def impl_table(r: ResolverView, fi: FileIndex) -> tuple[tuple[Impl, ...], list[int], list[int]]:
    """A file's impls, the definition each is written in (-1: the file's top level) and, per
    definition, the index of the innermost impl around it (-1: none): once per file, where a
    scan of the file's impls or definitions for each question made syn's generated files'
    resolution eight times slower."""
    return r.memo(("rust-impls", fi.path), _impl_table_of, fi)


def _impl_table_of(fi: FileIndex) -> tuple[tuple[Impl, ...], list[int], list[int]]:
    defs = fi.facts.defs
    impls = fi.facts.impls
    scopes_spans = [(d.start_byte, d.end_byte, i) for i, d in enumerate(defs)
                    if d.kind in (MODULE, FUNCTION)]
    by_start = sorted(range(len(impls)), key=lambda i: (impls[i].start_byte, -impls[i].end_byte))
    found = enclosing(scopes_spans, [impls[i].start_byte for i in by_start])
    scopes = [-1] * len(impls)
    for i, scope in zip(by_start, found, strict=True):
        scopes[i] = scope
    impl_spans = [(impls[i].start_byte, impls[i].end_byte, i) for i in by_start]
    defs_by_start = sorted(range(len(defs)), key=lambda i: defs[i].start_byte)
    around = [-1] * len(defs)
    for i, inner in zip(defs_by_start, enclosing(
            impl_spans, [defs[i].start_byte for i in defs_by_start]), strict=True):
        around[i] = inner
    return impls, scopes, around


def crate_trait_impls(r: ResolverView, fi: FileIndex, name: str
                       ) -> list[tuple[str, int, int, list[Symbol]]]:
    """The impls of one of the crate's traits that may be of a type ``name`` declared in
    ``fi``: (file, impl, its scope, the traits), in file and impl order. Those in ``fi`` that
    name it, and those around a method whose owner is so named elsewhere in the crate."""
    impls, scopes, _ = impl_table(r, fi)
    # (an impl names its type as written: an alias's impl is not looked for)
    places = {(fi.path, i): scopes[i] for i, impl in enumerate(impls)
              if impl.trait_path and impl.type_path[-1:] == (name,)}
    methods: dict[str, list[int]] = {}  # by file: a type's methods are in a few
    for path, method, _ in r.methods_of(FAMILY, name):
        methods.setdefault(path, []).append(method)
    files: dict[str, FileIndex | None] = {fi.path: fi}
    for path, indexes in methods.items():
        mfi = files[path] = r.index(path)
        if mfi is None:
            continue
        mimpls, _, around = impl_table(r, mfi)
        for method in indexes:
            inner = around[method]
            if inner >= 0 and mimpls[inner].trait_path:
                places[(path, inner)] = mfi.facts.defs[method].parent
    crate = crate_of(fi.path, r.layout)
    out: list[tuple[str, int, int, list[Symbol]]] = []
    for (path, inner), scope in sorted(places.items()):
        ifi = files[path]
        if ifi is None or crate_of(path, r.layout) != crate:
            continue
        # the trait first, once per trait as written in a scope: most are std's (`Clone`,
        # `Debug`: the same file has 300 `impl Debug for Lite<..>`), whose impls are left
        trait_path = ifi.facts.impls[inner].trait_path
        traits = r.memo(("rust-impl-traits", path, scope, trait_path), crate_traits, r, ifi,
                        trait_path, scope)
        if traits:
            out.append((path, inner, scope, traits))
    return out


def crate_traits(r: ResolverView, fi: FileIndex, trait_path: NamePath, scope: int
                  ) -> list[Symbol]:
    """The crate's traits an impl's trait path names from ``scope`` of ``fi``."""
    found, _ = r.resolve_path(fi, trait_path, scope, want_type=True)
    return [t for t in found if t[0] == DEFINITION_TAG and _is_trait(r, t)]


def _is_trait(r: ResolverView, symbol: Symbol) -> bool:
    d = r.definition(symbol)
    return d is not None and d.kind == INTERFACE
