"""What a Rust binding's declared type stands for where it names no type of its own: a type
parameter's bounds (`v: &mut V` where `V: Visit + ?Sized`), `impl A + B` and `dyn A + B`; and
what `for x in xs` binds x to: an element of xs, read where xs is declared (resolution)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from knoxidx.core.facts import (
    ELEMENT_OF,
    TYPES_JOINER,
    Binding,
    Definition,
    NamePath,
    payload_name,
)
from knoxidx.parse.definitions import binding_scope, node_text
from knoxidx.parse.name_paths import name_path, split_top_level

# bounds with no methods for a call to mean: left out of a value's types
_MARKER_TRAITS = frozenset({"Send", "Sync", "Sized", "Unpin", "Copy"})
# the items that declare type parameters a function's parameters may be of
_GENERIC_ITEMS = frozenset({"function_item", "function_signature_item", "impl_item", "trait_item"})
_FUNCTIONS = frozenset({"function_item", "function_signature_item"})
_BOUNDED = frozenset({"abstract_type", "dynamic_type", "bounded_type"})
_DEREF_WRAPPERS = frozenset({"Box", "Arc", "Rc"})
# `for x in xs.iter()`: the same elements as `for x in xs` (by reference)
_ITERATION = frozenset({"iter", "iter_mut", "into_iter"})
MAX_BOUNDS = 4  # the resolver reads at most four types of a value
_UNCOUNTED = ".."  # the place of a name after `..` in a payload's pattern: no place's


def declared_binding_type(type_node: Any, source: bytes) -> NamePath | None:
    """The bounds a declared type stands for, joined by ``TYPES_JOINER``: those of the type
    parameter it names (declared on the function or on the impl or trait around it), or
    those written (`impl Read + Write`, `&dyn Visit`, `Box<dyn Fold + Send>`); () where none
    has methods to call; None for a type of its own name, read as other declared types are.
    For a name in a pattern `E::V(_, x)` (``type_node`` the name's own node) or `E::S { a, b:
    x }` (the field's pattern), the variant's path and the name's place in its payload (see
    ``PAYLOAD_OF``)."""
    parent = type_node.parent
    if parent is not None and parent.type == "tuple_struct_pattern":
        return _payload_place(type_node, parent, source)
    if type_node.type == "field_pattern" and parent is not None:  # `E::S { a, b: x, .. }`
        variant, field = parent.child_by_field_name("type"), type_node.child_by_field_name("name")
        path = name_path(node_text(source, variant)) if variant is not None else ()
        return (*path, payload_name("", node_text(source, field))) \
            if field is not None and path and path[0] != "?" else ()
    node = type_node
    while node.type == "reference_type":
        inner = node.child_by_field_name("type")
        if inner is None:
            return None
        node = inner
    kind = node.type
    if kind == "type_identifier":
        bounds = _parameter_bounds(node, node_text(source, node), source)
        return None if bounds is None else _joined(bounds, source)
    if kind == "generic_type":  # `Box<dyn A + B>` derefs to its trait objects
        wrapper = node.child_by_field_name("type")
        arguments = node.child_by_field_name("type_arguments")
        if (wrapper is None or arguments is None or arguments.named_child_count != 1
                or node_text(source, wrapper) not in _DEREF_WRAPPERS):
            return None
        node = arguments.named_children[0]
        kind = node.type
    if kind in _BOUNDED:
        return _joined(_written_bounds(node), source)
    return None


def _payload_place(element: Any, pattern: Any, source: bytes) -> NamePath:
    """(*the variant's path, its payload's place) for the name ``element`` (`x`, `mut x`,
    `ref x`) of the pattern `E::V(_, x)`; () for the variant's own name and a capitalised one
    (a constant, a unit variant: `E::V(None)` binds nothing). A name written after `..`
    (counted from the end) is bound to no place, which still hides a name bound outside."""
    variant = pattern.child_by_field_name("type")
    if variant is None or variant.start_byte == element.start_byte:
        return ()
    if node_text(source, element).split()[-1][:1].isupper():
        return ()
    path = name_path(node_text(source, variant))
    if not path or path[0] == "?":
        return ()
    place, sibling = 0, element.prev_sibling
    while sibling is not None and sibling.start_byte > variant.start_byte:
        if sibling.type == "remaining_field_pattern":
            return (*path, payload_name("", _UNCOUNTED))
        place += sibling.type == ","
        sibling = sibling.prev_sibling
    return (*path, payload_name("", place))


def type_parameter_bindings(root: Any, refs: Sequence[tuple[Any, ...]],
                            defs: Sequence[Definition], source: bytes) -> list[Binding]:
    """For each function whose code starts a path at a bounded type parameter (`L::from_raw(p)`
    where `impl<L: Link>` or `fn f<L: Link>`), a binding of that name to its bounds, so that
    the path goes on from them. Only heads the file declares as type parameters somewhere are
    looked for in the tree (most `X::y` paths name a type or a module)."""
    declared = _declared_parameters(source)
    for d in defs:  # a function's own, as its signature lists them (`T: Link`, `'a`)
        if d.signature_data and len(d.signature_data) == 4:
            declared.update(match.group() for match in map(_NAME.match, d.signature_data[2])
                            if match)
    if not declared:
        return []
    definitions = list(defs)
    out: list[Binding] = []
    seen: set[tuple[int, str]] = set()
    for ref in refs:
        path, scope = ref[1], ref[2]
        if len(path) < 2 or scope < 0 or path[0] not in declared:
            continue
        head = path[0]
        function = binding_scope(definitions, scope)
        if function < 0 or (function, head) in seen:  # (a `const`'s value at the top level)
            continue
        seen.add((function, head))
        bounds = _function_parameter_bounds(root, definitions[function], head, source)
        joined = _joined(bounds, source) if bounds else ()
        if joined:
            out.append(Binding(function, head, joined, False))
    return out


