"""JavaScript and TypeScript (and TSX): one family, one resolution of module paths; each
dialect's query builds on the shared ECMAScript one (TSX's on TypeScript's too)."""

from typing import TYPE_CHECKING

from knoxidx.languages.spec import LanguageSpec

if TYPE_CHECKING:  # mypy checks the hooks module against what the engine calls
    from knoxidx.languages.js import hooks as _hooks
    from knoxidx.languages.protocol import Language

    _CHECKED: Language = _hooks

_HOOKS = "knoxidx.languages.js.hooks"
_ECMASCRIPT = "knoxidx/languages/js/ecmascript"
_TYPESCRIPT = "knoxidx/languages/js/typescript"  # TSX builds on it
_TEST_DIRS = ("__tests__", "__mocks__", "spec", "specs")
_TEST_FILES = (r"[^/]*\.(test|spec)\.[cm]?[jt]sx?",)
_KEYWORDS = frozenset({
    "class", "return", "if", "else", "for", "while", "in", "of", "true", "false", "null",
    "undefined", "import", "from", "as", "try", "catch", "finally", "throw", "async", "await",
    "yield", "new", "this", "extends", "implements", "var", "let", "const", "function",
    "export", "default", "typeof", "instanceof", "break", "continue", "switch", "case", "do",
    "with", "enum", "interface", "abstract", "override", "public", "private", "protected",
    "static", "super",
})
_MANIFESTS = ("package.json",)
_CONFIGS = ("tsconfig.json", "jsconfig.json")
_DIRECTORY_NAMED = ("index",)  # what an import of the directory loads
_SOURCE_DIRS = ("src", "lib", "source", "sources")  # `packages/ui/src/index.ts` is ui's
# Over the seven benchmark corpora and five histories the JavaScript written (or generated) to
# be read averages at most 99 characters a line, the minified at least 206 (select2's locale
# files; jquery.min.js 43,767): TypeScript is compiled to JavaScript, never minified itself.
MINIFIED_LINE_CHARS = 150

LANGUAGES = (
    LanguageSpec(
        name="typescript", family="js", extensions=(".ts", ".mts", ".cts"),
        grammar_module="tree_sitter_typescript", grammar_function="language_typescript",
        hooks=_HOOKS, queries=(_ECMASCRIPT, _TYPESCRIPT),
        aliases=("js",), test_dirs=_TEST_DIRS, test_files=_TEST_FILES, keywords=_KEYWORDS,
        manifests=_MANIFESTS, configs=_CONFIGS,
        directory_named_files=_DIRECTORY_NAMED, source_dirs=_SOURCE_DIRS,
        lower_case_functions=True,
    ),
    LanguageSpec(
        name="tsx", family="js", extensions=(".tsx",),
        grammar_module="tree_sitter_typescript", grammar_function="language_tsx",
        hooks=_HOOKS, queries=(_ECMASCRIPT, _TYPESCRIPT, "knoxidx/languages/js/tsx"),
        aliases=("typescript", "js"), test_dirs=_TEST_DIRS, test_files=_TEST_FILES,
        keywords=_KEYWORDS, manifests=_MANIFESTS, configs=_CONFIGS,
        directory_named_files=_DIRECTORY_NAMED, source_dirs=_SOURCE_DIRS,
        lower_case_functions=True,
    ),
    LanguageSpec(
        name="javascript", family="js", extensions=(".js", ".jsx", ".mjs", ".cjs"),
        grammar_module="tree_sitter_javascript", grammar_function="language",
        hooks=_HOOKS, queries=(_ECMASCRIPT, "knoxidx/languages/js/javascript"),
        aliases=("js",), test_dirs=_TEST_DIRS, test_files=_TEST_FILES, keywords=_KEYWORDS,
        manifests=_MANIFESTS, configs=_CONFIGS,
        directory_named_files=_DIRECTORY_NAMED, source_dirs=_SOURCE_DIRS,
        lower_case_functions=True,
        minified_line_chars=MINIFIED_LINE_CHARS,
    ),
)
