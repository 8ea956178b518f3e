"""Java: packages, single-type/wildcard/static imports, same-package names, inherited members
visible by their bare name, ``new T()``."""

from __future__ import annotations

from typing import Any

from knoxidx.indexer import signatures as sig
from knoxidx.indexer.definitions import node_text
from knoxidx.indexer.facts import Import, RefKind
from knoxidx.indexer.lang.common import BaseRules, preceding_comment

FAMILY = "java"
# More names than this in a qualified name is no class of any real program.
MAX_QUALIFIED_NAMES = 64
# Methods and types have namespaces of their own: a local hides only a field.
LOCAL_SHADOWS = frozenset({RefKind.VALUE})
# declarations whose type is read from the node, not matched (see go.py)
TYPE_AFTER_NAMES: frozenset[str] = frozenset()
SQUARE_TYPE_ARGS = False  # type arguments in angle brackets (see name_paths.type_path)


def _modifiers(node: Any) -> Any:
    """A declaration's modifiers, always its first child. Not a scan of ``node.children``:
    every declarator of `int a, b, c, ...;` is a definition on that same node (10,000
    declarators: minutes)."""
    first = node.child(0)
    return first if first is not None and first.type == "modifiers" else None


def classify(sub: str, name: str, node: Any, source: bytes) -> str | None:
    if sub == "field":
        modifiers = _modifiers(node)
        words = node_text(source, modifiers).split() if modifiers is not None else []
        if "static" in words and "final" in words:
            from knoxidx.graph.model import NodeKind

            return NodeKind.CONSTANT.value
    from knoxidx.indexer.extract import DEF_KINDS

    return DEF_KINDS.get(sub)


def doc_comment(node: Any, source: bytes) -> str:
    return preceding_comment(node, source)


def is_exported(node: Any, name: str, nested: bool, source: bytes) -> bool | None:
    modifiers = _modifiers(node)
    if modifiers is None:
        return None if nested else False
    words = node_text(source, modifiers).split()
    if "public" in words or "protected" in words:
        return True
    return False if "private" in words else None


def package_name(raw: str) -> str:
    return raw.replace(" ", "")


def decode_import(node: Any, scope: int, source: bytes) -> list[Import]:
    line = node.start_point[0] + 1
    is_static = any(c.type == "static" for c in node.children)
    wildcard = any(c.type == "asterisk" for c in node.children)
    path_node = next((c for c in node.named_children
                      if c.type in ("scoped_identifier", "identifier")), None)
    if path_node is None:
        return []
    path = node_text(source, path_node).replace(" ", "")
    if wildcard:
        return [Import(path, "*", "", line, scope, is_static)]
    module, _, name = path.rpartition(".")
    return [Import(module, name, name, line, scope, False)]


# ---- resolution ----------------------------------------------------------------------------

_OBJECT_METHODS = frozenset(["equals", "hashCode", "toString", "getClass", "notify", "notifyAll", "wait", "clone", "finalize", "length", "charAt", "substring", "indexOf", "isEmpty", "get", "put", "add", "addAll", "remove", "contains", "containsKey", "size", "iterator", "stream", "forEach", "map", "filter", "collect", "append", "format", "valueOf", "of", "asList", "keySet", "values", "entrySet", "close", "read", "write", "flush", "println", "print", "trim", "split", "replace", "startsWith", "endsWith", "toLowerCase", "toUpperCase", "compareTo", "next", "hasNext", "getKey", "getValue", "orElse", "isPresent", "ifPresent"])


