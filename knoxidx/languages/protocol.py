"""What a language's hooks module provides: the interface the extractor and the resolver call.

Apart from ``spec`` (the descriptions, data), so that the commands that only ask the registry
which languages there are do not build these protocol classes at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from knoxidx.core.facts import Binding, Definition, FileFacts, Import, NamePath
    from knoxidx.core.symbols import Symbol
    from knoxidx.parse.file_index import FileIndex
    from knoxidx.parse.signatures import SignatureData

T = TypeVar("T")


@runtime_checkable
class ResolverView(Protocol):
    """What the rules ask of the resolver (``knoxidx.graph.resolve.Resolver``, a layer above,
    hence a protocol): its reads of the workspace, each recorded as a lookup key, and what
    names and paths denote."""

    # the repository's layout (``knoxidx.graph.layout.Layout``: go.mod, Cargo.toml, tsconfig)
    layout: Any

    def index(self, path: str) -> FileIndex | None: ...
    def definition(self, symbol: Symbol) -> Definition | None: ...
    def module_paths(self, family: str, key: str) -> tuple[str, ...]: ...
    def module_names(self, family: str, key: str) -> dict[str, list[tuple[str, int]]]: ...
    def defs_named(self, family: str, name: str) -> list[tuple[str, int, str, bool]]: ...
    def methods_of(self, family: str, owner: str) -> list[tuple[str, int, str]]: ...
    def child(self, fi: FileIndex, scope: int, name: str) -> list[int] | None: ...
    def missed(self, fi: FileIndex, scope: int, name: str) -> None: ...
    def missed_name(self, name: str) -> None: ...
    def memo(self, key: tuple[Hashable, ...], compute: Callable[..., T], *args: Any) -> T: ...
    def module_member(self, module: Symbol, name: str, depth: int,
                      compute: Callable[[], list[Symbol]]) -> list[Symbol]: ...
    def resolve_path(self, fi: FileIndex, path: NamePath, scope: int,
                     want_type: bool = False, site: int = 0, held: bool = False
                     ) -> tuple[list[Symbol], str]: ...
    def member(self, symbol: Symbol, name: str, depth: int = 0
               ) -> tuple[list[Symbol], bool]: ...
    def class_member(self, path: str, index: int, name: str, depth: int = 0
                     ) -> list[Symbol]: ...
    def bases_of(self, path: str, index: int) -> list[Symbol]: ...
    def binding_type(self, fi: FileIndex, binding: Binding, depth: int = 0) -> list[Symbol]: ...
    def returns(self, symbol: Symbol, depth: int = 0) -> list[Symbol]: ...


@runtime_checkable
class ResolutionRules(Protocol):
    """What the resolver asks a family's ``RULES`` (``knoxidx.languages.common.BaseRules``
    gives the defaults). ``r`` is the resolver, ``fi`` the file's index, ``imp`` an import."""

    self_names: frozenset[str]
    self_type_names: frozenset[str]
    self_binds_anywhere: bool
    class_members_visible: bool
    out_of_line_methods: bool
    methods_outside_module_scope: bool
    super_call_constructs: bool
    super_calls_constructor: bool
    this_calls_constructor: bool
    types_apart_from_values: bool
    new_calls_constructor: bool
    constructors_inherited: bool
    new_calls_interfaces: bool
    constructor_name: str
    guess_bare_names: bool
    guess_members: bool
    guess_outside_receivers: bool
    fixed_arity_first: bool
    bases_are_fields: bool
    locals_callable: bool
    rebinding_changes_type: bool
    rebindings_widen_type: bool
    results_yield_to_rebindings: bool
    declared_types_name_items: bool
    bindings_block_scoped: bool
    places_every_local: bool
    same_type_methods: frozenset[str]
    same_type_fields: frozenset[str]
    classes_block_scoped: bool
    builtin_method_names: frozenset[str]
    builtin_functions: frozenset[str]
    builtin_types: frozenset[str]
    universal_methods: frozenset[str]
    receivers_outside: bool
    element_callbacks: frozenset[str]
    elements_kept: frozenset[str]
    element_results: frozenset[str]
    called_locals_hold_elements: bool
    outside_receivers_hold_elements: bool
    async_results_awaited: bool
    literal_keys_of_maps: bool
    argument_results: Mapping[tuple[str, str], int]
    tied_overloads_kept: int
    separator: str
    module_joiner: str
    special_heads: frozenset[str]
    getter_prefix: str

    def module_keys(self, path: str, facts: FileFacts, layout: Any) -> list[str]: ...
    def qualified_prefix(self, path: str, keys: list[str]) -> str: ...
    def import_targets(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]: ...
    def import_binding(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]: ...
    def module_member(self, r: ResolverView, module: Symbol, name: str) -> list[Symbol]: ...
    def module_fallback(self, r: ResolverView, fi: FileIndex, name: str) -> list[Symbol]: ...
    def special_head(self, r: ResolverView, fi: FileIndex, head: str, scope: int
                     ) -> list[Symbol] | None: ...
    def looked_up_as(self, definition: Definition) -> tuple[str, ...]: ...
    def injected(self, r: ResolverView, fi: FileIndex, scope: int, name: str
                 ) -> list[Symbol]: ...
    def outside_call(self, r: ResolverView, fi: FileIndex, scope: int, path: NamePath,
                     site: int) -> bool: ...
    def decorated_types(self, r: ResolverView, fi: FileIndex, index: int) -> list[Symbol]: ...
    def yielded_type(self, declared: str) -> str: ...
    def owner_matches(self, r: ResolverView, fi: FileIndex, index: int, path: str,
                      method: int) -> bool: ...
    def outside_name(self, r: ResolverView, fi: FileIndex, name: str) -> bool: ...
    def outside_results(self, external: Symbol) -> bool: ...
    def read_as_value(self, decorators: tuple[str, ...]) -> bool: ...
    def returns_read(self, decorators: tuple[str, ...]) -> bool: ...
    def wrapper_method(self, declared: str, name: str) -> bool: ...
    def element_type(self, declared: str) -> str: ...
    def written_type(self, signature: str, name: str) -> str: ...
    def callback_parameter(self, declared: str, index: int = 0) -> str: ...
    def iterator_items(self, r: ResolverView, fi: FileIndex, scope: int, declared: str
                       ) -> list[Symbol]: ...
    def payload_types(self, r: ResolverView, fi: FileIndex, binding: Binding, depth: int
                      ) -> list[Symbol]: ...
    def extra_bases(self, r: ResolverView, fi: FileIndex, index: int) -> list[Symbol]: ...
    def receiver_methods(self, r: ResolverView, fi: FileIndex, scope: int, receiver: NamePath,
                         site: int, declared: list[Symbol]) -> list[Symbol]: ...
    def caller_twins(self, r: ResolverView, fi: FileIndex, scope: int, targets: list[Symbol]
                     ) -> list[Symbol]: ...
    def parameters(self, signature: str, name: str
                   ) -> tuple[int, int, tuple[str, ...]] | None: ...
    def argument_fits(self, r: ResolverView, fi: FileIndex, scope: int, argument: str,
                      target: Symbol, parameter: str) -> bool: ...
    def argument_is(self, r: ResolverView, fi: FileIndex, scope: int, argument: str,
                    parameter: str) -> bool: ...


