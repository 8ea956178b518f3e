"""Rust."""

from typing import TYPE_CHECKING

from knoxidx.languages.spec import LanguageSpec

if TYPE_CHECKING:  # mypy checks the hooks module against what the engine calls
    from knoxidx.languages.protocol import Language
    from knoxidx.languages.rust import hooks as _hooks

    _CHECKED: Language = _hooks

LANGUAGES = (
    LanguageSpec(
        name="rust", family="rust", extensions=(".rs",),
        grammar_module="tree_sitter_rust", grammar_function="language",
        hooks="knoxidx.languages.rust.hooks", queries=("knoxidx/languages/rust",),
        test_files=(r"[^/]*_tests?\.rs",),
        directory_named_files=("mod", "lib", "main"), source_dirs=("src",),
        keywords=frozenset({
            "fn", "pub", "mut", "impl", "use", "mod", "crate", "super", "self", "ref", "dyn",
            "where", "match", "loop", "break", "continue", "struct", "enum", "return", "if",
            "else", "for", "while", "in", "as", "let", "const", "static", "true", "false",
            "async", "await", "move", "unsafe",
        }),
        manifests=("Cargo.toml",), configs=("Cargo.toml",),
    ),
)
