"""The module layer of the graph: a node per module or package, Contains module -> file, and
DependsOn between modules aggregated from the Imports edges."""

from __future__ import annotations

from collections import defaultdict

from knoxidx.core.model import NodeKind, file_node_id, module_node_id
from knoxidx.graph.protocol import GraphStore


def module_nodes(store: GraphStore) -> tuple[list[tuple], list[tuple[int, int]]]:
    """The module layer's nodes (one per module/package key) and its Contains module -> file
    edges, from module membership."""
    modules: dict[tuple[str, str], str] = {}
    contains: list[tuple[int, int]] = []
    for path, language, family, key in store.primary_modules():
        modules.setdefault((family, key), language)
        contains.append((module_node_id(family, key), file_node_id(path)))
    rows = [
        (module_node_id(family, key), NodeKind.MODULE.value, _module_name(family, key), key,
         None, None, None, None, None, None, language, family, "", "", 1, "", 0, None, None, None,
         None, None, None, None)
        for (family, key), language in modules.items()
    ]
    return rows, contains


def rebuild_module_layer(store: GraphStore) -> None:
    """The module layer anew: its nodes, Contains module -> file, and DependsOn (the store's
    SQL aggregates it from the Imports edges)."""
    store.rebuild_module_layer(*module_nodes(store))


def first_module_layer(store: GraphStore, contains: list[tuple[int, int]],
                        first_imports: list[tuple[int, int]]) -> None:
    """The rest of a first build's module layer, its module nodes written (see
    ``write_first_module_nodes``): Contains, and DependsOn aggregated here from every Imports
    edge (source, target) rather than by the store."""
    # DependsOn: the module of an importing file -> the module of the file it imports (or
    # the external module itself), never to itself
    modules_of: dict[int, list[int]] = defaultdict(list)
    for module, file in contains:
        modules_of[file].append(module)
    depends: set[tuple[int, int]] = set()
    for source, target in first_imports:
        for from_module in modules_of.get(source, ()):
            for to_module in modules_of.get(target) or (target,):
                if to_module != from_module:
                    depends.add((from_module, to_module))
    store.write_first_module_layer(contains, sorted(depends),
                                   {target for _, target in first_imports})


def _module_name(family: str, key: str) -> str:
    for sep in ("::", "/", "."):
        if sep in key:
            return key.rsplit(sep, 1)[-1]
    return key