@runtime_checkable
class Language(Protocol):
    """A family's hooks module: what extraction and resolution call. Every hook that reads a
    node takes the file's ``source`` too: a node's text is sliced from it, never read as
    ``node.text``, which goes back through the parse's read callback. (Read-only members, so
    that mypy checks a hooks module against this protocol: its family's ``__init__``.)"""

    @property
    def FAMILY(self) -> str: ...
    # reference kinds (``RefKind``'s) a local binding of the same name shadows
    @property
    def LOCAL_SHADOWS(self) -> frozenset[str]: ...
    # definition nodes whose declared type follows their names (Go's `var a, b T`)
    @property
    def TYPE_AFTER_NAMES(self) -> frozenset[str]: ...
    @property
    def SQUARE_TYPE_ARGS(self) -> bool: ...  # generics in square brackets (`List[T]`)
    @property
    def RULES(self) -> ResolutionRules: ...

    # (callables, not methods: a module's functions take no ``self``)
    @property
    def classify(self) -> Callable[[str, str, Any, bytes], str | None]: ...
    @property
    def doc_comment(self) -> Callable[[Any, bytes], str]: ...
    @property
    def is_exported(self) -> Callable[[Any, str, bool, bytes], bool | None]: ...
    @property
    def package_name(self) -> Callable[[str], str]: ...
    @property
    def decode_import(self) -> Callable[[Any, int, bytes], list[Import]]: ...
    # a function's parameters, return type, type parameters and decorators, as written; None
    # for a function-kind definition that has none (a Rust macro). Not (): the compiled build
    # checks a returned () against a union's 4-tuple member and fails the file.
    @property
    def signature_of(self) -> Callable[[Any, bytes], SignatureData | None]: ...


@runtime_checkable
class BindsNames(Protocol):
    """A language whose queries capture ``@binding.names`` (several names bound by one
    declaration: `var a, b *T`, `({ a, b }: Props)`) says which nodes are the names."""

    bound_names: Callable[[Any], Sequence[Any]]


@runtime_checkable
class TypesProperties(Protocol):
    """A language whose queries capture ``@binding.object`` (`({ a }: { a: A })`) maps each
    property of the inline object type to its type node."""

    property_types: Callable[[Any, bytes], dict[str, Any]]


@runtime_checkable
class CountsArguments(Protocol):
    """A language whose queries capture ``@arity`` (a call's argument list) says how many
    arguments it passes and each one's static type where certain (overloads by arity)."""

    call_arguments: Callable[[Any, bytes], tuple[int, tuple[str, ...]]]


