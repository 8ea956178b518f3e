"""What a Python loop binds: an element of the collection it iterates, whose type is read where
the collection is declared (`def get_params(self) -> list[Parameter]`, `self.params:
list[Parameter] = ..`, a parameter's `Sequence[Parameter]`)."""

from __future__ import annotations

import re
from typing import Any

from knoxidx.core.facts import NamePath
from knoxidx.parse.definitions import node_text
from knoxidx.parse.name_paths import element_path, split_top_level, type_path

# a collection whose elements are its one type argument; a mapping's are its keys (its first)
_COLLECTION = re.compile(
    r"(?:(?:[A-Za-z_]\w*\.)*)"  # `typing.`, `t.`, `collections.abc.`, `cabc.`
    r"(list|List|set|Set|frozenset|FrozenSet|Sequence|MutableSequence|Iterable|Iterator|"
    r"Collection|AbstractSet|MutableSet|Reversible|Generator|deque|Deque|KeysView|ValuesView|"
    r"tuple|Tuple|dict|Dict|Mapping|MutableMapping|OrderedDict|DefaultDict|defaultdict)"
    r"\[(.*)\]\Z", re.DOTALL)
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict",
                       "DefaultDict", "defaultdict"})
_OPTIONAL = re.compile(r"(?:(?:[A-Za-z_]\w*\.)*)Optional\[(.*)\]\Z", re.DOTALL)
_GENERATORS = frozenset({"Generator"})
# a field's declaration as a definition's text: `params: list[Parameter] = []`
_FIELD = re.compile(r"(?:self\.)?[A-Za-z_]\w*\s*:(.*?)(?:=.*)?\Z", re.DOTALL)
# what a loop iterates whose path the resolver can follow
_ITERATED = frozenset({"identifier", "attribute", "call"})


def element_type(declared: str) -> str:
    """The type of the elements of a collection declared ``declared`` (a function's return
    type, a parameter's or a field's declaration): `list[T]`, `Sequence[T]`, `Iterable[T]`,
    `Iterator[T]`, `set[T]`, `tuple[T, ...]`, `Generator[T, ..]` give T, a mapping's its key
    type; "" for others (`tuple[A, B]`, an unknown generic, a union)."""
    text = declared.strip()
    field = _FIELD.match(text) if ":" in text else None
    if field is not None:
        text = field.group(1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    optional = _OPTIONAL.match(text)
    alternatives = [a.strip() for a in split_top_level(optional.group(1) if optional else text,
                                                       "|")]
    named = [a for a in alternatives if a != "None"]
    if len(alternatives) > 1 or optional:  # `list[T] | None`: a list when iterated
        return element_type(named[0]) if len(named) == 1 else ""
    collection = _COLLECTION.match(text)
    if collection is None:
        return ""
    kind = collection.group(1)
    arguments = [a.strip() for a in split_top_level(collection.group(2))]
    if kind in ("tuple", "Tuple"):
        return arguments[0] if len(arguments) == 2 and arguments[1] == "..." else ""
    if kind in _MAPPINGS or kind in _GENERATORS:
        return arguments[0] if len(arguments) >= 2 else ""
    return arguments[0] if len(arguments) == 1 else ""


def element_binding(value_node: Any, source: bytes) -> tuple[NamePath, bool]:
    """What `for x in EXPR` (a comprehension's too) binds x to: the path of the collection
    EXPR names (a call's last segment with its "()") followed by ``ELEMENT_OF``, which the
    resolver reads where the collection is declared. ((), False) for anything else."""
    if value_node.type not in _ITERATED:
        return (), False
    return element_path(node_text(source, value_node)), False


def elements_binding(node: Any, source: bytes) -> NamePath:
    """The type of the elements of a collection whose declaration writes it (`self.params:
    list[Parameter] = ..`), () where it does not."""
    element = element_type(node_text(source, node))
    return type_path(element, True) if element else ()
