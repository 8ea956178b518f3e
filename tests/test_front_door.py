"""``from knoxidx import Index`` and the error types, without slowing ``import knoxidx``."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import knoxidx

HEAVY = ("numpy", "onnxruntime", "tokenizers", "mcp", "starlette", "uvicorn", "networkx",
         "psycopg", "voyageai")


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys; {code}; print(__import__('json').dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    return set(json.loads(out))


def test_index_and_errors_come_from_the_package(tmp_path: Path) -> None:
    from knoxidx import Index, IndexNotFoundError, KnoxidxError
    from knoxidx.index import Index as defined

    assert Index is defined
    assert issubclass(IndexNotFoundError, KnoxidxError)
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    try:
        Index.open(tmp_path)
    except KnoxidxError as error:  # the front door's own type catches the library's errors
        assert isinstance(error, IndexNotFoundError)
    else:
        raise AssertionError("no index here, yet it opened")


def test_every_exported_name_resolves_and_every_error_is_a_knoxidx_error() -> None:
    for name in knoxidx.__all__:
        value = getattr(knoxidx, name)
        assert value.__name__ == name
        if name != "Index":
            assert issubclass(value, knoxidx.KnoxidxError), name
    assert set(knoxidx.__all__) <= set(dir(knoxidx))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        knoxidx.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("knoxidx.NoSuchThing resolved")


def test_every_error_type_of_the_library_is_exported() -> None:
    """An error type added anywhere in knoxidx is also importable from ``knoxidx``."""
    for module in pkgutil.walk_packages(knoxidx.__path__, "knoxidx."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    pending = [knoxidx.KnoxidxError]
    found: set[str] = set()
    while pending:
        cls = pending.pop()
        if cls.__module__.startswith("knoxidx."):
            found.add(cls.__name__)
        pending += cls.__subclasses__()
    assert found - set(knoxidx.__all__) == set()


def test_importing_the_package_loads_nothing_heavy() -> None:
    loaded = _loaded_after("import knoxidx")
    assert not {name.split(".")[0] for name in loaded} & set(HEAVY)
    assert not {name for name in loaded if name.startswith("knoxidx.")}


def test_the_front_door_does_not_slow_the_graph_commands() -> None:
    """The CLI's module, imported the way graph-only commands start, loads no heavy module
    because of the package's front door."""
    loaded = _loaded_after("import knoxidx.cli")
    assert not {name.split(".")[0] for name in loaded} & {"numpy", "onnxruntime", "mcp",
                                                           "starlette", "tokenizers"}


def test_a_graph_answer_masks_its_signatures_without_loading_discovery(tmp_path: Path) -> None:
    """``callers`` shows its symbol's signature through the never-send and secret masking;
    that must not import file discovery and the repository walk (~40 ms of every command)."""
    from knoxidx.index import Index

    (tmp_path / "m.py").write_text("def f(token: str = 'x') -> int:\n    return 1\n\n"
                                   "def g():\n    return f()\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(embed=False)
    loaded = _loaded_after(
        f"from knoxidx.index import Index; idx = Index.open({str(tmp_path)!r}); "
        "answer = idx.callers('m.f'); assert answer['callers'], answer")
    assert "knoxidx.retrieval.disclosure" in loaded  # the masking did run
    assert not {"knoxidx.parse.discovery", "knoxidx.parse.source"} & loaded
