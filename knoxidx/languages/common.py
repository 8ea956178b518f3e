"""Helpers shared by the language modules."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from knoxidx.core.symbols import INSTANCE_TAG, Symbol
from knoxidx.parse.definitions import node_text
from knoxidx.parse.file_index import FileIndex
from knoxidx.parse.siblings import named_before, previous_named

if TYPE_CHECKING:
    from knoxidx.core.facts import Binding, Definition, NamePath
    from knoxidx.languages.protocol import ResolverView

COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})


@cache
def field_ids(grammar: str, names: tuple[str, ...]) -> tuple[int, ...]:
    """The ids of the fields ``names`` in the tree-sitter grammar ``grammar`` (a language's
    name): ``child_by_field_id`` spares ``child_by_field_name``'s string compare against the
    grammar's every field name, on each call of the hot hooks."""
    from knoxidx.languages.registry import ts_language

    language = ts_language(grammar)
    found = tuple(language.field_id_for_name(name) for name in names)
    if None in found:
        raise ValueError(f"the {grammar} grammar has no field among {names}: {found}")
    return cast("tuple[int, ...]", found)


def first_doc_line(raw: str) -> str:
    """The first non-empty line of a comment or docstring, without comment markers."""
    for line in raw.splitlines():
        line = line.strip().lstrip("/*#!").rstrip("*/").strip()
        if line.startswith(("'''", '"""')):
            line = line[3:]
        line = line.strip().strip("\"'").strip()
        if line:
            return line[:200]
    return ""


def preceding_comment(node: Any, source: bytes) -> str:
    """The doc comment right above ``node`` (or above its wrapping export/decorator)."""
    prev = previous_named(node, source)
    if prev is None:
        return ""
    if prev.type not in _WRAPPERS:  # most definitions: a step or two back, no list
        if prev.type not in COMMENT_TYPES or _end_row(prev) < node.start_point[0] - 1:
            return ""
        if not _continues_run(previous_named(prev, source), prev):
            return first_doc_line(node_text(source, prev))
    siblings, i = named_before(node, source)  # siblings[i - 1] is the one before node
    target = node
    i -= 1
    while i >= 0 and siblings[i].type in _WRAPPERS:
        target = siblings[i]
        i -= 1
    if i < 0:
        return ""
    prev = siblings[i]
    if prev.type not in COMMENT_TYPES:
        return ""
    if _end_row(prev) < target.start_point[0] - 1:  # a blank line between: not its doc
        return ""
    # Walk up a run of line comments to the first one of the block.
    while i > 0 and _continues_run(siblings[i - 1], siblings[i]):
        i -= 1
    return (first_doc_line(node_text(source, siblings[i]))
            or first_doc_line(node_text(source, prev)))


# what stands between a definition and its doc comment
_WRAPPERS = frozenset({"decorator", "annotation", "attribute_item"})


def _end_row(comment: Any) -> int:
    """The row a comment's text ends on. A Rust line comment holds its newline (it ends at
    column 0 of the next line): taken at face value, a `///` block was never a run (its last
    line stood for its doc), and a comment a blank line above a definition was its doc."""
    row, column = comment.end_point
    return int(row - (column == 0))


def _continues_run(before: Any, after: Any) -> bool:
    """Whether ``before`` is a comment ending on the line above ``after``."""
    return (before is not None and before.type in COMMENT_TYPES
            and _end_row(before) == after.start_point[0] - 1)


