"""Incremental updates: after any sequence of edits the graph equals a clean rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knoxidx.verify import verify_index
from tests.helpers import Backend

N_FILES = 6


def python_module(i: int, variant: int) -> str:
    j = (i + 1) % N_FILES
    if variant == 0:
        return f"from pkg.m{j} import f{j}\n\ndef f{i}():\n    return f{j}()\n"
    if variant == 1:
        return (f"import pkg.m{j} as other\n\n\n# moved down\ndef f{i}():\n    return other.f{j}()\n\n"
                f"class K{i}:\n    def go(self):\n        return f{i}()\n")
    if variant == 2:
        return f"def g{i}(x):\n    return x.go()\n\nclass K{i}:\n    def go(self):\n        return g{i}(self)\n"
    return (f"from pkg.m{j} import *\n\nclass K{i}(K{j}):\n    def go(self):\n"
            f"        return super().go()\n\ndef f{i}():\n    return K{i}().go()\n")


def ts_module(i: int, variant: int) -> str:
    j = (i + 1) % N_FILES
    if variant % 2 == 0:
        return f"import {{ t{j} }} from './t{j}';\nexport function t{i}() {{ return t{j}(); }}\n"
    return (f"import * as o from './t{j}';\nexport class S{i} {{ run() {{ return o.t{j}(); }} }}\n"
            f"export function t{i}() {{ return new S{i}().run(); }}\n")


operation = st.tuples(
    st.sampled_from(["write", "write", "delete", "rename"]),
    st.integers(0, N_FILES - 1),
    st.integers(0, 3),
    st.sampled_from(["py", "ts"]),
)


def apply(root: Path, op: str, i: int, variant: int, lang: str) -> None:
    if lang == "py":
        path = root / "pkg" / f"m{i}.py"
        content = python_module(i, variant)
    else:
        path = root / "web" / f"t{i}.ts"
        content = ts_module(i, variant)
    if op == "write":
        path.write_text(content)
    elif op == "delete":
        path.unlink(missing_ok=True)
    elif path.exists():  # rename to another slot (overwriting it)
        target = path.with_name(path.name.replace(str(i), str((i + 2) % N_FILES), 1))
        path.rename(target)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=1, max_size=6))
def test_incremental_equals_rebuild(tmp_path_factory, ops) -> None:
    check_incremental_equals_rebuild(tmp_path_factory.mktemp("inc"), Backend(None), ops)


# The same property on the PostgreSQL store, whose result verify_index compares with a clean
# SQLite build: fewer examples, each update costing a few round trips more.
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=1, max_size=6))
def test_incremental_equals_rebuild_postgres(tmp_path_factory, pg_url, ops) -> None:
    check_incremental_equals_rebuild(tmp_path_factory.mktemp("inc"), Backend(pg_url), ops)


def check_incremental_equals_rebuild(root: Path, backend: Backend, ops: list) -> None:
    (root / "pkg").mkdir()
    (root / "web").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    for i in range(N_FILES):
        (root / "pkg" / f"m{i}.py").write_text(python_module(i, 0))
        (root / "web" / f"t{i}.ts").write_text(ts_module(i, 0))
    backend.build(root)
    for op, i, variant, lang in ops:
        apply(root, op, i, variant, lang)
        backend.build(root)
    with backend.open(root) as idx:
        result = verify_index(idx)
    assert result["integrity"] == "ok"
    assert result["equal"], result
    shutil.rmtree(root)


def test_body_edit_reresolves_only_that_file(repo, backend) -> None:
    files = {f"pkg/m{i}.py": python_module(i, 0) for i in range(N_FILES)}
    files["pkg/__init__.py"] = ""
    root = repo(files)
    backend.build(root)
    path = root / "pkg" / "m2.py"
    path.write_text("\n\n" + path.read_text())  # lines move, names do not
    report = backend.build(root)
    assert report.changed == 1 and report.resolved == 1
    with backend.open(root) as idx:
        assert [c["site"]["line"] for c in idx.callers("f3")["callers"]] == [6]


def test_interface_edit_reresolves_importers(repo, backend) -> None:
    files = {f"pkg/m{i}.py": python_module(i, 0) for i in range(N_FILES)}
    files["pkg/__init__.py"] = ""
    root = repo(files)
    backend.build(root)
    (root / "pkg" / "m3.py").write_text(python_module(3, 2))  # f3 disappears
    report = backend.build(root)
    assert report.resolved >= 2  # m3 itself and m2, which imported f3
    with backend.open(root) as idx:
        assert idx.symbols("f3") == []
        assert idx.callees("pkg.m2.f2")["callees"] == []


def test_touch_without_change_reads_but_does_not_reindex(repo, backend) -> None:
    import os

    root = repo({"a.py": "def f():\n    pass\n"})
    backend.build(root)
    os.utime(root / "a.py", ns=(1, 1))
    report = backend.build(root)
    assert report.read == 1 and report.changed == 0 and report.resolved == 0
    report = backend.build(root)
    assert report.read == 0
