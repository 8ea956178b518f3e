"""What an update's changes invalidate: the lookup keys whose answers a file's new interface
changes (so that the files which consulted them resolve again), and every file's module keys
and qualified names anew when the layout changed."""

from __future__ import annotations

from collections.abc import Iterable

from knoxidx.core.facts import load_facts
from knoxidx.core.file_state import FileState
from knoxidx.graph.layout import Layout
from knoxidx.graph.protocol import GraphStore
from knoxidx.languages.registry import BY_NAME
from knoxidx.parse.reader import (
    DefinitionName,
    ReadResult,
    added_definitions,
    definition_names,
    node_rows,
)


def requalify(store: GraphStore, layout: Layout, fresh: set[str]) -> bool:
    """The layout changed (a package gained or lost its ``__init__.py``, ``go.mod`` renamed the
    module): give every file not read this update the module keys and qualified names the new
    layout gives it, from its stored facts (nothing to parse). Without this, removing an
    ``__init__.py`` left ``pkg.m.f`` where a clean build says ``m.f``. True if any changed."""
    ids = store.file_ids()
    changed = False
    for path, blob in store.all_fact_blobs():
        if path in fresh:
            continue
        facts = load_facts(blob)
        spec = BY_NAME[facts.language]
        rules = spec.plugin.RULES
        keys = list(rules.module_keys(path, facts, layout))
        modules = [(spec.family, k) for k in keys]
        file_id = ids[path]
        if store.module_keys_of(file_id) == modules:
            continue
        changed = True
        store.replace_modules(file_id, modules)
        store.replace_nodes(file_id, node_rows(facts, rules.qualified_prefix(path, keys),
                                               rules.module_joiner, rules.separator))
    return changed


def interface_keys(
    store: GraphStore, result: ReadResult, old_modules: list[tuple[str, str]],
    modules: list[tuple[str, str]],
) -> set[str]:
    """Lookup keys to invalidate when an indexed file's interface changed: when it only gained
    definitions, the gained names (the files that looked them up and missed); else everything
    other files could have consulted in it."""
    old = store.load_facts(result.path)
    if old is not None and old_modules == modules and result.blob is not None:
        added = added_definitions(old, load_facts(result.blob))
        if added is not None:
            keys = {"name:" + d.name for d in added}
            keys.update("owner:" + d.owner for d in added if d.owner)
            return keys
    return keys_for(result.path, definition_names(old), result.names, old_modules, modules)


def old_names(store: GraphStore, path: str, state: FileState) -> frozenset[DefinitionName]:
    return definition_names(store.load_facts(path)) if state.status == "ok" else frozenset()


def keys_for(
    path: str,
    old_names: frozenset[DefinitionName],
    new_names: frozenset[DefinitionName],
    old_modules: Iterable[tuple[str, str]],
    new_modules: Iterable[tuple[str, str]],
) -> set[str]:
    """Lookup keys whose answers change when ``path`` changes its interface."""
    keys = {"file:" + path}
    changed = old_names ^ new_names
    keys.update("name:" + name for name, *_ in changed)
    keys.update("owner:" + owner for *_, owner in changed if owner)
    keys.update(f"mod:{family}:{key}" for family, key in (*old_modules, *new_modules))
    return keys
