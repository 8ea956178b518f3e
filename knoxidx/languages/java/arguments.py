"""A call's arguments as extraction reads them: how many, and each one's static type where it is
certain (what overload resolution checks against the parameters, see ``overloads``)."""

from __future__ import annotations

from typing import Any

from knoxidx.languages.common import COMMENT_TYPES, field_ids
from knoxidx.languages.java.signatures import signature_fields
from knoxidx.parse.definitions import node_text

# A literal argument's type, by its node's type (an integer or floating literal by its suffix)
_LITERAL_TYPES = {
    "string_literal": "String", "text_block": "String", "character_literal": "char",
    "true": "boolean", "false": "boolean", "null_literal": "null",
    "decimal_integer_literal": "int", "hex_integer_literal": "int",
    "octal_integer_literal": "int", "binary_integer_literal": "int",
    "decimal_floating_point_literal": "double", "hex_floating_point_literal": "double",
    "class_literal": "Class",
}


def call_arguments(arguments: Any, source: bytes) -> tuple[int, tuple[str, ...]]:
    """How many arguments a call's argument list holds, and each one's static type where it
    is certain: a literal's, `new T(...)`'s or a cast's T, "=x" for a variable `x` (typed
    where the resolver finds its declaration), "~a.b" for a field (or `this`: typed by what
    the path denotes), "~a.b()" for a call (typed by what b returns), "" otherwise; no types
    where none is known. Extraction makes "=x" of a name the method does not bind "~x" (a
    field's)."""
    types: list[str] = []
    known = False
    # by index: `named_children` builds a node for every `(`, `,` and `)` too, then drops them
    for at in range(arguments.named_child_count):
        argument = arguments.named_child(at)
        kind = argument.type
        if kind == "identifier":  # the commonest argument: a variable
            types.append("=" + source[argument.start_byte:argument.end_byte].decode(
                "utf-8", "replace"))
            known = True
            continue
        if kind in COMMENT_TYPES:
            continue
        found = _LITERAL_TYPES.get(kind, "")
        if found == "int" or found == "double":
            suffix = source[argument.end_byte - 1 : argument.end_byte]
            if suffix in (b"l", b"L"):
                found = "long"
            elif suffix in (b"f", b"F"):
                found = "float"
        elif kind == "field_access" or kind == "this":
            found = "~" + "".join(node_text(source, argument).split())
        elif kind == "binary_expression":
            found = _operation_type(argument)
        elif kind == "instanceof_expression":
            found = "boolean"
        elif kind == "lambda_expression" or kind == "method_reference":
            found = FUNCTION_VALUE
        elif kind == "unary_expression":
            operator = argument.child_by_field_id(_expression_fields()[0])
            found = "boolean" if operator is not None and operator.type == "!" else \
                NUMBER if operator is not None and operator.type == "-" else ""
        elif kind == "method_invocation":  # `a.b(...)`: what b is declared to return
            name_field, object_field = call_fields()
            called = argument.child_by_field_id(name_field)
            receiver = argument.child_by_field_id(object_field)
            if called is not None and (receiver is None or receiver.end_byte
                                       - receiver.start_byte <= MAX_RECEIVER_CHARS):
                found = "~" + ("".join(node_text(source, receiver).split()) + "."
                               if receiver is not None else "") + node_text(source, called) + "()"
        elif kind == "object_creation_expression" or kind == "cast_expression":
            declared = argument.child_by_field_id(signature_fields()[1])
            if declared is not None and declared.type in _NAMED_TYPES:
                found = "".join(node_text(source, declared).split()).partition("<")[0]
        types.append(found)
        known = known or bool(found)
    return len(types), tuple(types) if known else ()


def _operation_type(expression: Any) -> str:
    """The type of a binary operation where its operator alone says: a comparison's or a
    logical one's boolean, String for a `+` one of whose operands is a string literal."""
    operator_field, left_field, right_field = _expression_fields()
    operator = expression.child_by_field_id(operator_field)
    if operator is None:
        return ""
    symbol = operator.type
    if symbol in _BOOLEAN_OPERATORS:
        return "boolean"
    if symbol in _NUMERIC_OPERATORS:
        return NUMBER
    while symbol == "+":
        right = expression.child_by_field_id(right_field)
        expression = expression.child_by_field_id(left_field)
        if right is None or expression is None:
            return ""
        if right.type == "string_literal" or expression.type == "string_literal":
            return "String"
        if expression.type != "binary_expression":
            return ""
        operator = expression.child_by_field_id(operator_field)
        symbol = operator.type if operator is not None else ""
    return ""


def call_fields() -> tuple[int, ...]:
    return field_ids("java", ("name", "object"))


def _expression_fields() -> tuple[int, ...]:
    return field_ids("java", ("operator", "left", "right"))


_BOOLEAN_OPERATORS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&&", "||"})
# operators whose result is a number of a primitive type, which one not read here
_NUMERIC_OPERATORS = frozenset({"-", "*", "/", "%", "<<", ">>", ">>>"})
NUMBER = "#number"  # the type of such a result: some primitive numeric type
FUNCTION_VALUE = "#function"  # a lambda's or a method reference's: some functional interface
_NAMED_TYPES = frozenset({"type_identifier", "scoped_type_identifier", "generic_type"})
MAX_RECEIVER_CHARS = 120  # a longer call chain as an argument is not typed
