"""The seam between the resolver and the languages' rules: symbols are tested by their named
tags, and the resolver is what the rules' protocol says they may read."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from knoxidx.core import symbols
from knoxidx.graph.resolve import Resolver
from knoxidx.languages.protocol import ResolverView

PACKAGE = Path(symbols.__file__).resolve().parent.parent
# a symbol's tag tested or built by its letter: `s[0] == "x"`, `tag != "m"`, `("d", path, i)`
BARE_TAG = re.compile(r"""(\[0\]\s*[!=]=\s*|\btag\s*[!=]=\s*|\(\s*)["'][dimxf]["']\s*[,)]?""")


def bare_tags(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if BARE_TAG.search(line) and not line.lstrip().startswith("#")]


def test_the_check_finds_a_bare_tag() -> None:
    assert bare_tags('if s[0] == "x":\n    return [("d", path, 0)]\n') == [
        'if s[0] == "x":', 'return [("d", path, 0)]']
    assert bare_tags("if s[0] == EXTERNAL_TAG:\n    t = (b\"f\", b\"F\")\n") == []


def test_the_resolver_and_the_rules_name_the_tags() -> None:
    sources = [*sorted((PACKAGE / "graph").glob("*.py")),
               *sorted((PACKAGE / "languages").rglob("*.py"))]
    found = {str(path.relative_to(PACKAGE)): bare
             for path in sources if (bare := bare_tags(path.read_text(encoding="utf-8")))}
    assert not found, f"symbol tags by their letter (use knoxidx.core.symbols' names): {found}"


def test_the_tags_are_the_symbol_type_s() -> None:
    tags = {symbols.DEFINITION_TAG, symbols.INSTANCE_TAG, symbols.MODULE_TAG,
            symbols.EXTERNAL_TAG, symbols.FILE_TAG}
    assert len(tags) == 5
    assert tags == set(symbols.SymbolTag.__args__)  # type: ignore[attr-defined]


def test_the_resolver_is_what_the_rules_read() -> None:
    resolver = Resolver(SimpleNamespace(layout=None))  # type: ignore[arg-type]
    assert isinstance(resolver, ResolverView), [
        name for name in ResolverView.__protocol_attrs__  # type: ignore[attr-defined]
        if not hasattr(resolver, name)]
