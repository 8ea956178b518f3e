"""What a decorated function's name holds: what its decorators give, where they say.

``@click.group()`` over ``def cli`` binds ``cli`` to what ``group()``'s result returns when
called with the function: a ``Group`` (``-> Callable[[F], Group]``), so ``cli.command()`` is
``Group.command``. The decorators are read outermost first: one that gives a known type
decides; one that hands its argument back (``-> Callable[[F], F]``, ``def deco(f: F) -> F``)
leaves it to the next one in; any other (untyped, returning a callable, outside the index)
leaves the function itself, as do the decorators the resolver reads otherwise (properties,
``staticmethod``, ``classmethod``, ``overload``, pytest fixtures).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from knoxidx.core.facts import Binding
from knoxidx.core.symbols import DEFINITION_TAG, INSTANCE_TAG, Symbol
from knoxidx.parse import signatures as sig
from knoxidx.parse.file_index import FUNCTION, TYPE_KINDS
from knoxidx.parse.name_paths import name_path, split_top_level, type_path

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolverView
    from knoxidx.parse.file_index import FileIndex

# a decorator as written: the dotted name it reads, then the opening of its call, if called
_DECORATOR = re.compile(r"([^\W\d][\w.]*)\s*(\()?")
_CALLABLE = re.compile(r"(?:typing\.|t\.|collections\.abc\.|abc\.)?Callable\[(.*)\]\Z", re.DOTALL)
_UNION = re.compile(r"(?:typing\.|t\.)?(?:Union|Optional)\[(.*)\]\Z", re.DOTALL)
_NOTHING = frozenset({"None", "t.Any", "typing.Any", "Any", "NoReturn", "t.NoReturn"})
# the last name of a decorator the resolver reads otherwise, or that keeps the function
_KEPT = frozenset({
    "property", "cached_property", "setter", "getter", "deleter", "staticmethod",
    "classmethod", "overload", "fixture",
})
# what a decorator gives: the types, or None where it hands its argument back
Given = list[Symbol] | None


def decorated_types(r: ResolverView, fi: FileIndex, index: int) -> list[Symbol]:
    """The instance types the name of the decorated function at ``index`` of ``fi`` holds
    (see the module docstring); [] where it holds the function itself."""
    d = fi.facts.defs[index]
    decorators = d.signature_data[3] if len(d.signature_data) > 3 else ()
    if not decorators or fi.rules.read_as_value(decorators) \
            or any(_kept(text) for text in decorators):
        return []
    for text in decorators:
        given = _applied(r, fi, d.parent, text)
        if given is not None:
            return given
    return []


def _kept(text: str) -> bool:
    called = text.partition("(")[0]
    return called.rpartition(".")[2].strip() in _KEPT


def _applied(r: ResolverView, fi: FileIndex, scope: int, text: str) -> Given:
    """What the decorator ``text`` (read in ``scope``) gives the function it decorates."""
    match = _DECORATOR.match(text)
    if match is None or (match.group(2) is None and match.end() != len(text.rstrip())):
        return []  # `@handlers[0]`, `@a or b`: an expression whose value is not read
    path = name_path(match.group(1))
    if not path or path[0] == "?":
        return []
    called = match.group(2) is not None
    found, _ = r.resolve_path(fi, path, scope)
    out: list[Symbol] = []
    passes = False
    for symbol in found[:4]:
        given = _given(r, symbol, called)
        if given is None:
            passes = True
        else:
            out.extend(given)
    return None if passes and not out else list(dict.fromkeys(out))


def _given(r: ResolverView, symbol: Symbol, called: bool) -> Given:
    """What the decorator that ``symbol`` is (a class, a function; ``called``: with its
    own arguments first) gives the function it is applied to."""
    if symbol[0] != DEFINITION_TAG:
        return []
    d = r.definition(symbol)
    if d is None:
        return []
    if d.kind in TYPE_KINDS:
        instance: Symbol = (INSTANCE_TAG, symbol[1], symbol[2])
        return _called_instance(r, instance) if called else [instance]  # `@Foo` is a Foo
    if d.kind != FUNCTION:
        return []
    declared = d.signature_data[1] if len(d.signature_data) > 1 else None
    if not declared:
        if called or not d.type_hint:
            return []
        # `def deco(f): return Wrapper(f)`: what its `return`s hold
        return [s for s in r.returns(symbol) if s[0] == INSTANCE_TAG]
    declaring = r.index(symbol[1])
    if declaring is None:
        return []
    if not called:
        parameters = d.signature_data[0]
        first = next((p for p in parameters if p[3] != sig.SELF), None) if parameters else None
        return _result(r, declaring, d.parent, declared,
                       (first[1],) if first is not None and first[1] else ())
    out: list[Symbol] = []
    passes = False
    for alternative in alternatives(declared):
        callable_type = _CALLABLE.match(alternative)
        if callable_type is None:  # `deco(..)` gives an object: calling it runs its __call__
            for instance in _types(r, declaring, d.parent, alternative):
                given = _called_instance(r, instance)
                passes = passes or given is None
                out.extend(given or ())
            continue
        arguments = split_top_level(callable_type.group(1))
        if len(arguments) != 2:
            continue
        taken = tuple(a.strip() for a in split_top_level(arguments[0].strip().strip("[]")))
        given = _result(r, declaring, d.parent, arguments[1].strip(), taken)
        passes = passes or given is None
        out.extend(given or ())
    return None if passes and not out else out


def _called_instance(r: ResolverView, instance: Symbol) -> Given:
    """What calling ``instance`` with the function gives: its ``__call__``'s result."""
    out: list[Symbol] = []
    passes = False
    for method in r.class_member(instance[1], instance[2], "__call__")[:1]:
        d = r.definition(method) if method[0] == DEFINITION_TAG else None
        if d is None or d.kind != FUNCTION:
            continue
        given = _given(r, method, False)
        passes = passes or given is None
        out.extend(given or ())
    return None if passes and not out else out


def _result(r: ResolverView, declaring: FileIndex, scope: int, declared: str,
            taken: tuple[str, ...]) -> Given:
    """The instance types a function's result declared ``declared`` (written in ``scope`` of
    ``declaring``) holds; None where it is the argument handed back (declared as one of the
    argument types ``taken``); none for a callable, another function."""
    out: list[Symbol] = []
    passes = False
    for alternative in alternatives(declared):
        if alternative in taken:
            passes = True
        elif _CALLABLE.match(alternative) is None:
            out.extend(_types(r, declaring, scope, alternative))
    return None if passes and not out else out


def _types(r: ResolverView, fi: FileIndex, scope: int, written: str) -> list[Symbol]:
    if written in _NOTHING:
        return []
    path = type_path(written, True)
    if not path:
        return []
    return [s for s in r.binding_type(fi, Binding(scope, "", path, False))
            if s[0] == INSTANCE_TAG]


def alternatives(written: str) -> list[str]:
    """The types a union written ``written`` is one of (`A | B`, `Union[A, B]`,
    `Optional[A]`), less None; the one type where it is no union."""
    written = written.strip()
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "'\"":
        written = written[1:-1].strip()
    union = _UNION.match(written)
    parts = split_top_level(union.group(1)) if union else split_top_level(written, "|")
    out: list[str] = []
    for part in parts:
        part = part.strip()
        if part and part != "None":
            out.extend(alternatives(part) if _UNION.match(part) else [part])
    return out