def _function_parameter_bounds(root: Any, function: Definition, name: str, source: bytes
                               ) -> list[Any] | None:
    """:func:`_parameter_bounds` for a function definition, found from the root down (a
    node's parent is found that way too, from the root, at each step up)."""
    node = root.descendant_for_byte_range(function.start_byte, function.end_byte)
    if node is None or node.type not in _FUNCTIONS:
        return None
    bounds = _declared_bounds(node, name, source)
    if bounds is not None:
        return bounds
    body = node.parent  # a method's impl or trait
    item = body.parent if body is not None and body.type == "declaration_list" else None
    if item is None or item.type not in _GENERIC_ITEMS:
        return None
    return _declared_bounds(item, name, source)


def _declared_parameters(source: bytes) -> set[str]:
    """The capitalised names in the type parameter lists of the file's `impl<..>` and
    `trait T<..>` (and the types their bounds name: a superset, read from the text)."""
    names: set[str] = set()
    for pattern in _GENERICS_OPENINGS:
        for opening in pattern.finditer(source):
            start = opening.end() - 1
            # up to the parameters' or the body's opening (a bound's `Fn(..)` ends it early)
            end = _LIST_END.search(source, start, start + _LONGEST_PARAMETERS)
            names.update(n.decode() for n in _PARAMETER_NAME.findall(
                source, start, end.start() if end else start + _LONGEST_PARAMETERS))
    return names


# one pattern each, each starting with its literal: the regex engine then skips to the
# literal's places, where one pattern of alternatives tried every byte (+5 % of extraction)
_GENERICS_OPENINGS = (re.compile(rb"impl\s*<"), re.compile(rb"trait\s+\w+\s*<"))
_NAME = re.compile(r"[A-Z]\w*")
_LIST_END = re.compile(rb"[({;]")
_PARAMETER_NAME = re.compile(rb"[<,]\s*([A-Z]\w*)")
_LONGEST_PARAMETERS = 1000


