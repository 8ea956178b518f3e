"""Incremental updates: after any sequence of edits the graph equals a clean rebuild."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knoxidx.graph.store import SQLiteStore
from knoxidx.update.verify import verify_index
from tests.helpers import Backend, assert_edges_out_by_runs, assert_row_runs

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
    if variant == 3:
        return (f"from pkg.m{j} import *\n\nclass K{i}(K{j}):\n    def go(self):\n"
                f"        return super().go()\n\ndef f{i}():\n    return K{i}().go()\n")
    if variant == 4:  # variant 0 plus a definition: a pure addition
        return python_module(i, 0) + f"\n\ndef h{i}():\n    return {i}\n"
    # looks up names its neighbour defines only as variant 4 (or 3): misses until then
    return (f"import pkg.m{j} as other\nfrom pkg.m{j} import *\nfrom pkg.m{j} import h{j}\n\n"
            f"def f{i}():\n    return h{j}() + other.h{j}() + K{j}().go()\n")


def ts_module(i: int, variant: int) -> str:
    j = (i + 1) % N_FILES
    variant %= 4
    if variant == 2:  # variant 0 plus an export: a pure addition
        return ts_module(i, 0) + f"export function u{i}() {{ return {i}; }}\n"
    if variant == 3:  # imports a name its neighbour exports only as variant 2
        return (f"import {{ t{j}, u{j} }} from './t{j}';\n"
                f"export function t{i}() {{ return u{j}() + t{j}(); }}\n")
    if variant == 0:
        return f"import {{ t{j} }} from './t{j}';\nexport function t{i}() {{ return t{j}(); }}\n"
    return (f"import * as o from './t{j}';\nexport class S{i} {{ run() {{ return o.t{j}(); }} }}\n"
            f"export function t{i}() {{ return new S{i}().run(); }}\n")


operation = st.tuples(
    st.sampled_from(["write", "write", "delete", "rename"]),
    st.integers(0, N_FILES - 1),
    st.integers(0, 5),
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
@pytest.mark.heavy
def test_incremental_equals_rebuild(tmp_path_factory, ops) -> None:
    check_incremental_equals_rebuild(tmp_path_factory.mktemp("inc"), Backend(None), ops)


# The same property on the PostgreSQL store, whose result verify_index compares with a clean
# SQLite build: fewer examples, each update costing a few round trips more.
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=1, max_size=6))
@pytest.mark.heavy
def test_incremental_equals_rebuild_postgres(tmp_path_factory, pg_url, ops) -> None:
    check_incremental_equals_rebuild(tmp_path_factory.mktemp("inc"), Backend(pg_url), ops)


def seed(root: Path) -> None:
    """The starting repository of the property tests: a Python package and a TS folder."""
    (root / "pkg").mkdir()
    (root / "web").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    for i in range(N_FILES):
        (root / "pkg" / f"m{i}.py").write_text(python_module(i, 0))
        (root / "web" / f"t{i}.ts").write_text(ts_module(i, 0))


def check_incremental_equals_rebuild(root: Path, backend: Backend, ops: list) -> None:
    seed(root)
    backend.build(root)
    for op, i, variant, lang in ops:
        apply(root, op, i, variant, lang)
        backend.build(root)
    with backend.open(root) as idx:
        result = verify_index(idx)
        if isinstance(idx.store, SQLiteStore):
            assert_row_runs(idx.store.conn)
            assert_edges_out_by_runs(idx.store)
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


def test_a_same_size_rewrite_within_one_timestamp_tick_is_noticed(repo, backend) -> None:
    import os
    import time

    root = repo({"a.py": "def f():\n    pass\n"})
    path = root / "a.py"
    tick = time.time_ns() + 10**9  # one timestamp for both writes, as one tick would give
    os.utime(path, ns=(tick, tick))
    backend.build(root)
    path.write_text("def g():\n    pass\n")  # the same size
    os.utime(path, ns=(tick, tick))
    report = backend.build(root)
    assert report.changed == 1
    with backend.open(root) as idx:
        assert idx.symbols("g") and not idx.symbols("f")
        assert verify_index(idx)["equal"]


def test_touch_without_change_reads_but_does_not_reindex(repo, backend) -> None:
    import os

    root = repo({"a.py": "def f():\n    pass\n"})
    os.utime(root / "a.py", ns=(10**18, 10**18))  # long before the build: not racy
    backend.build(root)
    os.utime(root / "a.py", ns=(1, 1))
    report = backend.build(root)
    assert report.read == 1 and report.changed == 0 and report.resolved == 0
    report = backend.build(root)
    assert report.read == 0


def test_import_only_edits_keep_module_dependencies_exact(repo, backend) -> None:
    """The module layer (DependsOn, external modules) is rebuilt only when a batch changes
    module membership or some file's Imports: an edit that only adds or drops an import must
    still reach it."""
    files = {f"pkg/m{i}.py": python_module(i, 2) for i in range(N_FILES)}
    files["pkg/__init__.py"] = ""
    root = repo(files)
    backend.build(root)
    m1 = root / "pkg" / "m1.py"
    body = m1.read_text()
    for header in ("import pkg.m4\nimport json\n", "import json\n", ""):
        m1.write_text(header + body)
        backend.build(root)
        with backend.open(root) as idx:
            result = verify_index(idx)
            assert result["equal"], (header, result)
            depends = idx.q.counts()["edges"].get("DependsOn", 0)
        assert (depends > 0) == (header != "")


def test_appending_a_function_reresolves_only_the_files_that_missed_it(repo, backend) -> None:
    """A file that only gains definitions invalidates the gained names, not every importer:
    importers that never looked the new name up keep their resolution; one that missed it
    (an import, a module attribute, a wildcard, a class member) is re-resolved and now
    resolves it, exactly as a clean rebuild would."""
    files = {f"pkg/m{i}.py": python_module(i, 0) for i in range(N_FILES)}
    files["pkg/__init__.py"] = ""
    files["pkg/base.py"] = "class K:\n    def go(self):\n        return 1\n\ndef util():\n    return 2\n"
    files["pkg/use_attr.py"] = "import pkg.base as b\n\ndef a():\n    return b.later()\n"
    files["pkg/use_star.py"] = "from pkg.base import *\n\ndef s():\n    return later()\n"
    files["pkg/use_member.py"] = ("from pkg.base import K\n\ndef m():\n    return K().extra()\n")
    files["pkg/use_util.py"] = "from pkg.base import util\n\ndef u():\n    return util()\n"
    root = repo(files)
    backend.build(root)
    base = root / "pkg" / "base.py"
    base.write_text(base.read_text() + "\ndef unused_helper():\n    return 3\n")
    report = backend.build(root)
    assert report.resolved == 1  # nobody looked `unused_helper` up
    base.write_text(base.read_text().replace(
        "        return 1\n", "        return 1\n\n    def extra(self):\n        return 4\n")
        + "\ndef later():\n    return 5\n")
    report = backend.build(root)
    assert report.resolved == 4  # base itself, use_attr, use_star, use_member; not use_util
    with backend.open(root) as idx:
        callers = {c["qualified_name"] for c in idx.callers("pkg.base.later")["callers"]}
        assert callers == {"pkg.use_attr.a", "pkg.use_star.s"}
        assert [c["name"] for c in idx.callers("K.extra")["callers"]] == ["m"]
        assert verify_index(idx)["equal"]


def test_a_new_definition_that_shadows_an_import_is_not_a_pure_addition(repo, backend) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/other.py": "def helper():\n    return 1\n",
        "pkg/mod.py": "from pkg.other import helper\n\ndef f():\n    return 0\n",
        "pkg/user.py": "from pkg.mod import helper\n\ndef g():\n    return helper()\n",
    }
    root = repo(files)
    backend.build(root)
    mod = root / "pkg" / "mod.py"
    mod.write_text(mod.read_text() + "\ndef helper():\n    return 2\n")  # now the local one
    backend.build(root)
    with backend.open(root) as idx:
        assert [c["name"] for c in idx.callers("pkg.mod.helper")["callers"]] == ["g"]
        assert verify_index(idx)["equal"]


def test_a_layout_change_renames_what_unchanged_files_define(repo, backend) -> None:
    """Removing ``pkg/__init__.py`` makes ``pkg.m1.f1`` into ``m1.f1`` in a clean build; the
    files themselves did not change, so only the new layout can tell (their qualified names
    and module keys were left as they were)."""
    files = {f"pkg/m{i}.py": python_module(i, 0) for i in range(N_FILES)}
    files["pkg/__init__.py"] = ""
    root = repo(files)
    backend.build(root)
    (root / "pkg" / "__init__.py").unlink()
    backend.build(root)
    with backend.open(root) as idx:
        assert [s["qualified_name"] for s in idx.symbols("f1")] == ["m1.f1"]
        assert verify_index(idx)["equal"]
    (root / "pkg" / "__init__.py").write_text("")
    backend.build(root)
    with backend.open(root) as idx:
        assert [s["qualified_name"] for s in idx.symbols("f1")] == ["pkg.m1.f1"]
        assert verify_index(idx)["equal"]


def test_go_package_scope_follows_definitions_added_and_removed(repo, backend) -> None:
    """A Go package's scope spans every file of its directory: a name another file of the
    package (or a qualified `pkg.Name` from another package) looked up and missed resolves
    once some file of the package defines it, and stops resolving when it is removed."""
    files = {
        "go.mod": "module example.com/app\n",
        # a value, not a call: no unique-name guess records the miss on its behalf
        "lib/a.go": "package lib\n\nfunc A() func() int { return Later }\n",
        "lib/b.go": "package lib\n\nfunc B() int { return 2 }\n",
        "lib/c.go": "package lib\n\nfunc C() int { return B() }\n",
        "main/main.go": ('package main\n\nimport "example.com/app/lib"\n\n'
                         "func run(f func() int) {}\n\nfunc main() { run(lib.Later); lib.C() }\n"),
    }
    root = repo(files)
    backend.build(root)
    b = root / "lib" / "b.go"
    b.write_text(b.read_text() + "\nfunc Later() int { return 3 }\n")
    backend.build(root)
    with backend.open(root) as idx:
        assert {r["name"] for r in idx.refs("Later")["incoming"]["ReferencedBy"]} == {"A", "main"}
        assert verify_index(idx)["equal"]
    b.write_text("package lib\n\nfunc B() int { return 2 }\n")
    backend.build(root)
    with backend.open(root) as idx:
        assert idx.callers("B")["callers"] and not idx.symbols("Later")
        assert verify_index(idx)["equal"]


def test_java_names_left_to_the_package_and_wildcards_follow_classes_added_and_removed(
        repo, backend) -> None:
    """A bare name that nothing in the index defines (a Java file's last resort: its package,
    then its wildcard imports) resolves once a class of that name is added to the package or
    to a package imported with `*`, and stops resolving when it is removed."""
    files = {
        "src/com/acme/app/Main.java": (
            "package com.acme.app;\n\nimport com.acme.lib.*;\n\n"
            "class Main {\n    void run() {\n        Later.go();\n        Tool.make();\n    }\n}\n"),
        "src/com/acme/lib/Base.java": "package com.acme.lib;\n\npublic class Base {}\n",
    }
    root = repo(files)
    backend.build(root)
    with backend.open(root) as idx:
        assert not idx.symbols("go") and not idx.symbols("make")
    added = {
        root / "src/com/acme/app/Later.java": (
            "package com.acme.app;\n\npublic class Later {\n    public static void go() {}\n}\n"),
        root / "src/com/acme/lib/Tool.java": (
            "package com.acme.lib;\n\npublic class Tool {\n    public static void make() {}\n}\n"),
    }
    for path, text in added.items():
        path.write_text(text)
    backend.build(root)
    with backend.open(root) as idx:
        for method in ("go", "make"):
            assert [c["name"] for c in idx.callers(method)["callers"]] == ["run"], method
        assert verify_index(idx)["equal"]
    for path in added:
        path.unlink()
    backend.build(root)
    with backend.open(root) as idx:
        assert not idx.symbols("go") and not idx.symbols("make")
        assert verify_index(idx)["equal"]


def test_java_static_wildcard_import_follows_a_constant_added_to_its_class(repo, backend) -> None:
    """`import static a.Util.*` and a bare `LIMIT` that Util does not declare yet: when Util
    gains it (a pure addition: the file's modules stay the same, so only the `name:` keys of
    what it gained are invalidated) the read resolves to it, and stops when it is removed."""
    util = ("package com.acme.lib;\n\npublic class Util {\n"
            "    public static int one() { return 1; }\nMORE}\n")
    files = {
        "src/com/acme/app/Main.java": (
            "package com.acme.app;\n\nimport static com.acme.lib.Util.*;\n\n"
            "class Main {\n    int run() { return one() + LIMIT; }\n}\n"),
        "src/com/acme/lib/Util.java": util.replace("MORE", ""),
    }
    root = repo(files)
    backend.build(root)
    path = root / "src/com/acme/lib/Util.java"
    path.write_text(util.replace("MORE", "    public static final int LIMIT = 2;\n"))
    backend.build(root)
    with backend.open(root) as idx:
        assert [r["name"] for r in idx.refs("LIMIT")["incoming"]["UsedBy"]] == ["run"]
        assert verify_index(idx)["equal"]
    path.write_text(util.replace("MORE", ""))
    backend.build(root)
    with backend.open(root) as idx:
        assert not idx.symbols("LIMIT")
        assert [c["name"] for c in idx.callers("one")["callers"]] == ["run"]
        assert verify_index(idx)["equal"]


def test_verify_compares_why_calls_stay_unresolved(repo) -> None:
    # refs' possible callers, goto's reasons and stats read these rows: a stale reason is a
    # difference from a rebuild as much as a stale edge
    root = repo({"pkg/__init__.py": "", "pkg/m.py": "def f():\n    return nowhere()\n"})
    Backend(None).build(root)
    with Backend(None).open(root) as idx:
        assert verify_index(idx)["equal"]
        with idx.store.transaction():
            idx.store.conn.execute("UPDATE unresolved SET reason = 'external'"
                                   " WHERE name = 'nowhere'")
        result = verify_index(idx)
    assert not result["equal"]
    assert [("pkg/m.py", 2, "nowhere", "unknown")] == [
        (row[0], row[1], row[3], row[4]) for row in map(ast.literal_eval, result["missing_unresolved"])]
    assert "'external'" in result["extra_unresolved"][0]
