"""What a language must declare, and that a language added as one folder and one registry line
is what every other module reads (none keeps a copy of the list)."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tree_sitter import Query

from knoxidx.core.facts import RefKind
from knoxidx.languages import registry
from knoxidx.languages.protocol import (
    BindsElements,
    BindsNames,
    CountsArguments,
    Language,
    ResolutionRules,
    TypesProperties,
)
from knoxidx.languages.spec import LanguageSpec

PACKAGE = Path(registry.__file__).resolve().parent.parent


@pytest.mark.parametrize("spec", registry.LANGUAGES, ids=lambda s: s.name)
def test_every_language_declares_what_the_rest_of_knoxidx_asks(spec: LanguageSpec) -> None:
    assert isinstance(spec, LanguageSpec)
    assert spec.extensions and all(e.startswith(".") and e == e.lower() for e in spec.extensions)
    assert registry.language_for_path("a/b" + spec.extensions[0]) is spec
    # its name, and each alias, is a --language value that covers it
    for alias in (spec.name, *spec.aliases):
        assert spec.name in registry.LANGUAGE_ALIASES[alias]
    assert spec.keywords and all(k == k.lower() for k in spec.keywords)
    assert spec.test_dirs or spec.test_files
    for pattern in spec.test_files:
        assert re.compile(pattern).pattern == pattern
    # its folder holds its description
    folder = importlib.import_module(f"knoxidx.languages.{spec.family}")
    assert spec in folder.LANGUAGES


@pytest.mark.parametrize("spec", registry.LANGUAGES, ids=lambda s: s.name)
def test_every_language_has_queries_that_compile_against_its_grammar(spec: LanguageSpec) -> None:
    folders = registry.query_folders(spec.name)
    assert folders and all((f / "tags.scm").is_file() for f in folders)
    query = Query(registry.ts_language(spec.name), registry.query_source(spec.name))
    captures = {query.capture_name(i) for i in range(query.capture_count)}
    assert any(c.startswith("definition.") for c in captures)
    assert any(c.startswith("reference.") for c in captures)
    hooks = spec.plugin
    # what a query captures, the hooks must be able to read
    assert ("binding.names" not in captures) or isinstance(hooks, BindsNames)
    assert ("binding.object" not in captures) or isinstance(hooks, TypesProperties)
    assert ("arity" not in captures) or isinstance(hooks, CountsArguments)
    assert ("binding.element" not in captures) or isinstance(hooks, BindsElements)


@pytest.mark.parametrize("family", registry.FAMILIES)
def test_every_family_implements_the_declared_hooks(family: str) -> None:
    hooks = registry.family_plugin(family)
    assert isinstance(hooks, Language), [
        name for name in Language.__protocol_attrs__ if not hasattr(hooks, name)]  # type: ignore[attr-defined]
    assert hooks.FAMILY == family
    assert isinstance(hooks.RULES, ResolutionRules), [
        name for name in ResolutionRules.__protocol_attrs__  # type: ignore[attr-defined]
        if not hasattr(hooks.RULES, name)]
    # extraction drops a call a local shadows, the resolver skips the local's binding for a
    # call it does not: one rule, said twice, must agree
    assert hooks.RULES.locals_callable == (RefKind.CALL in hooks.LOCAL_SHADOWS)


def test_no_module_outside_the_languages_keeps_a_list_of_them() -> None:
    """A tuple, list, set or dict of three or more language names or file extensions outside
    the languages' folders is a copy that the next language would have to be added to."""
    names = {spec.name for spec in registry.LANGUAGES} | set(registry.LANGUAGE_ALIASES)
    extensions = set(registry.BY_EXTENSION)
    languages_folder = PACKAGE / "languages"
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if languages_folder in path.parents or path.resolve() == Path(registry.__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                items = node.elts
            elif isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None]
            else:
                continue
            strings = {i.value for i in items
                       if isinstance(i, ast.Constant) and isinstance(i.value, str)}
            if len(strings & names) >= 3 or len(strings & extensions) >= 3:
                copies.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert copies == []


