"""Go."""

from knoxidx.languages.spec import LanguageSpec

LANGUAGES = (
    LanguageSpec(
        name="go", family="go", extensions=(".go",),
        grammar_module="tree_sitter_go", grammar_function="language",
        hooks="knoxidx.languages.go.hooks", queries=("knoxidx/languages/go",),
        test_dirs=("testdata",), test_files=(r"[^/]*_tests?\.go",),
        keywords=frozenset({
            "func", "defer", "go", "package", "import", "return", "if", "else", "for", "var",
            "const", "struct", "interface", "switch", "case", "default", "break", "continue",
            "nil", "true", "false",
        }),
        manifests=("go.mod",), configs=("go.mod",),
    ),
)
