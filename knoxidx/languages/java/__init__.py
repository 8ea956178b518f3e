"""Java."""

from typing import TYPE_CHECKING

from knoxidx.languages.spec import LanguageSpec

if TYPE_CHECKING:  # mypy checks the hooks module against what the engine calls
    from knoxidx.languages.java import hooks as _hooks
    from knoxidx.languages.protocol import Language

    _CHECKED: Language = _hooks

LANGUAGES = (
    LanguageSpec(
        name="java", family="java", extensions=(".java",),
        grammar_module="tree_sitter_java", grammar_function="language",
        hooks="knoxidx.languages.java.hooks", queries=("knoxidx/languages/java",),
        test_files=(r"[^/]*Tests?\.java",),
        directory_named_files=("package-info",),
        keywords=frozenset({
            "class", "public", "private", "protected", "static", "final", "void", "new",
            "this", "extends", "implements", "package", "import", "return", "if", "else",
            "for", "while", "do", "try", "catch", "finally", "throw", "throws", "true",
            "false", "null", "abstract", "synchronized", "volatile", "transient", "native",
            "assert", "interface", "enum", "switch", "case", "default", "break", "continue",
            "super",
        }),
        manifests=("pom.xml", "build.gradle", "build.gradle.kts"),
    ),
)