def element_binding(value_node: Any, source: bytes) -> tuple[NamePath, bool]:
    """What `for x in EXPR` binds x to: the path of the collection EXPR names (through `&`,
    `&mut`, `.iter()`, `.iter_mut()`, `.into_iter()`; a call's last segment with its "()")
    followed by ``ELEMENT_OF``, which the resolver reads where the collection is declared
    (a parameter's, a field's or a function's return type). ((), False) for anything else."""
    node = value_node
    for _ in range(4):
        if node.type == "reference_expression":
            inner = node.child_by_field_name("value")
        elif node.type == "call_expression":
            inner = _iterated(node, source)
        else:
            break
        if inner is None:
            break
        node = inner
    if node.type in ("identifier", "field_expression", "scoped_identifier"):
        path = name_path(node_text(source, node))
    elif node.type == "call_expression":
        function = node.child_by_field_name("function")
        if function is None or function.type not in (
                "identifier", "field_expression", "scoped_identifier"):
            return (), False
        path = name_path(node_text(source, function))
        path = (*path[:-1], path[-1] + "()") if path else ()
    else:
        return (), False
    if not path or path[0] == "?":
        return (), False
    return (*path, ELEMENT_OF), False


def element_type(declared: str) -> str:
    """The type of the elements of a collection declared ``declared`` (a field's declaration
    `books: Vec<Book>` too): `Vec<T>`, `VecDeque<T>`, `HashSet<T>`, `BTreeSet<T>`,
    `Option<T>`, `[T]`, `[T; N]`, a slice iterator `Iter<'a, T>` and `impl Iterator<Item = T>`
    give T; so do std's cells and locks, which hold one T (`Mutex<T>`, `RefCell<T>`: what
    `lock()` and `borrow()` lend), and a `Result<T, E>`, through the `Box`, `Arc` or `Rc`
    around them; "" for others (a map's, a tuple's elements)."""
    text = collection_type(declared)
    while (wrapped := DEREF_WRAPPED.match(text)) is not None:
        text = _REFERENCE.sub("", wrapped.group(1), count=1).strip()
    result = _RESULT.match(text)
    if result is not None:  # `Result<T, E>`: what `unwrap()` hands back is the T
        arguments = split_top_level(result.group(1), ",")
        return arguments[0].strip() if len(arguments) <= 2 else ""
    if text.startswith("["):
        inner = text[1:].rstrip().removesuffix("]")
        element = split_top_level(inner, ";")[0]
    else:
        item = _ITEM.search(text) if "Item" in text else None
        if item is not None and text.startswith(("impl", "Box<dyn", "dyn")):
            element = item.group(1)
        else:
            collection = _COLLECTION.match(text)
            if collection is None:
                return ""
            arguments = [a.strip() for a in split_top_level(collection.group(1), ",")]
            types = [a for a in arguments if a and not a.startswith("'")]
            if len(types) != 1:
                return ""
            element = types[0]
    element = element.strip()
    return "" if not element or element.startswith("(") else element


_FIELD = re.compile(r"(?:pub(?:\s*\([^)]*\))?\s+)?\w+\s*:(?!:)(.*)\Z", re.DOTALL)
_REFERENCE = re.compile(r"\A(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)+")
_COLLECTION = re.compile(
    r"(?:(?:std|core|alloc)::\w+::)?(?:Vec|VecDeque|HashSet|BTreeSet|BinaryHeap|LinkedList|"
    r"Option|Iter|IterMut|IntoIter|Cell|RefCell|Mutex|RwLock)\s*<(.*)>\Z", re.DOTALL)
# `Box<T>`, `Arc<T>`, `Rc<T>` as written: T inside
DEREF_WRAPPED = re.compile(r"(?:(?:std|alloc)::\w+::)?(?:Box|Arc|Rc)\s*<(.*)>\Z", re.DOTALL)
_RESULT = re.compile(r"(?:\w+::)*Result\s*<(.*)>\Z", re.DOTALL)
_ITEM = re.compile(r"\b(?:Into)?Iterator\s*<\s*Item\s*=\s*(.*)>\s*>?\s*(?:\+.*)?\Z", re.DOTALL)


