"""An argument's static type at resolution: a local's or a parameter's declared type, a
field's, an enum constant's, `this`, what a called method returns; and its classes in the index
where resolution found them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.facts import CALLBACK_OF, UNKNOWN_VALUE
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, INSTANCE_TAG, Symbol
from knoxidx.languages.java.jdk import FINAL_LANG, PRIMITIVES
from knoxidx.languages.java.parameters import looks_like_type_variable, type_bounds, written_type
from knoxidx.parse.file_index import FileIndex
from knoxidx.parse.name_paths import name_path

if TYPE_CHECKING:
    from knoxidx.core.facts import Definition
    from knoxidx.languages.protocol import ResolverView


_NAME = "name"  # a resolution's confidence when it is only a name match (core.model)
MAX_OVERLOADS = 16  # more declarations than this for an argument's call: not typed


def argument_type(r: ResolverView, fi: FileIndex, scope: int, argument: str
                 ) -> tuple[str, list[Symbol] | None]:
    """An argument's static type (call_arguments'), "" where not certain, and its classes
    where resolved already (None: look the name up)."""
    if argument[0] == "=":
        declared = _variable_type(fi, scope, argument[1:])
        if declared or not _lambda_parameter_read(fi, scope, argument[1:]):
            return declared, None
        # a lambda's parameter: what the resolver reads it is passed (`ts.map(t -> visit(t))`)
        name, _, at = argument[1:].partition("@")
        held: tuple[str, list[Symbol] | None] = r.memo(
            ("java-argument", fi.path, scope, argument), _path_type, r, fi, scope, name,
            int(at or 0))
        return held if held[1] else ("", None)
    if argument[0] == "~":
        path, _, at = argument[1:].rpartition("@")
        if not path or not at.isdigit():  # (`~x.y@12`: x read where its binding at 12 is)
            path, at = argument[1:], ""
        found: tuple[str, list[Symbol] | None] = r.memo(("java-argument", fi.path, scope, argument),
                                                _path_type, r, fi, scope, path, int(at or 0))
        return found
    return argument, None


def _path_type(r: ResolverView, fi: FileIndex, scope: int, path: str, site: int = 0
              ) -> tuple[str, list[Symbol] | None]:
    """The declared type of what ``path`` denotes (a field, a constant, an enum constant,
    `this`): its name, and its classes in the index (None: look the name up); "" where it is
    not certain."""
    if path.endswith("()"):
        return _returned_type(r, fi, scope, path[:-2], site)
    found, confidence = r.resolve_path(fi, name_path(path), scope, site=site, held=True)
    if len(found) > 1:  # a field and methods of its name: a read is the field
        found = [s for s in found if s[0] != DEFINITION_TAG or not _is_method(r, s)]
    if len(found) != 1 or confidence == _NAME:
        return "", None
    symbol = found[0]
    d = r.definition(symbol)
    if d is None or symbol[0] not in (DEFINITION_TAG, INSTANCE_TAG):
        return "", None
    if symbol[0] == INSTANCE_TAG:  # `this`
        return d.name, [(DEFINITION_TAG, symbol[1], symbol[2])]
    if d.kind not in ("Variable", "Constant"):
        return "", None
    hint = d.type_hint
    written = written_type(d.signature, d.name) if not hint else ""
    if written.endswith("]"):  # `Node[] nodes;`: an array, of no type hint
        written = "".join(written.split())
        if "<" in written:
            written = written.partition("<")[0] + written[written.rfind(">") + 1 :]
        return written, None
    if not hint:
        declaring = r.index(symbol[1])
        parent = declaring.facts.defs[d.parent] if declaring and d.parent >= 0 else None
        if d.kind == "Constant" and parent is not None and parent.kind == "Class" \
                and " " not in d.signature.partition("(")[0].strip():  # an enum's constant
            return parent.name, [(DEFINITION_TAG, symbol[1], d.parent)]
        return "", None
    return _declared(r, symbol, d, hint, d.parent)


def _returned_type(r: ResolverView, fi: FileIndex, scope: int, path: str, site: int = 0
                  ) -> tuple[str, list[Symbol] | None]:
    """:func:`_path_type` of a call of the method ``path``: the type its declarations (one,
    or overloads that agree) return."""
    found, confidence = r.resolve_path(fi, name_path(path), scope, site=site)
    if not found or len(found) > MAX_OVERLOADS or confidence == _NAME:
        return "", None
    hints = set()
    methods = []
    for symbol in found:
        d = r.definition(symbol) if symbol[0] == DEFINITION_TAG else None
        if d is None:
            return "", None
        if d.kind == "Function":  # (not a field of the same name: `pos` beside `pos()`)
            if not d.type_hint:
                return "", None
            hints.add(d.type_hint)
            methods.append(symbol)
    if len(hints) != 1:
        return "", None
    d = r.definition(methods[0])
    if d is None:
        return "", None
    hint = d.type_hint
    if len(hint) == 1 and looks_like_type_variable(hint[0]):
        # `A first()` of a `ListBuffer<A>`: what the receiver's type argument says
        called = name_path(path)
        held = r.resolve_path(fi, (*called[:-1], called[-1] + "()"), scope, site=site)[0] \
            if called else []
        if len(held) == 1 and held[0][0] == INSTANCE_TAG:
            held_class = r.definition(held[0])
            if held_class is not None:
                return held_class.name, [(DEFINITION_TAG, held[0][1], held[0][2])]
    return _declared(r, methods[0], d, hint, methods[0][2])


def _is_method(r: ResolverView, symbol: Symbol) -> bool:
    d = r.definition(symbol)
    return d is not None and d.kind == "Function"


def _declared(r: ResolverView, symbol: Symbol, d: Definition, hint: tuple[str, ...], scope: int
              ) -> tuple[str, list[Symbol] | None]:
    """The type ``hint`` that the definition ``d`` (at ``symbol``) declares, as
    :func:`_path_type` gives it, looked up from ``scope`` of its file."""
    head = d.signature.partition("(")[0].partition("=")[0]
    lt = head.find("<")
    if lt >= 0 and head.find(hint[-1]) > lt:  # `Optional<T> x` read as a T
        return "", None
    words = head.split()
    if len(words) > 1 and (words[-2].endswith("]") or words[-1].endswith("]")):
        # `byte[] buf`, `int m()[]`, `T x[]`: an array of the type
        return ".".join(hint) + "[]" * max(1, (words[-2] + words[-1]).count("[")), None
    if len(hint) == 1 and (hint[0] in PRIMITIVES or hint[0] in FINAL_LANG):
        return hint[0], None
    declaring = r.index(symbol[1])
    if declaring is None:
        return "", None
    typed = r.resolve_path(declaring, hint, scope)[0]
    found = [t for t in typed if t[0] == DEFINITION_TAG]
    if not found and any(t[0] == EXTERNAL_TAG for t in typed):
        return ".".join(hint), []  # a type outside the index, as its declaration names it
    return ".".join(hint), found or None


def _variable_type(fi: FileIndex, scope: int, name: str) -> str:
    """The declared type of the local variable or parameter ``name`` read in ``scope``, where
    the source says it; "" where not (a field's is not taken: a local without a declared type,
    `var x`, may hide it). ``name@at``: of a local bound several ways, the declaration that
    takes effect at ``at`` (the one reaching the read, see resolve's _placed_arguments); of
    one without it, none (no declaration of its name reaches the read: `var x`, a lambda's)."""
    name, _, at = name.partition("@")
    defs = fi.facts.defs
    s = scope
    while s >= 0 and defs[s].kind == "Function":
        binding = fi.bindings.get((s, name))
        if binding is not None:
            binding = fi.reaching_one(s, name, scope, int(at) if at else 0, binding)
            if binding is None or binding.is_call or binding.type_path == UNKNOWN_VALUE \
                    or binding.type_path[-1][:1] == CALLBACK_OF:
                return ""  # (a lambda's parameter, typed by what it is passed)
            if len(binding.type_path) == 1 and looks_like_type_variable(binding.type_path[0]):
                # `T tree` of `<T extends JCTree>`: a JCTree
                head = defs[s].signature.partition("(")[0]
                return type_bounds(head.replace(defs[s].name, "", 1)).get(
                    binding.type_path[0], binding.type_path[0])
            return ".".join(binding.type_path)
        s = defs[s].parent
    return ""


def _lambda_parameter_read(fi: FileIndex, scope: int, name: str) -> bool:
    """Whether the local ``name`` read in ``scope`` is an untyped parameter of a lambda."""
    name = name.partition("@")[0]
    defs = fi.facts.defs
    s = scope
    while s >= 0 and defs[s].kind == "Function":
        binding = fi.bindings.get((s, name))
        if binding is not None:
            return not binding.is_call and binding.type_path[-1][:1] == CALLBACK_OF
        s = defs[s].parent
    return False
