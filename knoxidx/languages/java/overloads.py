"""Whether a call's argument fits a parameter of an overload (javac's applicability, where it
is certain): primitives and their widening and boxing, arrays, lambdas, and the subtypes of the
index's classes and of the JDK's types."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, Symbol
from knoxidx.languages.java.argument_types import argument_type
from knoxidx.languages.java.arguments import FUNCTION_VALUE, NUMBER
from knoxidx.languages.java.jdk import (
    BOXES,
    FINAL_LANG,
    JDK_COLLECTIONS,
    JDK_PACKAGES,
    JDK_SUPERTYPES,
    NOT_FUNCTIONAL,
    NUMBER_SUPERS,
    PRIMITIVES,
    STRING_SUPERS,
    UNBOXES,
    VALUE_SUPERS,
    WIDENS,
)
from knoxidx.languages.java.parameters import looks_like_type_variable, type_parameters
from knoxidx.parse.file_index import FileIndex
from knoxidx.parse.name_paths import name_path

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolverView


# More names than this in a qualified name is no class of any real program.
MAX_QUALIFIED_NAMES = 64


def argument_fits(r: ResolverView, fi: FileIndex, scope: int, argument: str, target: Symbol,
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


def argument_is(r: ResolverView, fi: FileIndex, scope: int, argument: str, parameter: str) -> bool:
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
