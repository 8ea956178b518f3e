"""Python: imports, docstrings, exports, returned values, and the family's resolution rules. The
family's hooks module; how a module path maps to a file and what an import binds are in
``modules``, a ``def``'s signature in ``signatures``."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import Import, NamePath, RefKind
from knoxidx.core.model import NodeKind
from knoxidx.core.symbols import Symbol
from knoxidx.languages.common import first_doc_line
from knoxidx.languages.python import decorators, elements, fixtures, outside
from knoxidx.languages.python.elements import element_binding as element_binding
from knoxidx.languages.python.elements import elements_binding as elements_binding
from knoxidx.languages.python.modules import FAMILY as FAMILY
from knoxidx.languages.python.modules import ModuleImports
from knoxidx.languages.python.signatures import signature_of as signature_of
from knoxidx.parse.definitions import DEF_KINDS, node_text
from knoxidx.parse.file_index import FileIndex
from knoxidx.parse.name_paths import name_path

if TYPE_CHECKING:
    from knoxidx.core.facts import Definition
    from knoxidx.languages.protocol import ResolverView


def classify(sub: str, name: str, node: Any, source: bytes) -> str | None:
    if sub in ("function", "method") and _is_overload_stub(node, name, source):
        return None  # `@overload def f(...): ...` before its implementation: one symbol, the body
    if sub == "variable":
        if name.isupper() or (name[:1].isupper() and name.replace("_", "").isupper()):
            return NodeKind.CONSTANT.value
        return NodeKind.VARIABLE.value
    if sub == "field":
        return NodeKind.VARIABLE.value
    return DEF_KINDS.get(sub)


def _is_overload_stub(node: Any, name: str, source: bytes) -> bool:
    """A ``@typing.overload`` signature followed, in the same body, by the ``def`` it
    describes (not in a stub file or a Protocol, where the signatures are all there is). The
    signatures and the body come one after the other; the walk looks at most
    ``OVERLOAD_RUN`` of them ahead, so that a file of thousands of stubs costs linear time
    (3,000 of them took 12 s unbounded)."""
    decorated = node.parent
    if decorated is None or decorated.type != "decorated_definition" \
            or not _has_overload_decorator(decorated, source):
        return False
    sibling = decorated.next_named_sibling
    for _ in range(OVERLOAD_RUN):
        if sibling is None:
            return False
        if sibling.type == "decorated_definition":
            if not _defines(sibling.child_by_field_name("definition"), name, source):
                return False
            if not _has_overload_decorator(sibling, source):
                return True  # the body, decorated otherwise
        elif sibling.type == "function_definition":
            return _defines(sibling, name, source)
        elif sibling.type != "comment":
            return False
        sibling = sibling.next_named_sibling
    return False


def _has_overload_decorator(decorated: Any, source: bytes) -> bool:
    for child in decorated.named_children:
        if child.type == "decorator":
            written = node_text(source, child).lstrip("@").strip()
            if written == "overload" or written.endswith(".overload"):
                return True
    return False


def _defines(node: Any, name: str, source: bytes) -> bool:
    if node is None or node.type != "function_definition":
        return False
    defined = node.child_by_field_name("name")
    return defined is not None and node_text(source, defined) == name


def doc_comment(node: Any, source: bytes) -> str:
    body = node.child_by_field_name("body")
    first = body.named_child(0) if body is not None and body.named_child_count else None
    if first is not None and first.type == "expression_statement":
        inner = first.named_child(0) if first.named_child_count else None
        if inner is not None and inner.type == "string":
            return first_doc_line(node_text(source, inner))
    return ""


def is_exported(node: Any, name: str, nested: bool, source: bytes) -> bool | None:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def package_name(raw: str) -> str:
    return raw


def decode_import(node: Any, scope: int, source: bytes) -> list[Import]:
    line = node.start_point[0] + 1
    out: list[Import] = []
    if node.type == "import_statement":
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                module = node_text(source, child.child_by_field_name("name"))
                alias = node_text(source, child.child_by_field_name("alias"))
                out.append(Import(module, "", alias, line, scope))
            else:
                module = node_text(source, child)
                top = module.split(".", 1)[0]
                out.append(Import(top, "", top, line, scope))
                if module != top:  # `import a.b` binds `a` but also loads a.b
                    out.append(Import(module, "", "", line, scope))
        return out
    module_node = node.child_by_field_name("module_name")
    module = node_text(source, module_node).replace(" ", "") if module_node is not None else ""
    names = node.children_by_field_name("name")
    if not names:
        if any(c.type == "wildcard_import" for c in node.children):
            out.append(Import(module, "*", "", line, scope))
        return out
    for child in names:
        if child.type == "aliased_import":
            name = node_text(source, child.child_by_field_name("name"))
            alias = node_text(source, child.child_by_field_name("alias"))
            out.append(Import(module, name, alias, line, scope))
        else:
            name = node_text(source, child)
            out.append(Import(module, name, name, line, scope))
    return out


# what a `return` statement returns where it returns nothing (`return`, `return None`)
NOTHING_RETURNED: tuple[NamePath, bool] = ((), False)
_SELF_NAMES = frozenset({"self", "cls"})
# read on the receiver, a new object of its own class: `self.__class__(..)`, `cls.__new__(cls)`
_OWN_CLASS = frozenset({("__class__",), ("__new__",), ("__class__", "__new__")})


def returned_value(node: Any, source: bytes) -> tuple[NamePath, bool] | None:
    """What a `return` statement's value holds (see ``ReadsReturns``): the path a call calls
    (`return Foo(..)`, `return self._make()`), or a name or an attribute read (`return self`,
    `return c`, `return self._engine`); NOTHING_RETURNED for `return` and `return None`;
    None for any other expression (`return a, b`, `return x or y`), whose type is not read."""
    if node.type != "return_statement":  # a generator's `yield`, an `async def`'s coroutine
        return None
    value = next((c for c in node.named_children if c.type != "comment"), None)
    return _value_read(value, source) if value is not None else NOTHING_RETURNED


def _value_read(value: Any, source: bytes) -> tuple[NamePath, bool] | None:
    """What a returned (or yielded) expression holds (see ``returned_value``)."""
    while value is not None and value.type == "parenthesized_expression" \
            and value.named_child_count == 1:
        value = value.named_child(0)
    if value is None or value.type == "none":
        return NOTHING_RETURNED
    called = value.type == "call"
    if called:
        value = value.child_by_field_name("function")
        if value is not None and value.type == "call":  # `type(self)(..)`
            inner = value.child_by_field_name("function")
            arguments = value.child_by_field_name("arguments")
            if inner is not None and arguments is not None and node_text(source, inner) == "type" \
                    and node_text(source, arguments).strip("() ") in _SELF_NAMES:
                return (node_text(source, arguments).strip("() "),), False
            return None
    if value is None or value.type not in ("identifier", "attribute"):
        return None
    path = name_path(node_text(source, value))
    return returned_path(path, called) if path else None


def yielded_value(node: Any, source: bytes) -> tuple[NamePath, bool] | None:
    """What a generator's `yield` statement gives, as ``returned_value`` reads a `return`'s
    value; NOTHING_RETURNED for a `return` (a generator's says when it stops) and a bare
    `yield`; None for `yield from`, an `async def` and a value whose type is not read."""
    if node.type == "return_statement":
        return NOTHING_RETURNED
    if node.type != "yield" or any(c.type == "from" for c in node.children):
        return None
    value = next((c for c in node.named_children if c.type != "comment"), None)
    if value is None:
        return NOTHING_RETURNED
    return _value_read(value, source)


def returned_path(path: NamePath, called: bool) -> tuple[NamePath, bool]:
    """What a returned binding holds (see ``ReadsReturns``): an instance of the receiver's
    class for a new object made of it (`self.__class__.__new__(self.__class__)`, the
    `_clone` idiom), else what the binding says."""
    if called and path[0] in _SELF_NAMES and path[1:] in _OWN_CLASS:
        return path[:1], False
    return path, called


# ---- resolution ----------------------------------------------------------------------------

# One namespace: a parameter or local hides any same-named definition outside.
LOCAL_SHADOWS = frozenset({RefKind.VALUE, RefKind.CALL, RefKind.NEW})
# declarations whose type is read from the node, not matched (see go.py)
TYPE_AFTER_NAMES: frozenset[str] = frozenset()
# Which of a local's bindings reaches a use (see binding_sites): a binding in a block (an if's
# branch, a try's body) may not run before a use past it; a loop's later binding may reach its
# earlier uses on the next turn
BINDING_BLOCKS: frozenset[str] = frozenset({"block"})
LOOPS: frozenset[str] = frozenset({"for_statement", "while_statement"})
UNTYPED_REBINDS = True
PLACES_EVERY_LOCAL = False
# `self.x = x` gives the field the type of the local it copies (binding_types._fields_from_locals)
FIELDS_COPY_LOCALS = True
OVERLOAD_RUN = 64  # signatures of one overloaded function looked ahead at most
SQUARE_TYPE_ARGS = True  # type arguments in square brackets: `Select[Any]`, and string annotations
# Methods of builtin types: `x.append()` on an unknown `x` is far likelier a list than the one
# project class that happens to define `append`, so these names are never guessed.
_BUILTIN_METHODS = frozenset(
    name
    for t in (list, dict, str, set, frozenset, bytes, bytearray, int, float, tuple, object,
              io.TextIOWrapper, io.BytesIO)
    for name in dir(t)
    if not name.startswith("__")
)


# decorators that make a method an attribute read (`@memoized_property`, `@memoized_attribute`)
_PROPERTY_SUFFIXES = ("property", "memoized_attribute")
_BUILTIN_PROPERTIES = frozenset({"property", "cached_property"})


class _Rules(ModuleImports):
    self_names = frozenset({"self", "cls"})
    self_type_names = frozenset({"Self"})
    self_binds_anywhere = True
    guess_members = False
    rebinding_changes_type = True
    builtin_method_names = _BUILTIN_METHODS

    def read_as_value(self, decorators: tuple[str, ...]) -> bool:
        # `@property`, `@functools.cached_property`, a project's `@util.memoized_property`
        return any(d.partition("(")[0].rpartition(".")[2].endswith(_PROPERTY_SUFFIXES)
                   for d in decorators)

    def returns_read(self, decorators: tuple[str, ...]) -> bool:
        # `@property`, `@functools.cached_property`: what the method returns. A project's own
        # descriptor (`@util.memoized_property`) gives what its `__get__` does; jedi does not
        # read through one, and the sampled sites so read had no oracle answer (8 of 8)
        return any(d.rpartition(".")[2] in _BUILTIN_PROPERTIES for d in decorators)

    def qualified_prefix(self, path: str, keys: list[str]) -> str:
        return keys[0] if keys else ""

    def injected(self, r: ResolverView, fi: FileIndex, scope: int, name: str) -> list[Symbol]:
        return fixtures.injected(r, fi, scope, name)  # pytest's fixture of that name

    def yielded_type(self, declared: str) -> str:
        return fixtures.yielded_type(declared)

    def element_type(self, declared: str) -> str:
        return elements.element_type(declared)

    def decorated_types(self, r: ResolverView, fi: FileIndex, index: int) -> list[Symbol]:
        return decorators.decorated_types(r, fi, index)

    def looked_up_as(self, definition: Definition) -> tuple[str, ...]:
        return fixtures.looked_up_as(definition)

    def outside_call(self, r: ResolverView, fi: FileIndex, scope: int, path: NamePath,
                     site: int) -> bool:
        # a bare builtin resolved to the builtins' external symbol already: only a method
        return len(path) > 1 and outside.outside_receiver(r, fi, path, scope, site)


RULES = _Rules()
