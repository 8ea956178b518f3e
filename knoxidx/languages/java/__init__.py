"""Java."""

from knoxidx.languages.spec import LanguageSpec

LANGUAGES = (
    LanguageSpec(
        name="java", family="java", extensions=(".java",),
        grammar_module="tree_sitter_java", grammar_function="language",
        hooks="knoxidx.languages.java.hooks", queries=("knoxidx/languages/java",),
        test_files=(r"[^/]*Tests?\.java",),
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
