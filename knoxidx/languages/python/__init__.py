"""Python."""

from typing import TYPE_CHECKING

from knoxidx.languages.spec import LanguageSpec

if TYPE_CHECKING:  # mypy checks the hooks module against what the engine calls
    from knoxidx.languages.protocol import Language
    from knoxidx.languages.python import hooks as _hooks

    _CHECKED: Language = _hooks

LANGUAGES = (
    LanguageSpec(
        name="python", family="python", extensions=(".py", ".pyi"),
        grammar_module="tree_sitter_python", grammar_function="language",
        hooks="knoxidx.languages.python.hooks", queries=("knoxidx/languages/python",),
        test_files=(r"[^/]*_tests?\.py", r"conftest\.py"),
        directory_named_files=("__init__", "__main__"),
        keywords=frozenset({
            "def", "class", "self", "cls", "return", "if", "elif", "else", "for", "while",
            "in", "is", "not", "and", "or", "none", "true", "false", "import", "from", "as",
            "pass", "try", "except", "finally", "raise", "lambda", "async", "await", "yield",
            "assert", "del", "global", "nonlocal", "with", "break", "continue", "match",
            "case", "super",
        }),
        manifests=("pyproject.toml", "setup.py", "setup.cfg"),
    ),
)
