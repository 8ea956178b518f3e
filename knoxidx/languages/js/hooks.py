"""JavaScript, TypeScript and TSX: ES module and CommonJS imports/exports, JSDoc, and how an
import specifier maps to a file (relative paths, index files, ``.js`` -> ``.ts``, tsconfig
``baseUrl``/``paths``). The family's hooks module; what its hooks read is in the modules beside
it: imports, JSDoc, signatures, collections' elements and what other bindings hold."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import Import, NamePath, RefKind
from knoxidx.core.model import NodeKind
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, FILE_TAG, Symbol
from knoxidx.languages.common import ReexportingRules
from knoxidx.languages.js.bound_types import bound_names as bound_names
from knoxidx.languages.js.bound_types import callback_binding as callback_binding
from knoxidx.languages.js.bound_types import callback_parameter
from knoxidx.languages.js.bound_types import declared_binding_type as declared_binding_type
from knoxidx.languages.js.bound_types import property_types as property_types
from knoxidx.languages.js.bound_types import returned_path as returned_path
from knoxidx.languages.js.bound_types import returned_value as returned_value
from knoxidx.languages.js.elements import (
    ELEMENT_CALLBACKS,
    ELEMENT_RESULTS,
    ELEMENTS_KEPT,
    element_type,
)
from knoxidx.languages.js.elements import element_binding as element_binding
from knoxidx.languages.js.elements import elements_binding as elements_binding
from knoxidx.languages.js.elements import indexed_receiver as indexed_receiver
from knoxidx.languages.js.imports import REQUIRE
from knoxidx.languages.js.imports import decode_import as decode_import
from knoxidx.languages.js.jsdoc import declaring_statement
from knoxidx.languages.js.jsdoc import doc_comment as doc_comment
from knoxidx.languages.js.jsdoc import documented_binding as documented_binding
from knoxidx.languages.js.jsdoc import documented_types as documented_types
from knoxidx.languages.js.outside import declares, outside_call
from knoxidx.languages.js.signatures import FUNCTION_VALUES
from knoxidx.languages.js.signatures import signature_of as signature_of
from knoxidx.parse.definitions import DEF_KINDS, node_text
from knoxidx.parse.file_index import FileIndex

if TYPE_CHECKING:
    from knoxidx.core.facts import FileFacts
    from knoxidx.languages.protocol import ResolverView

FAMILY = "js"
# One namespace for values: a local hides a function or class of the same name.
LOCAL_SHADOWS = frozenset({RefKind.VALUE, RefKind.CALL, RefKind.NEW})
# the nodes of a value read through a path: a local bound to one copies it (`const precedence =
# astUtils.getPrecedence; precedence(node)` calls astUtils.getPrecedence)
VALUE_PATHS = frozenset({"member_expression"})
# declarations whose type is read from the node, not matched (see go.py)
TYPE_AFTER_NAMES: frozenset[str] = frozenset()
# `this._def.x` in `class A extends B<X, D<T>>`: B's `_def: Def` read as D<T> (scopes)
READS_BASE_ARGUMENTS = True
SQUARE_TYPE_ARGS = False  # type arguments in angle brackets (see name_paths.type_path)
EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}


def classify(sub: str, name: str, node: Any, source: bytes) -> str | None:
    if _is_overload_signature(node, name, source):
        return None  # `f(a: string): X;` before its implementation: one symbol, the body
    if sub in ("constant", "variable"):
        value = node.child_by_field_name("value")
        if value is not None and value.type in FUNCTION_VALUES:
            return NodeKind.FUNCTION.value
        if value is not None and value.type == "class":
            return NodeKind.CLASS.value
        declaration = node.parent
        # child(0), not children[0]: `const a = 1, b = 2, ...` would build every declarator's
        # node for each of them (10,000 declarators: minutes)
        first = declaration.child(0) if declaration is not None else None
        keyword = first.type if first is not None else ""
        return NodeKind.CONSTANT.value if keyword == "const" else NodeKind.VARIABLE.value
    if sub == "field":
        value = node.child_by_field_name("value")
        if value is not None and value.type in FUNCTION_VALUES:
            return NodeKind.FUNCTION.value
        return NodeKind.VARIABLE.value
    if sub == "function":
        value = node.child_by_field_name("value")
        if value is not None and value.type == "class":
            return NodeKind.CLASS.value
    return DEF_KINDS.get(sub)


def _is_overload_signature(node: Any, name: str, source: bytes) -> bool:
    if node.type == "method_signature":
        return node.parent is not None and node.parent.type == "class_body"
    if node.type != "function_signature":
        return False
    target = node.parent if node.parent is not None and node.parent.type == "export_statement" \
        else node
    sibling = target.next_named_sibling
    if sibling is not None and sibling.type == "export_statement":
        sibling = sibling.child_by_field_name("declaration")
    if sibling is None or sibling.type not in ("function_declaration", "function_signature"):
        return False
    sibling_name = sibling.child_by_field_name("name")
    return sibling_name is not None and node_text(source, sibling_name) == name


def is_exported(node: Any, name: str, nested: bool, source: bytes) -> bool | None:
    if nested:
        if name.startswith("#"):
            return False
        for child in node.children:
            if child.type == "accessibility_modifier":
                return node_text(source, child) == "public"
        return True
    return bool(declaring_statement(node).type == "export_statement")


def package_name(raw: str) -> str:
    return raw


_BUILTIN_METHODS = frozenset(["push", "pop", "shift", "unshift", "map", "filter", "forEach", "reduce", "reduceRight", "join", "split", "slice", "splice", "indexOf", "lastIndexOf", "includes", "concat", "keys", "values", "entries", "get", "set", "has", "delete", "add", "clear", "then", "catch", "finally", "toString", "toFixed", "trim", "trimStart", "trimEnd", "replace", "replaceAll", "match", "matchAll", "test", "apply", "call", "bind", "startsWith", "endsWith", "find", "findIndex", "findLast", "some", "every", "sort", "reverse", "fill", "charAt", "charCodeAt", "codePointAt", "substring", "substr", "toLowerCase", "toUpperCase", "padStart", "padEnd", "repeat", "flat", "flatMap", "assign", "freeze", "create", "defineProperty", "hasOwnProperty", "isArray", "from", "of", "emit", "on", "once", "off", "addListener", "removeListener", "log", "warn", "error", "info", "debug", "parse", "stringify", "resolve", "reject", "all", "allSettled", "race", "any", "next", "return", "throw", "exec", "at", "valueOf", "localeCompare", "normalize", "search", "toJSON", "getTime", "now", "addEventListener", "removeEventListener", "dispatchEvent", "querySelector", "querySelectorAll", "getAttribute", "setAttribute", "appendChild", "removeChild", "preventDefault", "stopPropagation"])


class _Rules(ReexportingRules):
    super_call_constructs = True
    super_calls_constructor = True
    constructor_name = "constructor"
    new_calls_constructor = True
    constructors_inherited = True
    self_names = frozenset({"this"})
    self_type_names = frozenset({"this"})
    self_binds_anywhere = True
    guess_members = False  # measured: guesses cost more precision than they add recall
    rebindings_widen_type = True
    classes_block_scoped = True
    builtin_method_names = _BUILTIN_METHODS
    element_callbacks = ELEMENT_CALLBACKS
    elements_kept = ELEMENTS_KEPT
    element_results = ELEMENT_RESULTS
    module_joiner = ":"
    # `module.exports.x()` in the file it exports from: CommonJS's `module` is no name the
    # file declares, and its `exports` the file's exports
    special_heads = frozenset({"super", "module"})
    getter_prefix = "get "

    def special_head(self, r: ResolverView, fi: FileIndex, head: str, scope: int
                     ) -> list[Symbol] | None:
        if head != "module":
            return super().special_head(r, fi, head, scope)
        declared = r.memo(("js-declares-module", fi.path), declares, fi, head)
        return None if declared else [(FILE_TAG, fi.path, 0)]

    def element_type(self, declared: str) -> str:
        return element_type(declared)

    def outside_call(self, r: ResolverView, fi: FileIndex, scope: int, path: NamePath,
                     site: int) -> bool:
        return outside_call(r, fi, scope, path, site)

    def callback_parameter(self, declared: str, index: int = 0) -> str:
        return callback_parameter(declared) if index == 0 else ""

    def module_keys(self, path: str, facts: FileFacts, layout: Any) -> list[str]:
        return [path]

    def qualified_prefix(self, path: str, keys: list[str]) -> str:
        for ext in EXTENSIONS:
            if path.endswith(ext):
                return path[: -len(ext)]
        return path

    # modules

    def _file(self, r: ResolverView, path: str) -> list[Symbol]:
        return [(FILE_TAG, path, 0)] if r.module_paths(FAMILY, path) else []

    def _candidates(self, base: str) -> list[str]:
        out = [base]
        root, ext = posixpath.splitext(base)
        if ext in _JS_TO_TS:
            out.extend(root + alt for alt in _JS_TO_TS[ext])
        out.extend(base + e for e in EXTENSIONS)
        out.extend(f"{base}/index{e}" for e in EXTENSIONS)
        return out

    def _find(self, r: ResolverView, base: str) -> list[Symbol]:
        base = posixpath.normpath(base)
        if base.startswith(".."):
            return []
        if base == ".":
            base = ""
        for candidate in self._candidates(base):
            found = self._file(r, candidate.lstrip("/"))
            if found:
                return found
        return []

    def resolve_module(self, r: ResolverView, fi: FileIndex, spec: str) -> list[Symbol]:
        if not spec:
            return [(FILE_TAG, fi.path, 0)]
        # what a specifier names depends only on the importing file's directory: asked once
        # for all the files there (and every import of one module from one file)
        directory = posixpath.dirname(fi.path)
        return r.memo(("js-module", directory, spec),
                      self._resolve_module, r, directory, spec)

    def _resolve_module(self, r: ResolverView, directory: str, spec: str) -> list[Symbol]:
        if spec.startswith("."):
            return self._find(r, posixpath.join(directory, spec))
        for ts in r.layout.ts_configs:
            if ts.directory and not (directory + "/").startswith(ts.directory + "/"):
                continue
            base_dir = posixpath.join(ts.directory, ts.base_url or ".")
            for pattern, targets in ts.paths.items():
                prefix, star, suffix = pattern.partition("*")
                if star and spec.startswith(prefix) and spec.endswith(suffix):
                    middle = spec[len(prefix): len(spec) - len(suffix)]
                    for target in targets:
                        found = self._find(r, posixpath.join(base_dir, target.replace("*", middle)))
                        if found:
                            return found
                elif not star and spec == pattern:
                    for target in targets:
                        found = self._find(r, posixpath.join(base_dir, target))
                        if found:
                            return found
            if ts.base_url is not None:
                found = self._find(r, posixpath.join(base_dir, spec))
                if found:
                    return found
        parts = spec.split("/")
        package = "/".join(parts[:2]) if spec.startswith("@") else parts[0]
        return [(EXTERNAL_TAG, FAMILY, package)]

    def import_binding(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        modules = self.resolve_module(r, fi, imp.module)
        if not imp.name:
            return modules
        out: list[Symbol] = []
        for m in modules:
            if m[0] == EXTERNAL_TAG:
                out.append(m)
                continue
            if imp.name == REQUIRE:
                exported = [s for s in self.module_member(r, m, "default")
                            if s[0] == DEFINITION_TAG]
                out.extend(exported or [m])  # `module.exports = X`, else the exports object
                continue
            found = self.module_member(r, m, imp.name)
            if not found and imp.name == "default":
                found = [m]  # a CommonJS module imported as a default
            out.extend(found)
        return out

    def import_targets(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        if not imp.module:
            return []
        return [m for m in self.resolve_module(r, fi, imp.module)
                if m[0] in (FILE_TAG, EXTERNAL_TAG)]

    def _module_member(self, r: ResolverView, module: Symbol, name: str, depth: int
                      ) -> list[Symbol]:
        if module[0] != FILE_TAG or depth > 8:
            return []
        if name == "exports":  # `module.exports`: the file's exports themselves
            return [module]
        fi = r.index(module[1])
        if fi is None:
            return []
        exports = [i for i in fi.facts.imports if i.reexport and i.alias == name]
        for exp in exports[-1:]:
            if not exp.module:
                found, _ = r.resolve_path(fi, (exp.name,), -1)
                return found
            return self.import_binding(r, fi, exp) if exp.name else \
                self.resolve_module(r, fi, exp.module)
        hit = r.child(fi, -1, name)
        if hit:
            return [(DEFINITION_TAG, fi.path, hit[-1])]
        for wildcard in fi.wildcards:
            if wildcard.reexport:
                for m in self.resolve_module(r, fi, wildcard.module):
                    if m[0] == FILE_TAG and m != module:
                        found = self.module_member(r, m, name, depth + 1)
                        if found:
                            return found
        if name != "default":
            for default in self.module_member(r, module, "default", depth + 1):
                if default[0] == DEFINITION_TAG:
                    members, _ = r.member(default, name)
                    if members:
                        return members
        return []

    def module_fallback(self, r: ResolverView, fi: FileIndex, name: str) -> list[Symbol]:
        return []


RULES = _Rules()


