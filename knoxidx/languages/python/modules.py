"""Python modules: the dotted names a file is importable under (packages, namespace
packages, a script's directory), and imports resolved to the files and definitions they bind,
through re-exports and wildcard imports: a base class of the family's rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import Import
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, FILE_TAG, MODULE_TAG, Symbol
from knoxidx.languages.common import ReexportingRules
from knoxidx.languages.python import outside
from knoxidx.parse.file_index import FileIndex

if TYPE_CHECKING:
    from knoxidx.core.facts import FileFacts
    from knoxidx.languages.protocol import ResolverView

FAMILY = "python"


def module_keys(path: str, layout: Any) -> list[str]:
    """The dotted names a file is importable under (memoised per layout)."""
    key = ("py-keys", path)
    hit: list[str] | None = layout.cache.get(key)
    if hit is None:
        hit = layout.cache[key] = _module_keys(path, layout)
    return hit


def _module_keys(path: str, layout: Any) -> list[str]:
    directory, _, filename = path.rpartition("/")
    stem = filename.rsplit(".", 1)[0]
    parts = directory.split("/") if directory else []
    is_init = stem == "__init__"
    # Climb to the outermost directory that is still a package.
    top = len(parts)
    while top > 0 and "/".join(parts[:top]) in layout.python_packages:
        top -= 1
    keys: list[str] = []
    if top == 0 and "" in layout.python_packages:
        package_parts = [layout.root_name, *parts]
    else:
        package_parts = parts[top:]
    dotted = package_parts if is_init else [*package_parts, stem]
    if dotted:
        keys.append(".".join(dotted))
    plain = parts if is_init else [*parts, stem]
    if plain and ".".join(plain) not in keys:
        keys.append(".".join(plain))
    return keys


def namespace_keys(path: str, layout: Any) -> list[str]:
    """Packages a file lives in (``a`` and ``a.b`` for ``a/b/c.py``): importable even without
    an ``__init__.py``."""
    out = []
    for key in module_keys(path, layout):
        parts = key.split(".")
        for i in range(1, len(parts)):
            out.append(".".join(parts[:i]))
    return out


class ModuleImports(ReexportingRules):
    def module_keys(self, path: str, facts: FileFacts, layout: Any) -> list[str]:
        """Importable names first (the first names the file's module), then namespace
        packages it lives in, marked ``ns:``."""
        keys = module_keys(path, layout)
        return keys + ["ns:" + k for k in dict.fromkeys(namespace_keys(path, layout))]

    def _module(self, r: ResolverView, key: str) -> list[Symbol]:
        files = r.module_paths(FAMILY, key)
        if files:
            inits = [p for p in files if p.endswith(("/__init__.py", "/__init__.pyi"))
                     or p.startswith("__init__.")]
            return [(FILE_TAG, (inits or files)[0], 0)]
        if r.module_paths(FAMILY, "ns:" + key):
            return [(MODULE_TAG, FAMILY, key)]
        return []

    def _absolute(self, r: ResolverView, fi: FileIndex, module: str) -> list[Symbol]:
        found = self._module(r, module)
        if found:
            return found
        # A script's own directory is on sys.path: `import helpers` beside it.
        own = module_keys(fi.path, r.layout)
        if own and "." in own[-1]:
            sibling = own[-1].rsplit(".", 1)[0] + "." + module
            found = self._module(r, sibling)
            if found:
                return found
        return [(EXTERNAL_TAG, FAMILY, module.split(".", 1)[0])]

    def _resolve_module(self, r: ResolverView, fi: FileIndex, module: str) -> list[Symbol]:
        # `from m import a, b, c` is three imports of one module
        return r.memo(("py-module", fi.path, module),
                      self._resolve_module_of, r, fi, module)

    def _resolve_module_of(self, r: ResolverView, fi: FileIndex, module: str) -> list[Symbol]:
        if not module.startswith("."):
            return self._absolute(r, fi, module)
        dots = len(module) - len(module.lstrip("."))
        rest = module[dots:]
        keys = module_keys(fi.path, r.layout)
        if not keys:
            return []
        base = keys[0].split(".")
        if not fi.path.rpartition("/")[2].startswith("__init__."):
            base = base[:-1]
        if dots > 1:
            base = base[: len(base) - (dots - 1)] if dots - 1 <= len(base) else []
        key = ".".join([*base, rest] if rest else base)
        return self._module(r, key) if key else []

    def import_binding(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        modules = self._resolve_module(r, fi, imp.module)
        if not imp.name:
            return modules
        out: list[Symbol] = []
        for m in modules:
            if m[0] == EXTERNAL_TAG:
                out.append(m)
            else:
                out.extend(self.module_member(r, m, imp.name))
        return out

    def import_targets(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        modules = self._resolve_module(r, fi, imp.module)
        if imp.name and imp.name != "*":
            out = []
            for m in modules:
                sub = self._submodule(r, m, imp.name)
                out.extend(sub or [m])
            modules = out
        return [m for m in modules if m[0] in (FILE_TAG, EXTERNAL_TAG)]

    def _submodule(self, r: ResolverView, module: Symbol, name: str) -> list[Symbol]:
        if module[0] == EXTERNAL_TAG:
            return []
        key = _module_key(r, module)
        return self._module(r, f"{key}.{name}") if key else []

    def _module_member(self, r: ResolverView, module: Symbol, name: str, depth: int
                      ) -> list[Symbol]:
        if module[0] == FILE_TAG:
            fi = r.index(module[1])
            if fi is None:
                return []
            hit = fi.children.get((-1, name))
            if hit:
                return [(DEFINITION_TAG, fi.path, hit[-1])]
            imports = fi.imports.get((-1, name))
            if not imports:
                r.missed(fi, -1, name)
            if imports and depth < 8:
                found = [s for s in self.import_binding(r, fi, imports[-1]) if s != module]
                # `from . import sub` in the package's own __init__ asks itself: the submodule
                return found or self._submodule(r, module, name)
            if depth < 8:
                for wildcard in fi.wildcards:
                    for m in self._resolve_module(r, fi, wildcard.module):
                        if m != module and m[0] != EXTERNAL_TAG:
                            found = self.module_member(r, m, name, depth + 1)
                            if found:
                                return found
        return self._submodule(r, module, name)

    def module_fallback(self, r: ResolverView, fi: FileIndex, name: str) -> list[Symbol]:
        for wildcard in fi.wildcards:
            for m in self._resolve_module(r, fi, wildcard.module):
                if m[0] != EXTERNAL_TAG:
                    found = self.module_member(r, m, name, 1)
                    if found:
                        return found
        # `len`, `isinstance`: a builtin, where nothing in scope or in the module defines it
        return [outside.BUILTINS] if name in outside.BUILTIN_NAMES else []


def _module_key(r: ResolverView, module: Symbol) -> str:
    if module[0] == MODULE_TAG:
        key: str = module[2]
        return key
    keys = module_keys(module[1], r.layout)
    return keys[0] if keys else ""