# A toy language, declared as a folder would declare it, borrowing Python's grammar, queries
# and hooks: what matters is that each module below sees it without being told.
_TOY = textwrap.dedent('''
    import re, sys, types
    from importlib.util import find_spec, module_from_spec

    from knoxidx.languages.spec import LanguageSpec

    python = __import__("knoxidx.languages.python", fromlist=["LANGUAGES"]).LANGUAGES[0]
    toy = types.ModuleType("knoxidx.languages.toy")
    toy.LANGUAGES = (LanguageSpec(
        name="toy", family="toy", extensions=(".toy",), grammar_module=python.grammar_module,
        grammar_function=python.grammar_function, hooks=python.hooks, queries=python.queries,
        aliases=("toys",), test_dirs=("toy_checks",), test_files=(r"[^/]*_check\\.toy",),
        keywords=frozenset({"toyword"}), manifests=("toy.json",), configs=("toy.lock",)),)
    sys.modules[toy.__name__] = toy

    # the registry with one line changed: the family added to FAMILIES
    spec = find_spec(REGISTRY)
    source = spec.loader.get_source(REGISTRY)
    source, added = re.subn(r'^(FAMILIES: .*= \\(.*)\\)$', r'\\1, "toy")', source, flags=re.M)
    assert added == 1, "no FAMILIES line in the registry"
    registry = module_from_spec(spec)
    sys.modules[REGISTRY] = registry
    exec(compile(source, spec.origin, "exec"), registry.__dict__)

    from knoxidx.api.schemas import LANGUAGES as api_languages
    from knoxidx.graph.layout import CONFIG_NAMES
    from knoxidx.parse.discovery import MANIFESTS
    from knoxidx.parse.extract import extract
    from knoxidx.retrieval.text_views import CODE_KEYWORDS
    from knoxidx.retrieval.priors import is_test_path
    from knoxidx.retrieval.searcher import validate

    assert registry.language_for_path("src/a.toy").name == "toy"
    assert validate("q", 5, "hybrid", "toys", None)[1].languages == ("toy",)
    assert "toy" in api_languages and "toys" in api_languages
    assert is_test_path("src/toy_checks/a.toy") and is_test_path("src/a_check.toy")
    assert not is_test_path("src/a.toy")
    assert "toyword" in CODE_KEYWORDS
    assert "toy.json" in MANIFESTS and "toy.lock" in CONFIG_NAMES
    facts = extract("src/a.toy", b"def toy_function():\\n    return 1\\n", "toy")
    assert facts.language == "toy" and [d.name for d in facts.defs] == ["toy_function"]
    print("toy language seen everywhere")
''')


def test_a_language_added_as_a_folder_and_a_registry_line_is_seen_everywhere() -> None:
    script = f"REGISTRY = {registry.__name__!r}\n" + _TOY
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "toy language seen everywhere" in done.stdout


def test_the_languages_search_accepts_are_the_registrys() -> None:
    from knoxidx.api.schemas import LANGUAGES
    from knoxidx.retrieval.searcher import validate

    assert set(LANGUAGES) == set(registry.LANGUAGE_ALIASES)
    assert set(validate("q", 5, "hybrid", "js", None)[1].languages) == {
        "javascript", "typescript", "tsx"}
    assert validate("q", 5, "hybrid", "typescript", None)[1].languages == ("typescript", "tsx")


@pytest.mark.parametrize("path, is_test", [
    ("pkg/tests/test_models.py", True), ("pkg/conftest.py", True), ("pkg/models_test.py", True),
    ("net/http/server_test.go", True), ("net/http/testdata/a.go", True),
    ("src/lib_tests.rs", True), ("src/main/FooTest.java", True), ("src/FooTests.java", True),
    ("web/__tests__/App.tsx", True), ("web/App.spec.ts", True), ("web/app.test.mjs", True),
    ("pkg/models.py", False), ("net/http/server.go", False), ("src/Latest.java", False),
    ("web/App.tsx", False), ("web/inspect.ts", False),
])
def test_test_code_is_recognised_by_the_languages_conventions(path: str, is_test: bool) -> None:
    from knoxidx.retrieval.priors import is_test_path

    assert is_test_path(path) is is_test
