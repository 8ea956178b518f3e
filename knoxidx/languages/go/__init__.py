"""Go."""

from typing import TYPE_CHECKING

from knoxidx.languages.spec import LanguageSpec

if TYPE_CHECKING:  # mypy checks the hooks module against what the engine calls
    from knoxidx.languages.go import hooks as _hooks
    from knoxidx.languages.protocol import Language

    _CHECKED: Language = _hooks

LANGUAGES = (
    LanguageSpec(
        name="go", family="go", extensions=(".go",),
        grammar_module="tree_sitter_go", grammar_function="language",
        hooks="knoxidx.languages.go.hooks", queries=("knoxidx/languages/go",),
        test_dirs=("testdata",), test_files=(r"[^/]*_tests?\.go",),
        directory_named_files=("main",),
        keywords=frozenset({
            "func", "defer", "go", "package", "import", "return", "if", "else", "for", "var",
            "const", "struct", "interface", "switch", "case", "default", "break", "continue",
            "nil", "true", "false",
        }),
        manifests=("go.mod",), configs=("go.mod",),
    ),
)
