"""What a lambda's untyped parameter holds: the functional interface of java.util a declared
local, field or return type gives it, or the position it is passed at to a named method."""

from __future__ import annotations

from typing import Any

from knoxidx.core.facts import CALLBACK_OF, NamePath
from knoxidx.languages.common import COMMENT_TYPES
from knoxidx.languages.java.arguments import call_fields
from knoxidx.parse.definitions import node_text
from knoxidx.parse.name_paths import reference_path, split_top_level, type_path

# The functional interfaces of java.util (function, Comparator) by their simple names: which of
# its type arguments each parameter of a lambda of that type is (`BiFunction<T, U, R>`: T, U)
_FUNCTION_PARAMETERS: dict[str, tuple[int, ...]] = {
    "Consumer": (0,), "Predicate": (0,), "Function": (0,), "UnaryOperator": (0,),
    "ToIntFunction": (0,), "ToLongFunction": (0,), "ToDoubleFunction": (0,),
    "ObjIntConsumer": (0,), "ObjLongConsumer": (0,), "ObjDoubleConsumer": (0,),
    "BiConsumer": (0, 1), "BiFunction": (0, 1), "BiPredicate": (0, 1),
    "ToIntBiFunction": (0, 1), "ToLongBiFunction": (0, 1), "ToDoubleBiFunction": (0, 1),
    "BinaryOperator": (0, 0), "Comparator": (0, 0),
}
_LAMBDA_HOLDERS = frozenset({"local_variable_declaration", "field_declaration"})


def callback_binding(parameter: Any, source: bytes) -> NamePath:
    """What a lambda's untyped parameter holds (`xs.forEach(x -> ..)`, `(a, b) -> ..`): passed
    to a method, the called path, then ``CALLBACK_OF`` with the lambda's position among the
    call's arguments and, past a dot, the parameter's among the lambda's (resolution reads the
    functional interface the method declares there, or the receiver's elements); the value of
    a declared local or field, or returned, the type argument its declared type or the method's
    return type passes it (`Predicate<Tree> p = t -> ..`); () otherwise."""
    index = 0
    lambda_ = parameter.parent
    if lambda_ is not None and lambda_.type == "inferred_parameters":
        for at in range(lambda_.named_child_count):
            if lambda_.named_child(at).start_byte == parameter.start_byte:
                break
            index += 1
        lambda_ = lambda_.parent
    holder = lambda_.parent if lambda_ is not None else None
    if holder is None:
        return ()
    if holder.type == "argument_list":
        return _passed_lambda(lambda_, holder, index, source)
    declared = None
    if holder.type == "variable_declarator" and holder.parent is not None \
            and holder.parent.type in _LAMBDA_HOLDERS:
        declared = holder.parent.child_by_field_name("type")
    elif holder.type == "return_statement":
        method = holder.parent
        while method is not None and method.type not in _RETURNING:
            method = method.parent
        if method is not None and method.type == "method_declaration":
            declared = method.child_by_field_name("type")
    if declared is None:
        return ()
    typed = lambda_parameter(node_text(source, declared), index)
    return type_path(typed) if typed else ()


# what a `return` returns from: the innermost method, or a lambda or class body it lies in
_RETURNING = frozenset({"method_declaration", "lambda_expression", "class_body",
                        "constructor_declaration"})


def _passed_lambda(lambda_: Any, arguments: Any, index: int, source: bytes) -> NamePath:
    """:func:`callback_binding` of a lambda passed at ``arguments`` to a named method."""
    call = arguments.parent
    if call is None or call.type != "method_invocation":
        return ()
    name_field, object_field = call_fields()
    called = call.child_by_field_id(name_field)
    receiver = call.child_by_field_id(object_field)
    if called is None:
        return ()
    path = reference_path(source, receiver.start_byte if receiver is not None
                          else called.start_byte, called.end_byte)
    if not path or path[0] == "?":
        return ()
    position = 0
    for at in range(arguments.named_child_count):
        argument = arguments.named_child(at)
        if argument.start_byte == lambda_.start_byte:
            suffix = f".{index}" if index else ""
            return (*path, f"{CALLBACK_OF}{position}{suffix}")
        if argument.type not in COMMENT_TYPES:
            position += 1
    return ()


def lambda_parameter(declared: str, index: int) -> str:
    """The type the functional interface ``declared`` (`Function<? super T, R>`) passes its
    lambda's parameter at ``index`` (T), "" where it is none of java.util's known ones."""
    head = declared.partition("<")[0].split()
    name = head[-1].rpartition(".")[2] if head else ""
    taken = _FUNCTION_PARAMETERS.get(name)
    if taken is None or index >= len(taken) or "<" not in declared:
        return ""
    inside = declared[declared.index("<") + 1 : declared.rfind(">")]
    arguments = split_top_level(inside)
    if taken[index] >= len(arguments):
        return ""
    words = [w for w in arguments[taken[index]].split() if not w.startswith("@")]
    if words and words[0] == "?":  # `? super T`, `? extends T`: the lambda's is T
        words = words[2:]
    return "".join(words)