@runtime_checkable
class ReadsDeclaredTypes(Protocol):
    """A language whose declared types may stand for several types or none (Rust: a type
    parameter stands for its bounds, `V: Visit + ?Sized`; `impl Read + Write`) says what a
    ``@binding.type`` node denotes: a ``type_path`` (bounds joined by ``TYPES_JOINER``), ()
    for no known type, None to read it as other declared types are."""

    declared_binding_type: Callable[[Any, bytes], NamePath | None]


@runtime_checkable
class OrdersBindings(Protocol):
    """A language whose bindings are placed (``Binding``'s ``at``, ``block_end``, ``loop``: which
    of a name's several bindings reaches a use) names the nodes that bound a binding's reach
    (``BINDING_BLOCKS``: a block, a case's statements, a statement whose header binds a name
    for its body) and its loops (none where each binding declares a local of its own)."""

    BINDING_BLOCKS: frozenset[str]
    LOOPS: frozenset[str]
    # whether a name bound to a value of no type the index reads (`x = y`, `for x in xs:`)
    # is the same local bound again (Python), not a new one its block declares (Go's `x :=`,
    # a type switch's `x`), so that the earlier bindings reach no use past it
    UNTYPED_REBINDS: bool
    # whether each local a function declares is placed, a name bound once (`for (T x : xs)`)
    # and a declaration of no type the index reads (`var x = f()`) too: a block-scoped local
    # then reaches no read outside its block, which is of whatever the name is there
    PLACES_EVERY_LOCAL: bool


@runtime_checkable
class BindsElements(Protocol):
    """A language whose queries capture ``@binding.element`` (`for x in xs`: x is one of the
    elements of the expression captured) says what x holds: a ``type_path`` and whether it is
    read as a call's (see ``Binding``), ((), False) where it cannot say."""

    element_binding: Callable[[Any, bytes], tuple[NamePath, bool]]


@runtime_checkable
class BindsElementTypes(Protocol):
    """A language whose queries capture ``@binding.elements`` (a node that says what the
    collection ``@binding.name`` holds: `xs.push(new T())`'s arguments) says the type of its
    elements: a ``type_path``, () where it cannot say. The binding is named for the
    collection followed by ``ELEMENT_OF`` (see ``Binding``)."""

    elements_binding: Callable[[Any, bytes], NamePath]


@runtime_checkable
class BindsCallbacks(Protocol):
    """A language whose queries capture ``@binding.callback`` (a function passed to a call,
    whose first parameter is ``@binding.name``, untyped) says what that parameter holds: a
    ``type_path`` ending in ``CALLBACK_OF`` and the argument's position (see ``Binding``), ()
    where it cannot say."""

    callback_binding: Callable[[Any, bytes], NamePath]


@runtime_checkable
class BindsDocumented(Protocol):
    """A language whose queries capture ``@binding.documented`` (an assignment statement to
    ``@binding.name``) says the type the doc comment above it declares: a ``type_path``, ()
    where none does (JavaScript's `/** @type {Node} */ this.node = null`)."""

    documented_binding: Callable[[Any, bytes], NamePath]


@runtime_checkable
class BindsTypeParameters(Protocol):
    """A language whose paths may start at a type parameter (Rust `L::from_raw(p)` where
    `L: Link`) binds, in each function that names one so, the parameter's name to its bounds
    (a ``Binding`` whose ``type_path`` joins them), from the parse tree, the file's
    references (``Reference``'s fields, as tuples) and its definitions."""

    type_parameter_bindings: Callable[[Any, Sequence[tuple[Any, ...]], Sequence[Definition],
                                       bytes], list[Binding]]


@runtime_checkable
class DeclaresPayloads(Protocol):
    """A language whose variants and tuple structs carry payloads by place (Rust `enum E {
    V(A, B) }`, `struct W(Inner)`) lists, from the parse tree and the file's definitions,
    (the type's definition, ``payload_name``, the declared type as written) of each place;
    extraction binds each so, read by the rules' ``payload_types`` (see ``PAYLOAD_OF``)."""

    payload_declarations: Callable[[Any, Sequence[Definition], bytes],
                                   list[tuple[int, str, str]]]


@runtime_checkable
class ReadsReturns(Protocol):
    """A language whose queries capture ``@returned`` (a `return` statement, or a `yield`:
    a generator, which returns no value of its own) says what a `return` statement's value
    holds, as a binding's ``type_path`` and whether it is a call's (see ``Binding``); ((),
    False) where it returns nothing (`return None`), None where its type is not read."""

    returned_value: Callable[[Any, bytes], tuple[NamePath, bool] | None]
    # what a returned binding holds, as the language reads it (`self.__class__(..)`: the
    # receiver's class), the binding of a returned local as well
    returned_path: Callable[[NamePath, bool], tuple[NamePath, bool]]


@runtime_checkable
class StatesConstraints(Protocol):
    """A language whose files may state which builds compile them (Go's `//go:build`) reads
    that statement from the parse tree's header: ``FileFacts.build``, "" where none."""

    build_constraint: Callable[[Any, bytes], str]