class _Rules(BaseRules):
    super_call_constructs = True
    self_names = frozenset({"this"})
    self_binds_anywhere = True
    class_members_visible = True
    guess_members = True
    builtin_method_names = _OBJECT_METHODS

    def module_keys(self, path: str, facts: Any, layout: Any) -> list[str]:
        package = facts.package
        keys = [package or "(default)"]
        for d in facts.defs:
            if d.parent < 0 and d.kind in ("Class", "Interface"):
                keys.append(f"type:{package}.{d.name}" if package else f"type:{d.name}")
        return keys

    def qualified_prefix(self, path: str, keys: list[str]) -> str:
        return keys[0] if keys and keys[0] != "(default)" else ""

    def _type(self, r: Any, qualified: str) -> list:
        """The class named by a fully qualified name, nested classes included (memoised: a
        miss tries every shorter prefix as an enclosing class)."""
        return r.memo(("java-type", qualified), self._find_type, r, qualified)

    def _find_type(self, r: Any, qualified: str) -> list:
        """The longest prefix of ``qualified`` that names a top-level class (any prefix of at
        least two names, or the whole), then the nested classes the rest names. A loop, not a
        recursion per name: an import of hundreds of names (a mangled file) recursed too deep
        and took the whole file's edges with it."""
        parts = qualified.split(".")
        if len(parts) > MAX_QUALIFIED_NAMES:
            return []  # no class is named so (a mangled file); trying each prefix is quadratic
        for size in range(len(parts), 0, -1):
            if size < len(parts) and size < 2:
                return []
            top = self._find_top_level(r, ".".join(parts[:size]), parts[size - 1])
            if top:
                return self._nested(r, top, parts[size:])
        return []

    def _package_type(self, r: Any, package: str, name: str) -> list:
        """The top-level class ``name`` of ``package`` (memoised), without the shorter
        prefixes :meth:`_find_type` goes on to try: a class named like a package is a compile
        error in Java, so a miss looked each of them up in vain and kept them as dependencies
        of the file."""
        qualified = f"{package}.{name}" if package else name
        return r.memo(("java-top", qualified), self._find_top_level, r, qualified, name)

    @staticmethod
    def _find_top_level(r: Any, qualified: str, name: str) -> list:
        """The class whose fully qualified name is ``qualified`` if it is a top-level one."""
        for path in r.module_paths(FAMILY, "type:" + qualified):
            pfi = r.index(path)
            hit = r.child(pfi, -1, name) if pfi else None
            if hit:
                return [("d", path, hit[-1])]
        return []

    @staticmethod
    def _nested(r: Any, found: list, names: list[str]) -> list:
        """From the classes ``found``, the member each further name denotes in turn."""
        for name in names:
            found = next((m for m in (r.class_member(c[1], c[2], name) for c in found) if m), [])
            if not found:
                return []
        return found

    def import_binding(self, r: Any, fi: Any, imp: Any) -> list:
        found = self._type(r, f"{imp.module}.{imp.name}")
        if found:
            return found
        for cls in self._type(r, imp.module):  # import static a.B.member
            members = r.class_member(cls[1], cls[2], imp.name)
            if members:
                return members
        return [("x", FAMILY, imp.module)]

    def import_targets(self, r: Any, fi: Any, imp: Any) -> list:
        if imp.name == "*":
            if imp.reexport:  # static wildcard: the class's file
                return [("f", s[1], 0) for s in self._type(r, imp.module)] or \
                    [("x", FAMILY, imp.module)]
            if r.module_paths(FAMILY, imp.module):
                return [("m", FAMILY, imp.module)]
            return [("x", FAMILY, imp.module)]
        found = self._type(r, f"{imp.module}.{imp.name}") or self._type(r, imp.module)
        if found:
            return [("f", found[0][1], 0)]
        return [("x", FAMILY, imp.module)]

    def module_member(self, r: Any, module: Any, name: str) -> list:
        if module[0] == "m":
            return self._type(r, f"{module[2]}.{name}")
        return []

    def module_fallback(self, r: Any, fi: Any, name: str) -> list:
        # it depends on the file's package and wildcard imports only: the files of a package
        # mostly share those, and read the same names
        package = fi.facts.package
        wildcards = tuple((w.module, w.reexport) for w in fi.wildcards)
        return r.memo(("java-fallback", package, wildcards, name),
                      self._fallback, r, package, wildcards, name)

    def _fallback(self, r: Any, package: str, wildcards: tuple[tuple[str, bool], ...],
                  name: str) -> list:
        # Whatever the package or a wildcard import gives is a definition called `name`: where
        # the index holds none (a JDK method, a class of a library outside it), each of those
        # lookups would miss. The one lookup of the name says so, and it is what a definition
        # of that name added later invalidates.
        if r.defs_named(FAMILY, name):
            found = self._package_type(r, package, name)
            if found:
                return found
            for module, static in wildcards:
                if static:  # import static a.B.*
                    for cls in self._type(r, module):
                        members = r.class_member(cls[1], cls[2], name)
                        if members:
                            return members
                else:
                    found = self._type(r, f"{module}.{name}")
                    if found:
                        return found
        # a package name used as a qualifier: java.util.List, a.b.C.m()
        if r.module_paths(FAMILY, name) or r.module_paths(FAMILY, "ns:" + name):
            return [("m", FAMILY, name)]
        return []


RULES = _Rules()


_ANNOTATIONS = frozenset({"marker_annotation", "annotation"})


def signature_of(node: Any, source: bytes) -> sig.SignatureData:
    """A method's or constructor's parameters (`String... rest` variadic of String, `Foo
    this` its receiver), return type (none for a constructor), type parameters and
    annotations."""
    params: list[sig.Parameter] = []
    listed = node.child_by_field_name("parameters")
    for child in listed.named_children if listed is not None else ():
        if child.type == "formal_parameter":
            params.append((sig.field_text(source, child, "name"),
                           sig.field_text(source, child, "type"), None, sig.POSITIONAL))
        elif child.type == "spread_parameter":
            typed = [c for c in child.named_children
                     if c.type not in ("modifiers", "variable_declarator")]
            declarator = [c for c in child.named_children if c.type == "variable_declarator"]
            params.append((sig.field_text(source, declarator[0], "name") if declarator else None,
                           sig.written(source, typed[0]) if typed else None, None,
                           sig.VARIADIC))
        elif child.type == "receiver_parameter":
            typed = [c for c in child.named_children if c.type not in _ANNOTATIONS]
            params.append(("this", sig.written(source, typed[0]) if typed else None, None,
                           sig.RECEIVER))
    modifiers = [c for c in node.named_children if c.type == "modifiers"]
    annotations = [c for c in modifiers[0].named_children
                   if c.type in _ANNOTATIONS] if modifiers else []
    type_parameters = node.child_by_field_name("type_parameters")
    return (tuple(params), sig.field_text(source, node, "type"),
            tuple([sig.written(source, t) for t in type_parameters.named_children
                   if t.type not in ("line_comment", "block_comment")])
            if type_parameters is not None else (),
            sig.decorator_names(annotations, source, "@"))
