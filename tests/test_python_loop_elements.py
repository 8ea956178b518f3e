"""A loop's name holds an element of the collection it iterates, read
where the collection is declared: a function's return type (`-> list[Parameter]`), a
field's annotation (`self.params: list[Parameter] = ..`), a parameter's
(`Sequence[Parameter]`); `tuple[T, ...]`, `Iterator[T]`, `Generator[T, ..]` give T, a
mapping its keys; `tuple[A, B]` and an unknown generic give nothing."""

from __future__ import annotations

import textwrap

import pytest

from knoxidx.index import Index
from knoxidx.languages.python.elements import element_type
from knoxidx.update.verify import verify_index
from tests.helpers import build, calls_with_holders

SOURCE = """\
import collections.abc as cabc
import typing as t


class Parameter:
    def process(self) -> None:
        pass


class Group:
    def list_commands(self) -> None:
        pass


class Command:
    def __init__(self, params: list[Parameter] | None = None) -> None:
        self.params: list[Parameter] = params or []
        self.sources: t.List[Group] = []

    def get_params(self) -> list[Parameter]:
        return self.params

    def in_loop(self) -> None:
        for param in self.get_params():
            param.process()

    def in_comprehension(self, param: Group) -> list[None]:
        ran = [param.process() for param in self.get_params()]
        param.list_commands()
        return ran

    def over_field(self, other: "Command") -> None:
        for param in other.params:
            param.process()
        for source in self.sources:
            source.list_commands()

    def over_parameter(self, given: cabc.Sequence[Parameter]) -> None:
        for param in given:
            param.process()

    def over_iterator(self, made: t.Iterator[Parameter]) -> None:
        for param in made:
            param.process()

    def over_pair(self, pair: tuple[Group, Parameter]) -> None:
        for item in pair:
            item.process()
"""


def test_a_loop_name_holds_an_element_of_the_declared_collection(repo) -> None:
    root = repo({"core.py": SOURCE})
    build(root)
    calls = calls_with_holders(root)
    for caller in ("in_loop", "over_field", "over_parameter", "over_iterator"):
        assert (caller, "process", "Parameter") in calls, caller
    assert ("over_field", "list_commands", "Group") in calls  # `t.List[Group]`
    assert ("over_pair", "process", "Parameter") not in calls  # a tuple of two types
    # a comprehension's name is its own: the function's parameter of that name is not it
    assert ("in_comprehension", "list_commands", "Group") in calls


@pytest.mark.parametrize(("declared", "element"), [
    ("list[Parameter]", "Parameter"), ("t.Sequence[Parameter]", "Parameter"),
    ("cabc.Iterable['Parameter']", "'Parameter'"), ("tuple[Parameter, ...]", "Parameter"),
    ("tuple[Parameter, Group]", ""), ("dict[str, Parameter]", "str"),
    ("Generator[Parameter, None, None]", "Parameter"), ("params: list[Parameter] = []", "Parameter"),
    ("Parameter", ""), ("list[Parameter] | None", "Parameter"),
    ("t.Optional[list[Parameter]]", "Parameter"), ("list[Parameter] | set[Group]", ""),
])
def test_the_element_type_of_a_declared_collection(declared: str, element: str) -> None:
    assert element_type(declared) == element


def test_a_loop_name_bound_again_in_the_loop_keeps_its_other_bindings_types(repo) -> None:
    source = """\
    class Ordered:
        def asc(self) -> "Ordered":
            pass

        def copy(self) -> "Ordered":
            pass


    class Cast:
        def asc(self) -> Ordered:
            pass


    def order(ordering, flip):
        for field in ordering:
            if flip:
                field = Cast(field)
            field = field.asc()
            field = field.copy()
    """
    root = repo({"order.py": source})
    build(root)
    calls = calls_with_holders(root)
    # the loop's element is of no known type: the other bindings say what field holds
    assert ("order", "asc", "Cast") in calls
    assert ("order", "copy", "Ordered") in calls


def test_a_collection_declared_anew_in_another_file_re_resolves_the_loop(repo) -> None:
    model = """\
    class Parameter:
        def process(self) -> None:
            pass


    def get_params() -> {declared}:
        return []
    """
    loop = "from model import get_params\n\n\ndef run():\n    for p in get_params():\n" \
           "        p.process()\n"
    root = repo({"model.py": model.format(declared="list"), "loop.py": loop})
    build(root)
    assert ("run", "process", "Parameter") not in calls_with_holders(root)
    (root / "model.py").write_text(textwrap.dedent(model.format(declared="list[Parameter]")))
    build(root)
    assert ("run", "process", "Parameter") in calls_with_holders(root)
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]
