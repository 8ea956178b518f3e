"""Which languages knoxidx reads, by file extension, and where each one's knowledge lives.

Everything language-specific is data (``queries/<dir>/tags.scm``) plus one small module per
family in ``knoxidx.indexer.lang`` for what queries cannot say (imports, exports, doc comments,
how an import path maps to a file). Adding a language means adding an entry here, a query
folder and, if it is a new family, a module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

QUERY_ROOT = Path(__file__).parent / "queries"


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    name: str  # "python", "typescript", "tsx", "javascript", "rust", "go", "java"
    family: str  # module-resolution family: "python", "js", "rust", "go", "java"
    extensions: tuple[str, ...]
    grammar_module: str
    grammar_function: str
    query_dir: str

    @property
    def plugin(self) -> ModuleType:
        return family_plugin(self.family)


LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec("python", "python", (".py", ".pyi"), "tree_sitter_python", "language", "python"),
    LanguageSpec(
        "typescript", "js", (".ts", ".mts", ".cts"),
        "tree_sitter_typescript", "language_typescript", "typescript",
    ),
    LanguageSpec("tsx", "js", (".tsx",), "tree_sitter_typescript", "language_tsx", "tsx"),
    LanguageSpec(
        "javascript", "js", (".js", ".jsx", ".mjs", ".cjs"),
        "tree_sitter_javascript", "language", "javascript",
    ),
    LanguageSpec("rust", "rust", (".rs",), "tree_sitter_rust", "language", "rust"),
    LanguageSpec("go", "go", (".go",), "tree_sitter_go", "language", "go"),
    LanguageSpec("java", "java", (".java",), "tree_sitter_java", "language", "java"),
)

BY_NAME: dict[str, LanguageSpec] = {spec.name: spec for spec in LANGUAGES}
BY_EXTENSION: dict[str, LanguageSpec] = {
    ext: spec for spec in LANGUAGES for ext in spec.extensions
}


def language_for_path(path: str) -> LanguageSpec | None:
    dot = path.rfind(".")
    if dot < 0:
        return None
    if path.endswith((".d.ts", ".d.mts", ".d.cts")):
        return BY_NAME["typescript"]
    return BY_EXTENSION.get(path[dot:].lower())


@cache
def family_plugin(family: str) -> ModuleType:
    return importlib.import_module(f"knoxidx.indexer.lang.{family}")


@cache
def ts_language(name: str) -> Any:
    """The compiled tree-sitter Language for ``name`` (loaded once per process)."""
    from tree_sitter import Language

    spec = BY_NAME[name]
    module = importlib.import_module(spec.grammar_module)
    return Language(getattr(module, spec.grammar_function)())


@cache
def query_source(name: str) -> str:
    spec = BY_NAME[name]
    parts = []
    # A dialect folder may build on a base one: tsx and typescript start from javascript's.
    # The complexity patterns (``complexity.scm``) run in the same pass as the tags: a query of
    # their own would walk the whole tree again.
    for folder in _query_chain(spec.query_dir):
        for file in ("tags.scm", "complexity.scm"):
            path = QUERY_ROOT / folder / file
            if path.exists():
                parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def _query_chain(folder: str) -> list[str]:
    chain = [folder]
    base_file = QUERY_ROOT / folder / "BASE"
    while base_file.exists():
        folder = base_file.read_text(encoding="utf-8").strip()
        chain.insert(0, folder)
        base_file = QUERY_ROOT / folder / "BASE"
    return chain
