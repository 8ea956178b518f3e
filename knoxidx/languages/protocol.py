"""What a language's hooks module provides: the interface the extractor and the resolver call.

Apart from ``spec`` (the descriptions, data), so that the commands that only ask the registry
which languages there are do not build these protocol classes at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from knoxidx.core.facts import Import, RefKind
    from knoxidx.parse.signatures import SignatureData


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
    guess_bare_names: bool
    guess_members: bool
    locals_callable: bool
    builtin_method_names: frozenset[str]
    separator: str
    module_joiner: str
    special_heads: frozenset[str]

    def module_keys(self, path: str, facts: Any, layout: Any) -> list[str]: ...
    def qualified_prefix(self, path: str, keys: list[str]) -> str: ...
    def import_targets(self, r: Any, fi: Any, imp: Any) -> list[Any]: ...
    def import_binding(self, r: Any, fi: Any, imp: Any) -> list[Any]: ...
    def module_member(self, r: Any, module: Any, name: str) -> list[Any]: ...
    def module_fallback(self, r: Any, fi: Any, name: str) -> list[Any]: ...
    def special_head(self, r: Any, fi: Any, head: str, scope: int) -> list[Any] | None: ...
    def owner_matches(self, r: Any, fi: Any, index: int, path: str, method: int) -> bool: ...
    def wrapper_method(self, declared: str, name: str) -> bool: ...
    def extra_bases(self, r: Any, fi: Any, index: int) -> list[Any]: ...


@runtime_checkable
class Language(Protocol):
    """A family's hooks module: what extraction and resolution call. Every hook that reads a
    node takes the file's ``source`` too: a node's text is sliced from it, never read as
    ``node.text``, which goes back through the parse's read callback."""

    FAMILY: str
    # reference kinds a local binding of the same name shadows
    LOCAL_SHADOWS: frozenset[RefKind]
    # definition nodes whose declared type follows their names (Go's `var a, b T`)
    TYPE_AFTER_NAMES: frozenset[str]
    SQUARE_TYPE_ARGS: bool  # generics in square brackets (`List[T]`), not angle ones
    RULES: ResolutionRules

    # (declared as callables, not methods: a module's functions take no ``self``)
    classify: Callable[[str, str, Any, bytes], str | None]
    doc_comment: Callable[[Any, bytes], str]
    is_exported: Callable[[Any, str, bool, bytes], bool | None]
    package_name: Callable[[str], str]
    decode_import: Callable[[Any, int, bytes], list[Import]]
    # a function's parameters, return type, type parameters and decorators, as written
    signature_of: Callable[[Any, bytes], SignatureData | None]  # None: it has none


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