def collection_type(declared: str) -> str:
    """The type a collection declared ``declared`` is of (a field's declaration's type),
    without its references: `&'a Pairs<T, P>` is a `Pairs<T, P>`."""
    field = _FIELD.match(declared)
    text = (field.group(1) if field else declared).strip()
    return _REFERENCE.sub("", text, count=1).strip()


def _iterated(call: Any, source: bytes) -> Any:
    """The receiver of `xs.iter()` (or `iter_mut`, `into_iter`) without arguments, else None."""
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if (function is None or function.type != "field_expression" or arguments is None
            or arguments.named_child_count):
        return None
    field = function.child_by_field_name("field")
    if field is None or node_text(source, field) not in _ITERATION:
        return None
    return function.child_by_field_name("value")


def _parameter_bounds(node: Any, name: str, source: bytes) -> list[Any] | None:
    """The bound nodes of the type parameter ``name`` in scope at ``node``: the innermost
    function's, else the impl's or trait's around it (a function nested in another sees
    none of the outer one's); None where no item declares it (a type of that name)."""
    functions_met = 0
    scope = node.parent
    while scope is not None:
        kind = scope.type
        if kind in _GENERIC_ITEMS:
            if kind in _FUNCTIONS:
                functions_met += 1
                if functions_met > 1:
                    return None
            bounds = _declared_bounds(scope, name, source)
            if bounds is not None:
                return bounds
            if kind not in _FUNCTIONS:
                return None
        elif kind == "mod_item":
            return None
        scope = scope.parent
    return None


def _declared_bounds(item: Any, name: str, source: bytes) -> list[Any] | None:
    """The bounds ``item`` gives its type parameter ``name`` (in `<V: A>` and in its `where`
    clause), or None where it declares no such parameter."""
    parameters = item.child_by_field_name("type_parameters")
    if parameters is None:
        return None
    bounds: list[Any] = []
    for parameter in parameters.named_children:
        if parameter.type != "type_parameter":
            continue
        declared = parameter.child_by_field_name("name")
        if declared is not None and node_text(source, declared) == name:
            written = parameter.child_by_field_name("bounds")
            if written is not None:
                bounds.extend(written.named_children)
            break
    else:
        return None
    for child in item.children:
        if child.type != "where_clause":
            continue
        for predicate in child.named_children:
            left = predicate.child_by_field_name("left")
            if left is not None and left.type == "type_identifier" and \
                    node_text(source, left) == name:
                written = predicate.child_by_field_name("bounds")
                if written is not None:
                    bounds.extend(written.named_children)
    return bounds


def _written_bounds(node: Any) -> list[Any]:
    """The traits `impl A + B`, `dyn A` or a `bounded_type` writes."""
    if node.type in ("abstract_type", "dynamic_type"):
        trait = node.child_by_field_name("trait")
        return [trait] if trait is not None else []
    out: list[Any] = []
    for child in node.named_children:
        out.extend(_written_bounds(child) if child.type in _BOUNDED else [child])
    return out


def _joined(bounds: list[Any], source: bytes) -> NamePath:
    paths: list[NamePath] = []
    for bound in bounds:
        if bound.type == "generic_type":  # `Visit<'ast>`
            bound = bound.child_by_field_name("type")
        if bound is None or bound.type not in ("type_identifier", "scoped_type_identifier"):
            continue  # `?Sized`, a lifetime, `for<'a> Fn(...)`
        path = name_path(node_text(source, bound))
        if path and path[0] != "?" and path[-1] not in _MARKER_TRAITS:
            paths.append(path)
    joined: list[str] = []
    for path in paths[:MAX_BOUNDS]:
        if joined:
            joined.append(TYPES_JOINER)
        joined.extend(path)
    return tuple(joined)
