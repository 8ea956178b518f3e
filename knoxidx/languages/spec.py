"""What a language declares about itself, as data.

A language lives in one folder, ``knoxidx/languages/<family>/``: its ``__init__.py`` holds the
descriptions (``LANGUAGES``, one ``LanguageSpec`` per dialect the family reads), beside them
its tree-sitter queries (``tags.scm``, ``complexity.scm``) and its hooks module, which
implements ``knoxidx.languages.protocol.Language``: what the extractor and the resolver call
for what queries cannot say (imports, exports, doc comments, how an import path maps to a
file).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from knoxidx.languages.protocol import Language


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
    # whether its functions' and methods' names begin in lower case by convention, so that a
    # method named with a capital or by a string key is named after the kind of thing it is
    # called on, not after what it does: a visitor's handlers (ESLint's `MemberExpression`,
    # `"Program:exit"`; Babel's `Identifier`)
    lower_case_functions: bool = False
    # the mean characters per line above which a file of the language is a minifier's output
    # (a library on one line or a few) and skipped as ``minified``; 0: the language is not
    # minified in practice, so a long line in it is data written or generated on purpose
    minified_line_chars: int = 0
    # file names (without the extension) that stand for their directory: a package's,
    # module's or program's entry file (``__init__``, ``mod``, ``index``, Go's ``main``),
    # whose own name says nothing of what it holds; the directory's name says it
    directory_named_files: tuple[str, ...] = ()
    # directories that hold such a file without naming what it stands for, passed over for
    # the one above (``mycrate/src/lib.rs``: the crate); elsewhere (``numpy/lib/__init__.py``)
    # the directory is the package's name
    source_dirs: tuple[str, ...] = ()

    @property
    def plugin(self) -> Language:
        """The family's hooks module (imported on first use)."""
        return cast("Language", importlib.import_module(self.hooks))
