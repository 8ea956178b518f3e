"""The registry of the languages knoxidx reads: every other module asks it, none keeps a copy.

A language is one folder, ``knoxidx/languages/<family>/`` (see ``knoxidx.languages.spec``):
adding one means adding its folder and its family's name to ``FAMILIES``.
"""

from __future__ import annotations

import importlib
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from knoxidx.languages.spec import LanguageSpec

if TYPE_CHECKING:
    from knoxidx.languages.protocol import Language

FAMILIES: tuple[str, ...] = ("python", "js", "rust", "go", "java")

# the directory above the knoxidx package, which the descriptions' query folders start from
_SOURCE_ROOT = Path(__file__).resolve().parent.parent.parent


def _described(families: tuple[str, ...]) -> tuple[LanguageSpec, ...]:
    specs: list[LanguageSpec] = []
    for family in families:
        module = importlib.import_module(f"knoxidx.languages.{family}")
        specs.extend(cast("tuple[LanguageSpec, ...]", module.LANGUAGES))
    return tuple(specs)


LANGUAGES: tuple[LanguageSpec, ...] = _described(FAMILIES)
BY_NAME: dict[str, LanguageSpec] = {spec.name: spec for spec in LANGUAGES}
BY_EXTENSION: dict[str, LanguageSpec] = {
    ext: spec for spec in LANGUAGES for ext in spec.extensions
}
# Names a user may pass to --language, and which languages each covers: each language's own
# name first, then the aliases the descriptions add (``js``).
LANGUAGE_ALIASES: dict[str, tuple[str, ...]] = {
    alias: tuple(spec.name for spec in LANGUAGES if alias in (spec.name, *spec.aliases))
    for alias in dict.fromkeys([*BY_NAME, *(a for spec in LANGUAGES for a in spec.aliases)])
}
# Every language's reserved words, for text views that leave syntax out.
KEYWORDS: frozenset[str] = frozenset().union(*(spec.keywords for spec in LANGUAGES))
# Files that mark a project's root, and the configuration files the resolver reads.
MANIFESTS: frozenset[str] = frozenset(m for spec in LANGUAGES for m in spec.manifests)
CONFIGS: frozenset[str] = frozenset(c for spec in LANGUAGES for c in spec.configs)
# Every language's test directory names and test file name patterns (regular expressions over
# a whole file name), each once.
TEST_DIRS: tuple[str, ...] = tuple(dict.fromkeys(d for s in LANGUAGES for d in s.test_dirs))
TEST_FILES: tuple[str, ...] = tuple(dict.fromkeys(f for s in LANGUAGES for f in s.test_files))




def language_for_path(path: str) -> LanguageSpec | None:
    dot = path.rfind(".")
    if dot < 0:
        return None
    return BY_EXTENSION.get(path[dot:].lower())


@lru_cache(maxsize=16_384)
def name_of_file(path: str) -> str:
    """What a file is named for: its name without the extension, or for a file its language
    names after its directory (``directory_named_files``: ``_examples/clone/main.go``,
    ``pkg/__init__.py``), that directory's name, its language's source folders passed over
    (``source_dirs``: ``mycrate/src/lib.rs`` -> ``mycrate``); the file's own name where no
    directory names it (``src/lib.rs`` at the root)."""
    *directories, file_name = path.replace("\\", "/").split("/")
    stem = file_name.split(".", 1)[0]
    spec = language_for_path(file_name)
    if spec is None or stem not in spec.directory_named_files:
        return stem
    for directory in reversed(directories):
        if directory and directory.lower() not in spec.source_dirs:
            return directory
    return stem


@cache
def family_plugin(family: str) -> Language:
    """The family's hooks module, imported once (the extractor and the resolver keep it)."""
    spec = next(spec for spec in LANGUAGES if spec.family == family)
    return cast("Language", importlib.import_module(spec.hooks))


@cache
def ts_language(name: str) -> Any:
    """The compiled tree-sitter Language for ``name`` (loaded once per process)."""
    from tree_sitter import Language as TreeSitterLanguage

    spec = BY_NAME[name]
    module = importlib.import_module(spec.grammar_module)
    return TreeSitterLanguage(getattr(module, spec.grammar_function)())


@cache
def query_source(name: str) -> str:
    # The complexity patterns (``complexity.scm``) run in the same pass as the tags: a query of
    # their own would walk the whole tree again.
    parts = []
    for folder in query_folders(name):
        for file in ("tags.scm", "complexity.scm"):
            path = folder / file
            if path.exists():
                parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def query_folders(name: str) -> list[Path]:
    """The folders ``name``'s query is read from, its base's first."""
    return [_SOURCE_ROOT / folder for folder in BY_NAME[name].queries]

