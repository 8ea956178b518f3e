"""Java: packages, single-type/wildcard/static imports, same-package names, inherited members
visible by their bare name, ``new T()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import Import, RefKind
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, FILE_TAG, MODULE_TAG, Symbol
from knoxidx.languages.common import BaseRules, preceding_comment
from knoxidx.languages.java.argument_types import argument_type
from knoxidx.languages.java.arguments import FUNCTION_VALUE, NUMBER
from knoxidx.languages.java.arguments import call_arguments as call_arguments
from knoxidx.languages.java.elements import (
    ARGUMENT_RESULTS,
    ELEMENT_CALLBACKS,
    ELEMENTS_KEPT,
    element_type,
)
from knoxidx.languages.java.elements import indexed_receiver as indexed_receiver
from knoxidx.languages.java.jdk import (
    BOXES,
    FINAL_LANG,
    JAVA_LANG,
    JDK_COLLECTIONS,
    JDK_PACKAGES,
    JDK_SUPERTYPES,
    NOT_FUNCTIONAL,
    NUMBER_SUPERS,
    OBJECT_METHODS,
    PRIMITIVES,
    STRING_SUPERS,
    UNBOXES,
    VALUE_SUPERS,
    WIDENS,
    looks_like_class,
)
from knoxidx.languages.java.lambdas import callback_binding as callback_binding
from knoxidx.languages.java.lambdas import lambda_parameter
from knoxidx.languages.java.parameters import (
    looks_like_type_variable,
    parameters,
    type_parameters,
    written_type,
)
from knoxidx.languages.java.signatures import declaration_modifiers
from knoxidx.languages.java.signatures import signature_of as signature_of
from knoxidx.parse.definitions import DEF_KINDS, node_text
from knoxidx.parse.file_index import FileIndex
from knoxidx.parse.name_paths import name_path

if TYPE_CHECKING:
    from knoxidx.core.facts import FileFacts
    from knoxidx.languages.protocol import ResolverView

FAMILY = "java"
# More names than this in a qualified name is no class of any real program.
MAX_QUALIFIED_NAMES = 64
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


# ---- resolution ----------------------------------------------------------------------------


def _argument_fits(r: ResolverView, fi: FileIndex, scope: int, argument: str, target: Symbol,
                   parameter: str) -> bool:
    """Whether an argument of the static type ``argument`` (call_arguments') may be passed
    to a parameter of type ``parameter`` (_parameter_type's) of the method ``target``: False
    only where it certainly may not."""
    if parameter == "?":
        return True
    if argument == FUNCTION_VALUE:
        return _takes_function(r, target, parameter)
    argument, classes = argument_type(r, fi, scope, argument)
    if not argument:
        return True
    if argument == "null":
        return parameter not in PRIMITIVES
    if argument == NUMBER:  # (`a / 1000`: int, long, double..: a number's parameter, boxed or not)
        declared = parameter.rpartition(".")[2]
        return parameter != "boolean" if parameter in PRIMITIVES else \
            declared in NUMBER_SUPERS or declared in UNBOXES and declared != "Boolean"
    if argument.endswith("]"):  # an array (a field's, what a method returns)
        if not parameter.endswith("]"):
            return True  # (a varargs' element, Object, Cloneable: not told apart here)
        element, wanted = argument[:-2], parameter[:-2]
        return element == wanted if element in PRIMITIVES or wanted in PRIMITIVES else True
    if parameter.endswith("]"):  # an array: no other argument is one
        return False
    declared = parameter.rpartition(".")[2]
    widened = WIDENS.get(argument)
    if widened is not None:  # a primitive
        if parameter in PRIMITIVES:
            return parameter in widened
        supers = NUMBER_SUPERS if argument not in ("char", "boolean") else VALUE_SUPERS
        return declared == BOXES[argument] or declared in supers
    if argument == "String":
        return declared in STRING_SUPERS
    given = argument.rpartition(".")[2]  # a class type
    if parameter in PRIMITIVES:
        unboxed = UNBOXES.get(given)
        return unboxed is None and looks_like_type_variable(given) or \
            unboxed is not None and parameter in WIDENS[unboxed]
    if declared == given or declared in VALUE_SUPERS or looks_like_type_variable(given):
        return True
    return _may_extend(r, fi, scope, argument, given, classes, target, parameter, declared)


def _takes_function(r: ResolverView, target: Symbol, parameter: str) -> bool:
    """Whether a lambda or a method reference may be passed to a parameter of type
    ``parameter`` of the method ``target``: not to a primitive, an array, a value class of
    java.lang, nor a class of the index (a functional interface is an interface)."""
    if parameter in PRIMITIVES or parameter.endswith("]") \
            or parameter.rpartition(".")[2] in NOT_FUNCTIONAL:
        return False
    declaring = r.index(target[1])
    if declaring is None or _class_type_variable(declaring, target[2], parameter):
        return True
    wanted = [s for s in r.resolve_path(declaring, name_path(parameter), target[2])[0]
              if s[0] == DEFINITION_TAG]
    return not wanted or any(d is None or d.kind != "Class"
                             for d in (r.definition(s) for s in wanted))


def _argument_is(r: ResolverView, fi: FileIndex, scope: int, argument: str, parameter: str) -> bool:
    """Whether the parameter is declared of the argument's very type: of the overloads an
    argument fits, javac calls the most specific, and one of its exact type is."""
    if parameter == "?":
        return False
    given = argument_type(r, fi, scope, argument)[0]
    return bool(given) and given != "null" and \
        given.rpartition(".")[2] == parameter.rpartition(".")[2]


def _may_extend(r: ResolverView, fi: FileIndex, scope: int, argument: str, given: str,
                classes: list[Symbol] | None, target: Symbol, parameter: str,
                declared: str) -> bool:
    """Whether the class ``argument`` may be the type ``parameter`` or a subtype of it: not
    where the parameter's is a class of the index that is none of the argument's bases; not
    where it is a class outside the index (or a final class of java.lang) and the argument's
    is one of the index whose every base is in the index too."""
    declaring = r.index(target[1])
    if declaring is None:
        return True
    if _class_type_variable(declaring, target[2], declared):
        return True
    wanted = [s for s in r.resolve_path(declaring, name_path(parameter), target[2])[0]
              if s[0] == DEFINITION_TAG]
    if not wanted and declared in FINAL_LANG:
        return declared == given
    if classes is None:
        found = r.resolve_path(fi, name_path(argument), scope)[0]
        classes = [s for s in found if s[0] == DEFINITION_TAG]
        if not classes:  # a class outside the index (no subtype of one in it), or not known
            if not wanted and declared in JDK_COLLECTIONS and given not in JDK_COLLECTIONS \
                    and found and all(s[0] == EXTERNAL_TAG and s[2].startswith(JDK_PACKAGES)
                                      for s in found):
                return False  # a JDK type that is none of its collections (`Location`)
            return not wanted or not (given in FINAL_LANG
                                      or any(s[0] == EXTERNAL_TAG for s in found))
    elif not classes:  # a class outside the index, where the value's declaration names it
        return not wanted
    seen = set(classes)
    for _ in range(MAX_QUALIFIED_NAMES):
        if any(w in seen for w in wanted):
            return True
        bases: list[Symbol] = []
        for c in classes:
            resolved = r.bases_of(c[1], c[2])
            if not wanted:  # a type outside the index: only through a base outside it
                c_index = r.index(c[1])
                if c_index is None or (len(c_index.bases.get(c[2], ())) > len(resolved)
                                       and _outside_base_may_be(r, c_index, c[2], resolved,
                                                                declared)):
                    return True
            bases.extend(b for b in resolved if b not in seen)
        if not bases:
            return False
        seen.update(bases)
        classes = bases
    return True


def _outside_base_may_be(r: ResolverView, fi: FileIndex, index: int, resolved: list[Symbol],
                         declared: str) -> bool:
    """Whether a base outside the index of the class at ``index`` (its bases the index has:
    ``resolved``) may make it a ``declared`` (a type outside the index): not where each of
    those is a JDK type that is known to be none (``JDK_SUPERTYPES``)."""
    inside = {d.name for d in (r.definition(s) for s in resolved) if d is not None}
    for ref in fi.bases.get(index, ()):
        name = ref.path[-1].partition("<")[0] if ref.path else ""
        if name in inside:
            continue
        supers = JDK_SUPERTYPES.get(name)
        if supers is None or name == declared or declared in supers:
            return True
    return False


def _class_type_variable(fi: FileIndex, method: int, name: str) -> bool:
    """Whether ``name`` is a type variable of a class around the method at ``method``
    (`class Scanner<R, P>`: the signatures of the classes say)."""
    defs = fi.facts.defs
    s = defs[method].parent
    while s >= 0:
        head = defs[s].signature.partition("{")[0]
        if "<" in head and name in type_parameters(head.replace(defs[s].name, "", 1)):
            return True
        s = defs[s].parent
    return False


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
        return _argument_fits(r, fi, scope, argument, target, parameter)

    def argument_is(self, r: ResolverView, fi: FileIndex, scope: int, argument: str, parameter: str
                   ) -> bool:
        return _argument_is(r, fi, scope, argument, parameter)

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


