"""What a language declares: its description (data) and the hooks its code provides.

A language lives in one folder, ``knoxidx/languages/<family>/``: its ``__init__.py`` holds the
descriptions (``LANGUAGES``, one ``LanguageSpec`` per dialect the family reads), beside them
its tree-sitter queries (``tags.scm``, ``complexity.scm``) and its hooks module, which
implements ``Language``: what the extractor and the resolver call for what queries cannot say
(imports, exports, doc comments, how an import path maps to a file).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from knoxidx.indexer.facts import Import, RefKind


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """One language as data: everything knoxidx knows of it that is not code."""

    name: str  # what facts and chunks are tagged with, and a ``--language`` value
    family: str  # its folder under knoxidx/languages: the hooks and rules it shares
    extensions: tuple[str, ...]  # file suffixes, lower case, with the dot
    grammar_module: str  # the tree-sitter grammar's package ...
    grammar_function: str  # ... and the function in it that returns the language
    hooks: str  # the module implementing ``Language`` for the family
    # folders of query files (``tags.scm``, ``complexity.scm``), relative to the directory
    # above the knoxidx package, read in order: a dialect builds on its base's patterns
    queries: tuple[str, ...]
    # other ``--language`` values that cover this language (``js`` covers TypeScript too)
    aliases: tuple[str, ...] = ()
    # directory names under which every file is test code, and regular expressions a test
    # file's whole name matches (``[^/]*_test\.go``)
    test_dirs: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()
    # the language's reserved words: syntax, no meaning, left out of a chunk's text view
    keywords: frozenset[str] = frozenset()
    # files that mark a project's root (its build output is skipped beside them) ...
    manifests: tuple[str, ...] = ()
    # ... and the configuration files the resolver reads (``go.mod``, ``tsconfig.json``)
    configs: tuple[str, ...] = field(default=())

    @property
    def plugin(self) -> Language:
        """The family's hooks module (imported on first use)."""
        from knoxidx.languages.registry import family_plugin

        return family_plugin(self.family)


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
