"""Rust: the module tree the rules walk (``ModuleTree``, the base of the family's rules): a
file's module path and the inline `mod name { }` blocks in it, where a path's ``crate``,
``super``, ``self`` or ``Self`` head leads, where a `use` path leads (a `#[path]` file too),
what an import binds and links to, and a module's members through `pub use` re-exports and
wildcards."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import Import
from knoxidx.core.symbols import (
    DEFINITION_TAG,
    EXTERNAL_TAG,
    FILE_TAG,
    INSTANCE_TAG,
    MODULE_TAG,
    Symbol,
)
from knoxidx.languages.common import ReexportingRules
from knoxidx.languages.rust.crates import PATH_MODULE, crate_of, module_path
from knoxidx.languages.rust.macro_scope import MACRO_USE, enclosing_macro, exported_macros
from knoxidx.parse.file_index import FileIndex

if TYPE_CHECKING:
    from knoxidx.core.facts import FileFacts
    from knoxidx.languages.protocol import ResolverView

FAMILY = "rust"


class ModuleTree(ReexportingRules):
    def module_keys(self, path: str, facts: FileFacts, layout: Any) -> list[str]:
        return [module_path(path, layout)]

    def qualified_prefix(self, path: str, keys: list[str]) -> str:
        return keys[0] if keys else ""

    def _current(self, r: ResolverView, fi: FileIndex, scope: int = -1) -> str:
        """The module path at ``scope`` of the file: the file's module, then the inline
        `mod name { }` blocks around the scope (`super::` in `mod tests` is the file's)."""
        base = module_path(fi.path, r.layout)
        defs = fi.facts.defs
        inline: list[str] = []
        s = scope
        while s >= 0:
            d = defs[s]
            if d.kind == "Module":
                inline.append(d.name)
            s = d.parent
        return "::".join([base, *reversed(inline)]) if inline else base

    def _module(self, r: ResolverView, key: str) -> list[Symbol]:
        if r.module_paths(FAMILY, key):
            return [(MODULE_TAG, FAMILY, key)]
        # an inline `mod name { }` inside the parent module's file
        parent, _, name = key.rpartition("::")
        if parent:
            for path in r.module_paths(FAMILY, parent):
                pfi = r.index(path)
                if pfi is None:
                    continue
                hit = r.child(pfi, -1, name)
                if hit and pfi.facts.defs[hit[-1]].kind == "Module":
                    return [(DEFINITION_TAG, path, hit[-1])]
        return []

    def special_head(self, r: ResolverView, fi: FileIndex, head: str, scope: int
                    ) -> list[Symbol] | None:
        if head in ("crate", "$crate"):  # (a macro's body names its own crate `$crate`)
            return [(MODULE_TAG, FAMILY, crate_of(fi.path, r.layout)[1])]
        if head == "super":
            parent = self._current(r, fi, scope).rpartition("::")[0]
            return self._module(r, parent) if parent else []
        if head == "Self":
            owner = self._owner_type(r, fi, scope)
            return owner
        if head == "self" and not self._in_method(fi, scope):
            current = self._current(r, fi, scope)
            return self._module(r, current) or [(MODULE_TAG, FAMILY, current)]
        if head == "self":
            return [(INSTANCE_TAG, s[1], s[2]) for s in self._owner_type(r, fi, scope)]
        return None

    def _in_method(self, fi: FileIndex, scope: int) -> bool:
        defs = fi.facts.defs
        s = scope
        while s >= 0:
            d = defs[s]
            if d.owner or (d.parent >= 0 and defs[d.parent].kind == "Interface"):
                return True
            s = d.parent
        return False

    def _owner_type(self, r: ResolverView, fi: FileIndex, scope: int) -> list[Symbol]:
        defs = fi.facts.defs
        s = scope
        while s >= 0:
            d = defs[s]
            if d.owner:  # read where the impl is: a type declared in a function or a `mod`
                found, _ = r.resolve_path(fi, (d.owner,), d.parent)
                return [x for x in found if x[0] == DEFINITION_TAG]
            if d.parent >= 0 and defs[d.parent].kind == "Interface":
                return [(DEFINITION_TAG, fi.path, d.parent)]
            s = d.parent
        return []

    def resolve_module(self, r: ResolverView, fi: FileIndex, spec: str, scope: int = -1
                      ) -> list[Symbol]:
        if spec.startswith(PATH_MODULE):
            return self._path_module(r, fi, spec[len(PATH_MODULE):], scope)
        parts = spec.split("::") if spec else []
        if not parts:
            return []
        head = parts[0]
        current = self._current(r, fi, scope)
        if head == "crate":
            base = crate_of(fi.path, r.layout)[1]
        elif head == "self":
            base = current
        elif head == "super":
            base = current
            while parts and parts[0] == "super":
                base = base.rpartition("::")[0]
                parts = parts[1:]
            parts = ["super", *parts]
        else:
            local = self._module(r, f"{current}::{head}")
            if local:
                base = f"{current}::{head}"
            elif r.module_paths(FAMILY, head):
                base = head
            else:
                return [(EXTERNAL_TAG, FAMILY, head)]
        key = "::".join([base, *parts[1:]]) if len(parts) > 1 else base
        found = self._module(r, key)
        if found or len(parts) < 2:
            return found
        # through an inline module's `#[path]` module (`crate::gen::helper::fold`, where
        # helper is `#[path = "../gen_helper.rs"] mod helper;` inside lib.rs's `mod gen { }`)
        walked = self._module(r, base)
        for part in parts[1:]:
            walked = [m for w in walked[:4] for m in self.module_member(r, w, part, 1)
                      if _is_module(r, m)]
        # (`use a::Type` where a::Type is an item, not a module: nothing)
        return walked

    def _path_module(self, r: ResolverView, fi: FileIndex, written: str, scope: int
                     ) -> list[Symbol]:
        """The module a `#[path = "written"]` names: relative to the file's directory, and
        inside inline `mod` blocks to theirs (below a directory named like the file, unless
        it is a lib.rs, main.rs or mod.rs), as rustc reads it."""
        directory = posixpath.dirname(fi.path)
        inline = self._current(r, fi, scope)[len(module_path(fi.path, r.layout)):].strip(":")
        if inline:
            stem = posixpath.basename(fi.path)[:-3]
            if stem not in ("lib", "main", "mod"):
                directory = posixpath.join(directory, stem)
            directory = posixpath.join(directory, *inline.split("::"))
        target = posixpath.normpath(posixpath.join(directory, written))
        key = module_path(target, r.layout)
        return [(MODULE_TAG, FAMILY, key)] if target in r.module_paths(FAMILY, key) else []

    def _item(self, r: ResolverView, fi: FileIndex, module: str, name: str, scope: int = -1
             ) -> list[Symbol]:
        modules = self.resolve_module(r, fi, module, scope) if module else []
        out: list[Symbol] = []
        for m in modules:
            if m[0] == EXTERNAL_TAG:
                out.append(m)
            else:
                out.extend(self.module_member(r, m, name))
        if not out and module:
            # the module part may itself be a type: `use a::Type::method` is rare; try a path
            found, _ = r.resolve_path(fi, (*module.split("::"), name), -1)
            out.extend(found)
        return out

    def import_binding(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        if not imp.name:
            return self.resolve_module(r, fi, imp.module, imp.scope)
        return self._item(r, fi, imp.module, imp.name, imp.scope)

    def import_targets(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        if imp.module.startswith(MACRO_USE):  # the `mod` or `extern crate` import is the edge
            return []
        spec = imp.module if not imp.name or imp.name == "*" else f"{imp.module}::{imp.name}"
        found = self.resolve_module(r, fi, spec, imp.scope) if spec else []
        if not found and imp.name and imp.name != "*":
            found = self.resolve_module(r, fi, imp.module, imp.scope)
        out: list[Symbol] = []
        for m in found:
            if m[0] == MODULE_TAG:
                out.extend((FILE_TAG, p, 0) for p in r.module_paths(FAMILY, m[2])[:1])
            elif m[0] == EXTERNAL_TAG:
                out.append(m)
        return out

    def _module_member(self, r: ResolverView, module: Symbol, name: str, depth: int
                      ) -> list[Symbol]:
        if module[0] == DEFINITION_TAG:
            pfi = r.index(module[1])
            hit = r.child(pfi, module[2], name) if pfi else None
            if pfi is None:
                return []
            if hit:
                return [(DEFINITION_TAG, module[1], hit[-1])]
            imports = pfi.imports.get((module[2], name))
            # an inline module's own `use` or `mod x;` (a `#[path]` one among them)
            return self.import_binding(r, pfi, imports[-1]) if imports else []
        if module[0] != MODULE_TAG or depth > 6:
            return []
        out: list[Symbol] = []
        for path in r.module_paths(FAMILY, module[2]):
            pfi = r.index(path)
            if pfi is None:
                continue
            hit = pfi.children.get((-1, name))
            if hit:
                out.append((DEFINITION_TAG, path, hit[-1]))
                continue
            imports = pfi.imports.get((-1, name))
            if not imports:
                r.missed(pfi, -1, name)
            if imports:  # `pub use` re-exports
                out.extend(s for s in self.import_binding(r, pfi, imports[-1]) if s != module)
                continue
            for wildcard in pfi.wildcards:
                for m in self.resolve_module(r, pfi, wildcard.module, wildcard.scope):
                    if m != module and m[0] != EXTERNAL_TAG:
                        out.extend(self.module_member(r, m, name, depth + 1))
        if not out:
            out = self._module(r, f"{module[2]}::{name}")
        if not out and "::" not in module[2]:  # `crate::json!`, `serde_json::json!`
            out = exported_macros(r, module[2], name)
        return out

    def module_fallback(self, r: ResolverView, fi: FileIndex, name: str) -> list[Symbol]:
        for wildcard in fi.wildcards:
            for m in self.resolve_module(r, fi, wildcard.module, wildcard.scope):
                if m[0] != EXTERNAL_TAG:
                    found = self.module_member(r, m, name, 1)
                    if found:
                        return found
        # a child module declared in another file (`mod foo;` is an import, this catches
        # crate-root paths like `foo::bar()` where foo is a sibling module)
        current = self._current(r, fi)
        child = self._module(r, f"{current}::{name}")
        if child:
            return child
        # `tri!` defined in lib.rs, called in de.rs; `ready!` of a `#[macro_use] mod macros;`
        macro = enclosing_macro(r, current, name, self.resolve_module)
        if macro:
            return macro
        # the extern prelude: a crate of the workspace by its name, as an integration test
        # (`tests/*.rs`) calls `tokio::spawn` or `syn::parse_str` without a `use`
        return [(MODULE_TAG, FAMILY, name)] if "::" not in name and r.module_paths(FAMILY, name) else []


def _is_module(r: Any, symbol: Any) -> bool:
    if symbol[0] == MODULE_TAG:
        return True
    if symbol[0] != DEFINITION_TAG:
        return False
    fi = r.index(symbol[1])
    return fi is not None and fi.facts.defs[symbol[2]].kind == "Module"
