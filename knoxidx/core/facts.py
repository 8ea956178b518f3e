"""Plain records produced by per-file extraction: everything later stages need, nothing more.

These are ``NamedTuple`` rather than frozen dataclasses on purpose: extraction makes hundreds of
thousands of them per run and ships them between processes, and a NamedTuple is built and
serialised several times faster while reading the same way.
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence
from itertools import repeat
from typing import Any, Final, NamedTuple

import xxhash

from knoxidx.core.errors import decoding_stored

NamePath = tuple[str, ...]


class Definition(NamedTuple):
    kind: str  # a NodeKind value
    name: str
    qualname: str  # qualified within the file's module, "." separated: "Server.start"
    parent: int  # index of the lexically enclosing definition, -1 at module level
    start_line: int  # 1-based, inclusive
    end_line: int
    start_byte: int
    end_byte: int
    signature: str
    doc: str
    exported: bool | None
    owner: str = ""  # type a method belongs to when declared outside it (Go receiver, Rust impl)
    type_hint: NamePath = ()  # declared type of a variable, or a function's return type
    # a function's complexity (``knoxidx.parse.complexity``); 0 for other kinds
    cyclomatic: int = 0
    nesting: int = 0
    loc: int = 0  # lines of code: neither blank nor only comment
    # a function's parameters, return type, type parameters and decorators
    # (``knoxidx.parse.signatures.SignatureData``); a generic type's type parameters
    # (``TypeSignatureData``); () for other kinds
    signature_data: tuple[Any, ...] = ()


class Reference(NamedTuple):
    kind: str  # RefKind value
    path: NamePath  # ("f",), ("self", "run"), ("os", "path", "join"); "?" marks an unknown receiver
    scope: int  # index of the innermost enclosing definition, -1 at module level
    line: int
    col: int
    # how many arguments a call passes, where the language's query says (Java: which of a
    # method's overloads it calls); -1 where unknown or no call
    arity: int = -1
    # each argument's static type where it is certain (see languages/java/arguments.py
    # call_arguments), "" where not; () where none is. Or, first, RECEIVER_ARGUMENT and the
    # "."-joined name path of a path call's first argument, the receiver a trait's method so
    # called takes (Rust)
    argument_types: tuple[str, ...] = ()


RECEIVER_ARGUMENT = "^"


class Import(NamedTuple):
    module: str  # the module as written: "os.path", "./util", "crate::a", "java.util"
    name: str  # imported member; "" for the module itself, "*" for a wildcard
    alias: str  # the local name it binds; "" when it binds none
    line: int
    scope: int
    reexport: bool = False  # TS `export ... from`


class Binding(NamedTuple):
    """What a local name or field holds, when the source says: ``x = Foo()``, ``x: Foo``."""

    scope: int
    name: str  # "x", or "self.x" for an attribute set on the receiver
    # a path, or several joined by TYPES_JOINER, or a path ending in ELEMENT_OF (below)
    type_path: NamePath
    is_call: bool  # True for `x = f()`: the type is what f returns (or f itself, if a class)
    # Where a name is bound more than once in its scope, which of its bindings may reach a use
    # (a Reference's line and col, as a :func:`point`); all three 0 for a name bound once.
    # ``at``: where it takes effect, just past the value it binds (`x = x.asc()` reads the
    # earlier x); ``block_end``: the end of the innermost block (or statement whose header
    # binds it: Go's `if v, ok := x.(T); ok {..}`) holding it, past which it reaches a use no
    # longer for sure (0: the whole function); ``loop``: the start of the outermost loop
    # around it in its function, before it in which a use may be reached on the next turn
    # (0: none)
    at: int = 0
    block_end: int = 0
    loop: int = 0


_COLUMNS: Final = 1 << 24


def point(line: int, col: int) -> int:
    """A place in a file as one integer that orders as (line, col) does: a binding's
    ``at`` compared with a reference's site. A column past 2**24 (a minified line) counts
    as the last one."""
    return line << 24 | (col if col < _COLUMNS else _COLUMNS - 1)


# The ``type_path`` of a binding whose value the index reads no type of (`for x in xs:` beside
# `x = Foo()`), kept where its name is bound several ways and placed (see Binding): past it,
# the name's earlier bindings reach no use.
UNKNOWN_VALUE: NamePath = ("?",)
# Segments of a Binding's ``type_path`` that name nothing. A value of a type parameter bounded
# by several traits (Rust `v: &mut V` where `V: Read + Write`) has each one's methods: their
# paths are joined by TYPES_JOINER. `for x in shelf.books()` binds x to an element of what the
# path before ELEMENT_OF denotes (a `Vec<Book>` it returns: a Book).
TYPES_JOINER = "+"
ELEMENT_OF = "[]"
# A binding named `xs` followed by ELEMENT_OF holds the type of xs's elements (JavaScript's
# `/** @type {Array<Plane>} */ this.planes = []`, `xs.push(new T())`).
# The last segment of a Binding's ``type_path`` for the first parameter of a function passed to
# a call (`doc.indented((d) => ..)`), followed by the argument's position: the path before it
# names the function called, whose parameter there declares the callback's type.
CALLBACK_OF = "&"
# A function's ``type_hint`` that names no type: it returns an object of its own nested
# definitions (`function create() { const api = { get: function () {..} }; return api; }`),
# whose members a call's result has.
OWN_MEMBERS = ("{}",)
# A function's ``type_hint`` where it declares no return type but its `return` statements say
# what it returns (Python's `return Foo(..)`, `return self`): the types of its bindings named
# RETURNED[0] in its own scope (a name no local can have), where they agree.
RETURNED = ("return",)
# The name of a generator's bindings, in its own scope, of what its `yield` statements hold
# (as RETURNED's: where every one says a type): what a pytest fixture written as a generator
# gives the tests that ask for it.
YIELDED = ("yield",)
# The head of a Binding's ``type_path`` (INJECTED, name) for a parameter a framework passes by
# its name (a pytest test's or fixture's, pytest's fixture of that name): what the family's
# rules find under the name (``injected``) gives it its value. No identifier starts with it.
INJECTED = "%"
# The head of a reference's path whose first name a local binds but which is written as a path
# of items (Rust `config::APP_NAME` beside a local `config`: locals hide no module or type):
# the name after it is looked up as a module's or a type's, past the locals.
ITEMS_HEAD = "::"
# A binding named `x` followed by this holds the type arguments x's declared type is written
# with, each as written (`List<Type> x`: ("Type",)), not a path: what a member of x declared
# of a type parameter of its class holds (`x.head`, `head` declared `A head` in `List<A>`).
TYPE_ARGUMENTS = "<>"
# The last segment of a Binding's ``type_path`` for a name a pattern binds in the payload of a
# variant or a tuple struct (Rust `E::V(_, x)`: ("E", "V", "(1)"); `E::S { a, .. }`: ("E", "S",
# "(a)")), PAYLOAD_OF and its place, an index or a field's name: the path before it names the
# variant. A type's file binds each place's declared type in the type's scope, named by
# :func:`payload_name` (`enum E { V(A, B) }`: "V(1)" holds B).
PAYLOAD_OF = "("


def payload_name(constructor: str, place: int | str) -> str:
    """The binding name of the payload at ``place`` of the variant or tuple struct
    ``constructor`` (see PAYLOAD_OF)."""
    return f"{constructor}{PAYLOAD_OF}{place})"


class Impl(NamedTuple):
    """A Rust `impl [Trait for] Type` block: methods inside belong to ``type_path``."""

    type_path: NamePath
    trait_path: NamePath
    start_byte: int
    end_byte: int
    line: int


class FileFacts(NamedTuple):
    path: str  # repo-relative posix path
    language: str
    package: str  # declared package (Go `package x`, Java `package a.b`), else ""
    lines: int
    error_nodes: int  # syntax errors tree-sitter recovered from
    defs: tuple[Definition, ...]
    refs: tuple[Reference, ...]
    imports: tuple[Import, ...]
    bindings: tuple[Binding, ...]
    impls: tuple[Impl, ...]
    # the build constraint the file states (Go's `//go:build` expression), "" where none
    build: str = ""


class RefKind:
    CALL: Final = "call"
    NEW: Final = "new"  # constructor call: `new T()`, `T{}` literals are not calls
    TYPE: Final = "type"  # a type annotation or type position
    VALUE: Final = "value"  # a name used as a value (callback, constant read)
    EXTENDS: Final = "extends"  # base class / base interface of the enclosing definition
    IMPLEMENTS: Final = "implements"


BASE_KINDS: Final = frozenset({RefKind.EXTENDS, RefKind.IMPLEMENTS})
REF_KINDS: Final = frozenset({RefKind.CALL, RefKind.NEW, RefKind.TYPE, RefKind.VALUE,
                              RefKind.EXTENDS, RefKind.IMPLEMENTS})
# how many fields the blob of an earlier knoxidx has, with every reference inline
_INLINE_REFS_FIELDS: Final = 10
# A stored blob is sealed: this tag, the xxh3-64 digest of the rest, then the marshalled
# fields. A flipped byte that still unmarshals (inside a name, a line number) would otherwise
# become the graph an update resolves against, unnoticed; checking costs ~1 us per 10 KB.
# where dump_facts puts the build constraint (after the marshalled references and the ids)
_BUILD_FIELD: Final = 12
# how many fields a binding has (an earlier blob's have no positions)
_BINDING_FIELDS: Final = len(Binding._fields)
_SEAL: Final = b"KXF1"
_SEALED_AT: Final = len(_SEAL) + 8
_FACTS: Final = "a file's stored facts"


def dump_facts(facts: FileFacts, ids: Sequence[int],
               base: tuple[Any, ...] | None = None) -> bytes:
    """Facts as bytes for the index: ``marshal`` of plain tuples, several times faster than
    pickling NamedTuples (pickle calls ``__getnewargs__`` in Python for every record). The
    format is tied to the Python version, which the engine fingerprint includes.

    The references, most of a file's records, are marshalled on their own inside: only the
    file's own resolution reads them. Another file's resolution reads its interface
    (:func:`load_interface`), which has the base-class references besides, repeated outside.
    Last, ``ids``: the definitions' node ids (``file_index.definition_ids``), which the
    resolver of another file would otherwise hash again each time it loads the interface.
    ``base``: :func:`base_references` of the references, when the caller has them already."""
    refs: tuple[Any, ...] = facts.refs
    if refs and type(refs[0]) is not tuple:  # records (``extract_rows`` gives plain rows)
        refs = tuple(map(tuple, refs))
    fields = marshal.dumps((
        facts.path, facts.language, facts.package, facts.lines, facts.error_nodes,
        tuple(map(tuple, facts.defs)), base_references(refs) if base is None else base,
        tuple(map(tuple, facts.imports)), tuple(map(tuple, facts.bindings)),
        tuple(map(tuple, facts.impls)), marshal.dumps(refs), tuple(ids), facts.build,
    ))
    return _SEAL + xxhash.xxh3_64_digest(fields) + fields


def blob_fields(blob: bytes) -> tuple[Any, ...]:
    """A stored blob's fields as :func:`dump_facts` marshalled them (the references still
    marshalled inside), its seal checked."""
    with decoding_stored(_FACTS):
        return _unsealed(blob)


def _unsealed(blob: bytes) -> tuple[Any, ...]:
    """A stored blob's fields, its seal checked (inside :func:`decoding_stored`). A blob
    without a seal was written by an earlier knoxidx (an index not updated since)."""
    if blob[: len(_SEAL)] == _SEAL:
        fields = memoryview(blob)[_SEALED_AT:]
        if xxhash.xxh3_64_digest(fields) != blob[len(_SEAL) : _SEALED_AT]:
            raise ValueError("its checksum does not match")
        loaded = marshal.loads(fields)
    else:
        loaded = marshal.loads(blob)
    if type(loaded) is not tuple or len(loaded) < _INLINE_REFS_FIELDS:
        raise ValueError("not a facts record")
    return loaded


def base_references(refs: Sequence[Any]) -> tuple[Any, ...]:
    """The base-class references (``extends``/``implements``) among ``refs``, records or
    plain rows alike."""
    return tuple([r for r in refs if r[0] in BASE_KINDS])


def as_references(rows: tuple[tuple[Any, ...], ...]) -> tuple[Reference, ...]:
    """Plain reference rows (``extract_rows``) as :class:`Reference` records."""
    return _records(Reference, rows)


def load_facts(blob: bytes) -> FileFacts:
    with decoding_stored(_FACTS):
        fields = _unsealed(blob)
        if len(fields) == _INLINE_REFS_FIELDS:  # an earlier knoxidx's: every reference inline
            return _facts(fields, fields[6])
        return _facts(fields, marshal.loads(fields[10]))


def load_interface(blob: bytes) -> tuple[FileFacts, bytes | None, tuple[int, ...] | None]:
    """What other files' resolution can consult in a file: its facts with only the base-class
    references (``extends``/``implements``) in ``refs``, and every reference still marshalled
    (:func:`load_references`). A third of the work of :func:`load_facts` on the benchmark
    corpus (most records are references), and what a resolver keeps cached is as much lighter.
    Third, the definitions' node ids.

    A blob an earlier knoxidx wrote (an index not updated since the upgrade, read by a query)
    loads too: with every reference inline, whole, with None for the marshalled references;
    without the ids, with None for them."""
    with decoding_stored(_FACTS):
        fields = _unsealed(blob)
        # the base references, or every reference in an earlier knoxidx's blob (no 11th field)
        return _facts(fields, fields[6]), (
            fields[10] if len(fields) > _INLINE_REFS_FIELDS else None), (
            fields[11] if len(fields) > _INLINE_REFS_FIELDS + 1 else None)


def _facts(fields: tuple[Any, ...], refs: tuple[Any, ...]) -> FileFacts:
    """A blob's fields as records, with ``refs`` as the references."""
    path, language, package, lines, errors, defs, _, imports, bindings, impls = fields[:10]
    if bindings and len(bindings[0]) < _BINDING_FIELDS:  # an earlier blob's: no positions
        bindings = tuple([(*b, 0, 0, 0) for b in bindings])
    return FileFacts(
        path, language, package, lines, errors, _records(Definition, defs),
        _records(Reference, refs), _records(Import, imports), _records(Binding, bindings),
        _records(Impl, impls),
        fields[_BUILD_FIELD] if len(fields) > _BUILD_FIELD else "",  # an earlier blob: none
    )


def load_references(refs: bytes) -> tuple[Reference, ...]:
    """Every reference of a file, in order, from the bytes :func:`load_interface` left."""
    return as_references(load_reference_rows(refs))


def load_reference_rows(refs: bytes) -> tuple[tuple[Any, ...], ...]:
    """The plain rows of :func:`load_references` (checked with the blob they came in)."""
    with decoding_stored(_FACTS):
        rows = marshal.loads(refs)
        if type(rows) is not tuple:
            raise ValueError("not a tuple of references")
        return rows


def _records(cls: type, rows: tuple[tuple[Any, ...], ...]) -> tuple[Any, ...]:
    """``rows`` as ``cls`` records, built in C: ``cls._make`` is a Python call per record, and
    resolution loads hundreds of thousands of them. The rows come from :func:`dump_facts` of
    the same records, so their lengths are right."""
    return tuple(map(tuple.__new__, repeat(cls), rows))