class BaseRules:
    """Resolution defaults shared by the language families; each overrides what differs."""

    self_names: frozenset[str] = frozenset()
    self_type_names: frozenset[str] = frozenset()
    self_binds_anywhere = False
    class_members_visible = False
    out_of_line_methods = False
    # out-of-line methods are no names of the module scope (Go: `T{}` is the type even where a
    # method T of another type follows it; Rust: a bare `drop(x)` is not an impl's `drop`)
    methods_outside_module_scope = False
    # `super(...)` alone constructs the instance's base part (JS/TS, Java): a call of the base
    # class, where Python's `super()` is a proxy to call methods on
    super_call_constructs = False
    # `super(...)` calls the base class's constructor, and `this(...)` where
    # ``this_calls_constructor`` (Java) another of the class's own, picked among overloads by
    # the arguments: the member named ``constructor_name``, or as its class where that is empty
    super_calls_constructor = False
    # a single name in a type position (`new Error(..)`, a declared type, a base) is looked up
    # among types only, so a field or local of that name does not hide it (Java: a class's
    # `static final Error Error` beside `new Error(..)`)
    types_apart_from_values = False
    # `new T(...)` calls T's constructor too (picked by the arguments), and a class declaring
    # none runs its base's where ``constructors_inherited`` (JavaScript's implicit one
    # passes its arguments on to `super`): what a change to that constructor reaches
    new_calls_constructor = False
    constructors_inherited = False
    # `new I() {..}` of an interface I (an anonymous class implementing it) calls I (Java)
    new_calls_interfaces = False
    this_calls_constructor = False
    constructor_name = ""
    guess_bare_names = False
    guess_members = False
    # ... but not where the receiver is of a type outside the index (Java's `e.getMessage()` of
    # an `IOException e`: a method of that type, none of the index's)
    guess_outside_receivers = True
    # a method of fixed arity that may take a call's arguments is called rather than a varargs
    # one (Java's phases: `peekToken(lookahead, RPAREN)` is `peekToken(int, Predicate)`, not
    # `peekToken(int, Predicate...)`)
    fixed_arity_first = False
    # a base is also a field named as its type (Go's embedded `*Storer`: `w.Storer.Save()`)
    bases_are_fields = False
    # a local variable can be called (`f()` on a closure), so it shadows a function of its name;
    # a family's RULES say the same as its LOCAL_SHADOWS (tests/test_languages.py)
    locals_callable = True
    # a local may be bound again to a value of another type (Python's `x = x.asc()`): read
    # without their order, its bindings name the types a use may see only where each of them
    # names one (a union where they disagree, see unions.TypeUnion)
    rebinding_changes_type = False
    # a local's later bindings add their types to its first's, a use seeing any of them
    # (JavaScript's `let x;` bound on two branches, `c ? new A() : new B()`)
    rebindings_widen_type = False
    # a local bound to one of a call's results taken apart (`let (tx, rx) = channel()`) and
    # bound again (Rust's `let tx = Arc::new(tx)`, where tx.clone() is the Arc's) holds what
    # its other bindings say: which one reaches a use is not read, and the later one mostly
    # wraps the earlier
    results_yield_to_rebindings = False
    # a declared type's path names modules and types, which no local or function of the name
    # hides (Rust's `fmt: &mut fmt::Formatter` in a `fn fmt`: the parameter fmt is a value,
    # the function a function, the `fmt` of the type the module)
    declared_types_name_items = False
    # each binding of a local declares one scoped to its block (Go's `:=`, Rust's `let`, a Java
    # declaration): of a name's placed bindings, a use reads the last one in scope there, and
    # one in a block the use is not in, not at all (see FileIndex.reaching)
    bindings_block_scoped = False
    # every local is placed (binding_sites.placed, the language's PLACES_EVERY_LOCAL), a name
    # bound once and each declaration of no type read too: where none reaches a read, the
    # read is of no local of the function (a field, around the loop that declares its name;
    # the package's function in Go's `minType := minType(v)`)
    places_every_local = False
    # methods that give a value of their receiver's type where the project writes none of its
    # own (Rust's derived `clone`): `let rt = rt.clone()` holds what rt held
    same_type_methods: frozenset[str] = frozenset()
    # ... and fields that do so (Rust's `.await`: what an `async fn` returns is read as its
    # declared result already)
    same_type_fields: frozenset[str] = frozenset()
    # a class declaration binds its name in its block (JS/TS), so two classes of one name
    # under one definition sit in blocks the index has no scope for (callbacks): which one a
    # reference means is unknown, where Python's later class statement simply rebinds it
    classes_block_scoped = False
    builtin_method_names: frozenset[str] = frozenset()
    # the language's predeclared functions (Go's `len`, `append`): a bare call of one that no
    # declaration in scope shadows is outside the index (an unresolved call's reason)
    builtin_functions: frozenset[str] = frozenset()
    # ... and its predeclared types with methods (Go's `error`): a receiver declared of one
    # is of a type outside the index
    builtin_types: frozenset[str] = frozenset()
    # methods every class has from the language's root class (Java's Object's): one called on
    # an instance of a class of the index that declares none of that name is the root's
    universal_methods: frozenset[str] = frozenset()
    # whether the resolver's own check (Resolver._lies_outside: receivers typed outside the
    # index, bases outside it) says why a call stays unresolved; the others answer in
    # outside_call
    receivers_outside = False
    # methods of the language's own collections that pass each element to a callback first
    # (JavaScript's `xs.forEach((x) => ..)`): its parameter is one of the receiver's elements
    element_callbacks: frozenset[str] = frozenset()
    # ... and those that return a collection of the receiver's own elements (`xs.filter(..)`)
    elements_kept: frozenset[str] = frozenset()
    # ... and those that return one of them (`xs.find(..)`, a map's `m.get(k)`), where the
    # call is of no method the index has
    element_results: frozenset[str] = frozenset()
    # a local holding a call's result holds the elements of what the call returns, as
    # declared (`let w = f(); if let Some(w) = w` where f returns an `Option<Waker>`)
    called_locals_hold_elements = False
    # a receiver of a type outside the index still hands back its elements through
    # element_results (Rust's `m.lock().unwrap().run()` of an `m: Arc<Mutex<T>>`)
    outside_receivers_hold_elements = False
    # a call of an `async` function gives a future, whose methods are the future's until it
    # is awaited (Rust's `lock.write().await.m()`; `lock.write().map(..)` is futures' map)
    async_results_awaited = False
    # a key of a named type's literal is read as a field of a value of it (Go's `T{name: v}`,
    # the path `T().name`), and as the expression it is where the type is a map (`M{k: v}`)
    literal_keys_of_maps = False
    # (type outside the index, method) -> which of the receiver's written type arguments the
    # method returns (Java's `Map.Entry<K, V> e`: `e.getValue()` is a V)
    argument_results: Mapping[tuple[str, str], int] = MappingProxyType({})
    # how many overloads of one class a call's arguments leave untold apart are all named (at
    # the name level); past it the call stays unresolved (0: no limit)
    tied_overloads_kept = 0
    separator = "."
    module_joiner = "."
    # heads special_head may answer for: the resolver asks it about no other
    special_heads: frozenset[str] = frozenset({"super"})
    # how a method read as a value is declared (JavaScript's `get x() {..}`), "" where none is
    getter_prefix = ""

    def read_as_value(self, decorators: tuple[str, ...]) -> bool:
        """Whether a method with these decorators (as written) is read as an attribute whose
        value is what it returns (Python's ``@property``): ``obj.prop.run()`` is the result's."""
        return False

    def returns_read(self, decorators: tuple[str, ...]) -> bool:
        """Whether a method read as a value (see :meth:`read_as_value`) with these
        decorators gives what its `return` statements hold where it declares no type
        (``RETURNED``)."""
        return True

    def wrapper_method(self, declared: str, name: str) -> bool:
        """Whether method ``name`` of a field declared ``declared`` (its definition's text) is
        the declared wrapper's own, not the wrapped type's (Rust's `Box<T>` clones itself)."""
        return False

    def element_type(self, declared: str) -> str:
        """The type of the elements of a collection declared ``declared`` (a function's
        return type as written, or a field's declaration), "" where not known: what a loop
        over it binds (see ``ELEMENT_OF``)."""
        return ""

    def written_type(self, signature: str, name: str) -> str:
        """The declared type of the field ``name`` as its declaration ``signature`` writes it,
        type arguments and all (what a member declared of a type parameter reads), "" where
        the family does not say."""
        return ""

    def callback_parameter(self, declared: str, index: int = 0) -> str:
        """The type of the parameter at ``index`` of a function type declared ``declared`` (a
        parameter's, `fn: (doc: Doc) => void`), "" where not known: what a callback passed
        there is called with (see ``CALLBACK_OF``)."""
        return ""

    def payload_types(self, r: ResolverView, fi: FileIndex, binding: Binding, depth: int
                      ) -> list[Symbol]:
        """The instance types of a name a pattern binds in a variant's payload (a
        ``binding`` whose path ends in ``PAYLOAD_OF``), [] where the family has none."""
        return []

    def iterator_items(self, r: ResolverView, fi: FileIndex, scope: int, declared: str
                       ) -> list[Symbol]:
        """The types of the items of an iterator declared ``declared`` (read in ``scope`` of
        ``fi``) where its own iterator impl says, for a collection ``element_type`` cannot
        read: a family's own iterator types (Rust's `impl Iterator for Pairs`)."""
        return []

    def looked_up_as(self, definition: Definition) -> tuple[str, ...]:
        """The names other than its own that a lookup finds ``definition`` under (a pytest
        fixture's ``name=``): adding it is no mere addition of its name (see
        ``parse.reader.added_definitions``)."""
        return ()

    def injected(self, r: ResolverView, fi: FileIndex, scope: int, name: str) -> list[Symbol]:
        """The functions whose value a framework passes the parameter ``name`` of the function
        at ``scope`` of ``fi`` (see ``INJECTED``: a pytest fixture), an external symbol where
        the value comes from outside the index, [] where none."""
        return []

    def outside_call(self, r: ResolverView, fi: FileIndex, scope: int, path: NamePath,
                     site: int) -> bool:
        """Whether a call of ``path`` from ``scope`` of ``fi`` (at ``site``, a ``point``),
        which resolution found no definition or import for, is known to call something
        outside the index: a builtin, or a method of a type from outside it. False where an
        in-repo definition may be meant."""
        return False

    def decorated_types(self, r: ResolverView, fi: FileIndex, index: int) -> list[Symbol]:
        """The instance types the name of the decorated function at ``index`` of ``fi``
        holds where its decorators give another value than the function (Python's
        ``@click.group()`` makes a Group), [] where it holds the function."""
        return []

    def yielded_type(self, declared: str) -> str:
        """The type a generator declared ``declared`` (its return type as written) yields,
        "" where that declares none: what a generator injected by name gives (``injected``)."""
        return ""

    def special_head(self, r: ResolverView, fi: FileIndex, head: str, scope: int
                    ) -> list[Symbol] | None:
        """``super``: instances of the enclosing class's bases (MRO order)."""
        if head != "super":
            return None
        cls = fi.class_of(scope)
        if cls < 0:
            return []
        return [(INSTANCE_TAG, s[1], s[2]) for s in r.bases_of(fi.path, cls)]

    def parameters(self, signature: str, name: str) -> tuple[int, int, tuple[str, ...]] | None:
        """How many arguments the function ``name`` declared with ``signature`` takes: (least,
        most), most -1 for any number, and its parameters' types as ``argument_fits`` reads
        them; None where the family has no overloads to tell apart (or the signature does
        not say)."""
        return None

    def argument_fits(self, r: ResolverView, fi: FileIndex, scope: int, argument: str,
                      target: Symbol, parameter: str) -> bool:
        """Whether an argument of static type ``argument`` (read in ``scope`` of ``fi``) may
        be passed to the parameter of type ``parameter`` of the function ``target``."""
        return True

    def argument_is(self, r: ResolverView, fi: FileIndex, scope: int, argument: str, parameter: str
                   ) -> bool:
        """Whether the parameter is declared of the argument's very static type."""
        return False

    def owner_matches(self, r: ResolverView, fi: FileIndex, index: int, path: str, method: int
                     ) -> bool:
        return False

    def outside_results(self, external: Symbol) -> bool:
        """Whether what a function of the module ``external`` (outside the index) returns is
        surely of a type outside the index too: never where the module may be generic over
        the caller's types (Java's `list.get(0)`)."""
        return False

    def outside_name(self, r: ResolverView, fi: FileIndex, name: str) -> bool:
        """Whether a bare name (called, or a type) that no definition in scope answers is one
        a wildcard import of something outside the index brings."""
        return False

    def extra_bases(self, r: ResolverView, fi: FileIndex, index: int) -> list[Symbol]:
        return []

    def receiver_methods(self, r: ResolverView, fi: FileIndex, scope: int, receiver: NamePath,
                         site: int, declared: list[Symbol]) -> list[Symbol]:
        """What a call of an interface's method by its path runs on the receiver its first
        argument is (``receiver``, read at ``site`` of ``scope``), where ``declared`` are the
        interface's methods the path names: [] where not known."""
        return []

    def caller_twins(self, r: ResolverView, fi: FileIndex, scope: int, targets: list[Symbol]
                     ) -> list[Symbol]:
        """Of several ``targets`` a call from ``scope`` of ``fi`` reaches, those that a
        definition written twice (under opposite build conditions) runs from there: all
        where the family has no such twins."""
        return targets


class ReexportingRules(BaseRules):
    """For families whose modules re-export what they import (Python, JS/TS, Rust): a module's
    member is the family's ``_module_member``, answered under the resolver's cycle guard and
    memo (``Resolver.module_member``)."""

    def module_member(self, r: ResolverView, module: Symbol, name: str, depth: int = 0
                     ) -> list[Symbol]:
        return r.module_member(module, name, depth,
                               lambda: self._module_member(r, module, name, depth))

    def _module_member(self, r: ResolverView, module: Symbol, name: str, depth: int
                      ) -> list[Symbol]:
        raise NotImplementedError
