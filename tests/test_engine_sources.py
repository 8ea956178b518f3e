"""The engine fingerprint covers the code that decides what the graph contains, wherever that
code lives: an edit to any of it must make an upgraded knoxidx read every file again."""

from __future__ import annotations

from pathlib import Path

import knoxidx.core.facts
import knoxidx.core.model
import knoxidx.graph.resolve
import knoxidx.parse.extract
import knoxidx.parse.name_paths
from knoxidx.parse.engine import engine_sources


def test_the_fingerprint_hashes_facts_extraction_model_and_resolution() -> None:
    package = Path(knoxidx.parse.engine.__file__).resolve().parent.parent
    hashed = set(engine_sources(package))
    for module in (knoxidx.core.facts, knoxidx.parse.extract, knoxidx.parse.name_paths,
                   knoxidx.core.model, knoxidx.graph.resolve):
        # the source beside a module compiled by mypyc too
        name = module.__name__.rpartition(".")[2]
        source = Path(module.__file__).resolve().parent / f"{name}.py"  # type: ignore[arg-type]
        assert source in hashed, source
    assert any(path.suffix == ".scm" for path in hashed)


def test_every_named_engine_source_exists_and_the_updates_module_layer_is_hashed() -> None:
    from knoxidx.parse.engine import ENGINE_PACKAGES

    package = Path(knoxidx.parse.engine.__file__).resolve().parent.parent
    assert all((package / name).exists() for name in ENGINE_PACKAGES)
    hashed = set(engine_sources(package))
    for module in ("graph_update.py", "invalidation.py", "module_layer.py"):
        assert package / "update" / module in hashed


def test_the_fingerprint_names_each_grammars_installed_version() -> None:
    """Read cheaply from the dist-info folders' names, and what importlib.metadata says."""
    from importlib.metadata import version

    from knoxidx.languages.registry import LANGUAGES
    from knoxidx.parse.engine import grammar_distributions

    installed = grammar_distributions()
    for name in {"tree_sitter", *(spec.grammar_module for spec in LANGUAGES)}:
        assert f"{name}-{version(name)}.dist-info" in installed
