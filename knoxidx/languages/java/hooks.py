"""Java: packages, single-type/wildcard/static imports, same-package names, inherited members
visible by their bare name, ``new T()``. The family's hooks module; what its hooks read is in the
modules beside it: declarations' signatures, calls' arguments, lambdas' parameters, collections'
elements, overloads (``parameters``, ``argument_types``, ``overloads``) and the JDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import Import, RefKind
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, FILE_TAG, MODULE_TAG, Symbol
from knoxidx.languages.common import BaseRules, preceding_comment
from knoxidx.languages.java.arguments import call_arguments as call_arguments
from knoxidx.languages.java.elements import (
    ARGUMENT_RESULTS,
    ELEMENT_CALLBACKS,
    ELEMENTS_KEPT,
    element_type,
)
from knoxidx.languages.java.elements import indexed_receiver as indexed_receiver
from knoxidx.languages.java.jdk import JAVA_LANG, OBJECT_METHODS, looks_like_class
from knoxidx.languages.java.lambdas import callback_binding as callback_binding
from knoxidx.languages.java.lambdas import lambda_parameter
from knoxidx.languages.java.overloads import MAX_QUALIFIED_NAMES, argument_fits, argument_is
from knoxidx.languages.java.parameters import parameters, written_type
from knoxidx.languages.java.signatures import declaration_modifiers
from knoxidx.languages.java.signatures import signature_of as signature_of
from knoxidx.parse.definitions import DEF_KINDS, node_text
from knoxidx.parse.file_index import FileIndex

if TYPE_CHECKING:
    from knoxidx.core.facts import FileFacts
    from knoxidx.languages.protocol import ResolverView

FAMILY = "java"
# Methods and types have namespaces of their own: a local hides only a field.
LOCAL_SHADOWS = frozenset({RefKind.VALUE})
# declarations whose type is read from the node, not matched (see go.py)
TYPE_AFTER_NAMES: frozenset[str] = frozenset()
# Which of a local's bindings reaches a use (see binding_sites): each declares a local scoped
# to its block, a `for`'s to the loop, a resource's to the try, a lambda's parameter to the
# lambda; not an `if`: a pattern variable (`if (!(o instanceof T t)) return;`) outlives it
BINDING_BLOCKS: frozenset[str] = frozenset({
    "block", "switch_block", "for_statement", "enhanced_for_statement",
    "try_with_resources_statement", "catch_clause", "lambda_expression"})
# (a later declaration is another local: none reaches an earlier use, in a loop or not)
LOOPS: frozenset[str] = frozenset()
UNTYPED_REBINDS = False
# every local placed: one declared in a loop's header or a block is no name outside it
PLACES_EVERY_LOCAL = True
SQUARE_TYPE_ARGS = False  # type arguments in angle brackets (see name_paths.type_path)
QUALIFIED_SELF = "this"  # `Outer.this`: the instance of the enclosing class Outer
BINDS_TYPE_ARGUMENTS = True  # `List<Type> x`: x's type arguments bound apart (TYPE_ARGUMENTS)
# `formatter` of `class R extends Forwarding<D, AbstractFormatter>`: its `F formatter` read as
# an AbstractFormatter inside R (scopes)
READS_BASE_ARGUMENTS = True


def classify(sub: str, name: str, node: Any, source: bytes) -> str | None:
    if sub == "field":
        modifiers = declaration_modifiers(node)
        words = node_text(source, modifiers).split() if modifiers is not None else []
        if "static" in words and "final" in words:
            from knoxidx.core.model import NodeKind

            return NodeKind.CONSTANT.value
    return DEF_KINDS.get(sub)


def doc_comment(node: Any, source: bytes) -> str:
    return preceding_comment(node, source)


def is_exported(node: Any, name: str, nested: bool, source: bytes) -> bool | None:
    modifiers = declaration_modifiers(node)
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


class _Rules(BaseRules):
    super_call_constructs = True
    super_calls_constructor = True  # constructors named as their class
    this_calls_constructor = True
    new_calls_interfaces = True
    types_apart_from_values = True
    self_names = frozenset({"this"})
    self_binds_anywhere = True
    class_members_visible = True
    bindings_block_scoped = True
    places_every_local = True
    guess_members = True
    guess_outside_receivers = False
    fixed_arity_first = True
    # a local does not shadow a call (`helper()` is a method even where a local `helper` is in
    # scope): the resolver's side of what LOCAL_SHADOWS says to extraction
    locals_callable = RefKind.CALL in LOCAL_SHADOWS
    builtin_method_names = OBJECT_METHODS
    receivers_outside = True
    universal_methods = frozenset({"equals", "hashCode", "toString", "getClass", "notify",
                                   "notifyAll", "wait", "clone", "finalize"})
    element_callbacks = ELEMENT_CALLBACKS
    elements_kept = ELEMENTS_KEPT
    argument_results = ARGUMENT_RESULTS
    # three overloads the arguments cannot choose among: one right edge to two wrong ones
    # (javac P +0.19 pt for R -0.08 pt); two are still named, one of them right
    tied_overloads_kept = 2

    def special_head(self, r: ResolverView, fi: FileIndex, head: str, scope: int
                     ) -> list[Symbol] | None:
        """``super``: an instance of the superclass, none of the interfaces the class
        implements (whose default methods the superclass's override: `I.super.m()` names
        one)."""
        found = super().special_head(r, fi, head, scope)
        if not found:
            return found
        return [s for s in found
                if (d := r.definition((DEFINITION_TAG, s[1], s[2]))) is None
                or d.kind != "Interface"]

    def callback_parameter(self, declared: str, index: int = 0) -> str:
        return lambda_parameter(declared, index)

    def element_type(self, declared: str) -> str:
        return element_type(declared)

    def parameters(self, signature: str, name: str) -> tuple[int, int, tuple[str, ...]] | None:
        return parameters(signature, name)

    def written_type(self, signature: str, name: str) -> str:
        return written_type(signature, name)

    def argument_fits(self, r: ResolverView, fi: FileIndex, scope: int, argument: str,
                      target: Symbol, parameter: str) -> bool:
        return argument_fits(r, fi, scope, argument, target, parameter)

    def argument_is(self, r: ResolverView, fi: FileIndex, scope: int, argument: str, parameter: str
                   ) -> bool:
        return argument_is(r, fi, scope, argument, parameter)

    def module_keys(self, path: str, facts: FileFacts, layout: Any) -> list[str]:
        package = facts.package
        keys = [package or "(default)"]
        for d in facts.defs:
            if d.parent < 0 and d.kind in ("Class", "Interface"):
                keys.append(f"type:{package}.{d.name}" if package else f"type:{d.name}")
        return keys

    def qualified_prefix(self, path: str, keys: list[str]) -> str:
        return keys[0] if keys and keys[0] != "(default)" else ""

    def _type(self, r: ResolverView, qualified: str) -> list[Symbol]:
        """The class named by a fully qualified name, nested classes included (memoised: a
        miss tries every shorter prefix as an enclosing class)."""
        return r.memo(("java-type", qualified), self._find_type, r, qualified)

    def _find_type(self, r: ResolverView, qualified: str) -> list[Symbol]:
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

    def _package_type(self, r: ResolverView, package: str, name: str) -> list[Symbol]:
        """The top-level class ``name`` of ``package`` (memoised), without the shorter
        prefixes :meth:`_find_type` goes on to try: a class named like a package is a compile
        error in Java, so a miss looked each of them up in vain and kept them as dependencies
        of the file."""
        qualified = f"{package}.{name}" if package else name
        return r.memo(("java-top", qualified), self._find_top_level, r, qualified, name)

    @staticmethod
    def _find_top_level(r: ResolverView, qualified: str, name: str) -> list[Symbol]:
        """The class whose fully qualified name is ``qualified`` if it is a top-level one."""
        for path in r.module_paths(FAMILY, "type:" + qualified):
            pfi = r.index(path)
            hit = r.child(pfi, -1, name) if pfi else None
            if hit:
                return [(DEFINITION_TAG, path, hit[-1])]
        return []

    @staticmethod
    def _nested(r: ResolverView, found: list[Symbol], names: list[str]) -> list[Symbol]:
        """From the classes ``found``, the member each further name denotes in turn."""
        for name in names:
            found = next((m for m in (r.class_member(c[1], c[2], name) for c in found) if m), [])
            if not found:
                return []
        return found

    def import_binding(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        found = self._type(r, f"{imp.module}.{imp.name}")
        if found:
            return found
        for cls in self._type(r, imp.module):  # import static a.B.member
            members = r.class_member(cls[1], cls[2], imp.name)
            if members:
                return members
        return [(EXTERNAL_TAG, FAMILY, imp.module)]

    def outside_name(self, r: ResolverView, fi: FileIndex, name: str) -> bool:
        """A method no class in scope declares, where a static wildcard imports a class
        outside the index (`import static org.junit.Assert.*;`): that class's (not a type
        named so: a class the index does not find is rarely a static import's)."""
        return not looks_like_class(name) and any(
            w.reexport and not self._type(r, w.module) for w in fi.wildcards)

    def import_targets(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        if imp.name == "*":
            if imp.reexport:  # static wildcard: the class's file
                return [(FILE_TAG, s[1], 0) for s in self._type(r, imp.module)] or \
                    [(EXTERNAL_TAG, FAMILY, imp.module)]
            if r.module_paths(FAMILY, imp.module):
                return [(MODULE_TAG, FAMILY, imp.module)]
            return [(EXTERNAL_TAG, FAMILY, imp.module)]
        found = self._type(r, f"{imp.module}.{imp.name}") or self._type(r, imp.module)
        if found:
            return [(FILE_TAG, found[0][1], 0)]
        return [(EXTERNAL_TAG, FAMILY, imp.module)]

    def module_member(self, r: ResolverView, module: Symbol, name: str) -> list[Symbol]:
        if module[0] == MODULE_TAG:
            return self._type(r, f"{module[2]}.{name}")
        return []

    def module_fallback(self, r: ResolverView, fi: FileIndex, name: str) -> list[Symbol]:
        # it depends on the file's package and wildcard imports only: the files of a package
        # mostly share those, and read the same names
        package = fi.facts.package
        wildcards = tuple((w.module, w.reexport) for w in fi.wildcards)
        return r.memo(("java-fallback", package, wildcards, name),
                      self._fallback, r, package, wildcards, name)

    def _fallback(self, r: ResolverView, package: str, wildcards: tuple[tuple[str, bool], ...],
                  name: str) -> list[Symbol]:
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
            return [(MODULE_TAG, FAMILY, name)]
        # a class of java.lang (imported everywhere), or one named like a class where a
        # wildcard imports a package outside the index: a type outside it, whose methods no
        # definition of the index is guessed for (`Math.max(..)`, `TypeElement e; e.getKind()`)
        if name in JAVA_LANG or looks_like_class(name) and any(
                not static and not r.module_paths(FAMILY, module) for module, static in wildcards):
            return [(EXTERNAL_TAG, FAMILY, "java.lang" if name in JAVA_LANG else name)]
        return []


RULES = _Rules()


