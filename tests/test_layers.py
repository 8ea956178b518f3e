"""Layers only point down: no module of knoxidx imports a module of a layer above its own.

Every import counts, function-local ones included (a lazy import that reaches up is still an
upward dependency). The layers, bottom first, are in CONTRIBUTING.md ("Layers").
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "knoxidx"

# bottom first; a module belongs to the layer of its longest listed prefix
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("knoxidx.core",)),
    # one layer: extraction calls the languages' hooks, and the hooks use its definition helpers
    ("parse", ("knoxidx.parse", "knoxidx.languages", "knoxidx.languages",
               "knoxidx.languages.registry", "knoxidx.graph.layout")),
    ("graph", ("knoxidx.graph", "knoxidx.history")),
    ("retrieval", ("knoxidx.retrieval",)),
    ("answers", ("knoxidx.answers",)),
    ("update", ("knoxidx.update",)),
    ("index", ("knoxidx.index", "knoxidx.index_writing", "knoxidx.index_answers")),
    ("faces", ("knoxidx.cli", "knoxidx.api", "knoxidx.watch", "knoxidx.watch_presence",
               "knoxidx.watch_events", "knoxidx.watch_status", "knoxidx.watch_log",
               "knoxidx.watch_embedding")),
    ("front door", ("knoxidx",)),
]
RANK = {prefix: (rank, name) for rank, (name, prefixes) in enumerate(LAYERS) for prefix in prefixes}


def layer_of(module: str) -> tuple[int, str] | None:
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        found = RANK.get(".".join(parts[:cut]))
        if found is not None:
            return found
    return None


def module_files() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """The knoxidx modules ``name`` imports anywhere in its body, with their lines."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                # ``from knoxidx.graph import export`` imports the module knoxidx.graph.export
                submodule = f"{source}.{alias.name}"
                found.append((submodule if submodule in known else source, node.lineno))
    return [(module, line) for module, line in found
            if module == "knoxidx" or module.startswith("knoxidx.")]


def test_every_module_has_a_layer() -> None:
    modules = module_files()
    homeless = [name for name, path in modules.items()
                if layer_of(name) == layer_of("knoxidx") and name != "knoxidx"
                and path.read_text(encoding="utf-8").strip()]
    assert not homeless, f"modules in no layer (add them to LAYERS and CONTRIBUTING.md): {homeless}"


def test_no_module_imports_a_layer_above_its_own() -> None:
    modules = module_files()
    upward = []
    for name, path in modules.items():
        own = layer_of(name)
        assert own is not None
        for target, line in imported_modules(name, path, set(modules)):
            theirs = layer_of(target)
            assert theirs is not None
            if theirs[0] > own[0]:
                upward.append(f"{path.relative_to(PACKAGE_ROOT.parent)}:{line} imports {target}"
                              f" ({own[1]} -> {theirs[1]})")
    assert not upward, "imports that point up a layer:\n" + "\n".join(upward)


def test_the_check_sees_function_local_and_package_imports(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from knoxidx.graph import store\n    import knoxidx.cli\n")
    found = imported_modules("knoxidx.core.probe", module, {"knoxidx.graph.store"})
    assert found == [("knoxidx.graph.store", 2), ("knoxidx.cli", 3)]
    assert layer_of("knoxidx.graph.store") > layer_of("knoxidx.core.probe")  # type: ignore[operator]


def import_circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in graph[module]:
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(frozenset(component))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return circles


def test_no_import_circles() -> None:
    modules = module_files()
    graph = {name: {target for target, _ in imported_modules(name, path, set(modules))
                    if target in modules and target != name}
             for name, path in modules.items()}
    # none is left, and a new one is debt: split what both sides need
    new = [sorted(circle) for circle in import_circles(graph)]
    assert not new, f"modules that import each other (split what both need): {new}"


def test_the_circle_check_finds_a_ring() -> None:
    ring = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(ring) == [frozenset({"a", "b", "c"})]
