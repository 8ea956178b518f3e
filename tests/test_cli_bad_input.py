"""The CLI met with input a user or an agent really passes: paths written the shell's way,
files that cannot be written or read, windows past any history. One line and an exit code,
never a traceback, and nothing lost."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import CLI, build, write_tree
from tests.helpers import run_cli as run

FILES = {
    "app/__init__.py": "",
    "app/config.py": "def parse_config(path):\n    return load(path)\n\n\ndef load(path):\n"
                     "    return path\n",
    "main.py": "from app.config import parse_config\n\n\ndef main():\n"
               "    parse_config('a.toml')\n",
}


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", FILES)
    build(root)
    return root


def test_a_path_line_symbol_is_found_however_the_path_is_written(indexed: Path) -> None:
    """`./app/config.py:5` and the absolute path (what a shell completes, what an agent
    holds) name the same definition as `app/config.py:5`, as they already did for `deps`."""
    for spec in ("app/config.py:5", "./app/config.py:5", f"{indexed}/app/config.py:5"):
        code, out, err = run("callers", spec, str(indexed), "--json")
        assert code == 0, (spec, err)
        assert json.loads(out)["symbol"]["qualified_name"] == "app.config.load", spec
    code, _, err = run("callers", f"{indexed.parent}/elsewhere.py:1", str(indexed))
    assert code == 2 and "outside the indexed repository" in err and "Traceback" not in err


def test_export_into_a_missing_directory_is_one_line(indexed: Path, tmp_path: Path) -> None:
    code, _, err = run("export", str(indexed), "-o", str(tmp_path / "no" / "such" / "g.json"))
    assert code == 2 and err.startswith("error: cannot write") and "Traceback" not in err


def _no_bigger_than(size: int):
    def limit() -> None:  # a full disk, as the kernel reports it: EFBIG on the write
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE semantics")
def test_an_export_that_cannot_be_written_whole_leaves_the_old_file(indexed: Path,
                                                                    tmp_path: Path) -> None:
    target = tmp_path / "graph.json"
    target.write_text("the export of yesterday\n")
    done = subprocess.run([*CLI, "export", str(indexed), "-o", str(target)],
                          capture_output=True, text=True, timeout=120, check=False,
                          preexec_fn=_no_bigger_than(512), env=dict(os.environ))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: cannot write") and "Traceback" not in done.stderr
    assert target.read_text() == "the export of yesterday\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.json", "repo"]  # no partial
    code, _, _ = run("export", str(indexed), "-o", str(target))  # and without the limit
    assert code == 0 and json.loads(target.read_text())["nodes"]


def test_search_batch_of_a_file_that_is_not_text_is_one_line(indexed: Path,
                                                              tmp_path: Path) -> None:
    queries = tmp_path / "queries.bin"
    queries.write_bytes(b"parse config\n\xf0\x28\x8c\xbc binary\n")
    code, _, err = run("search", "--batch", str(queries), str(indexed), "--mode", "lexical")
    assert code == 2 and "is not UTF-8 text" in err and "Traceback" not in err


def test_a_hotspot_window_past_any_history_is_bad_input(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    build(root)
    code, _, err = run("hotspots", str(root), "--since", "99999999999d")
    assert code == 2 and "from 0 to 100000 days" in err and "Traceback" not in err
    code, out, _ = run("hotspots", str(root), "--since", "100000d", "--json")
    assert code == 0 and json.loads(out)["window"]["since_days"] == 100000


def test_serve_and_mcp_help_name_every_route_and_tool() -> None:
    """The help is written by hand (the schema table is too heavy to import for it): it
    must follow the table, which lists the HTTP routes and MCP tools there are."""
    from click.testing import CliRunner

    from knoxidx.api.schemas import OPERATIONS
    from knoxidx.cli import main

    serve_help = " ".join(CliRunner().invoke(main, ["serve", "--help"]).output.split())
    mcp_help = " ".join(CliRunner().invoke(main, ["mcp", "--help"]).output.split())
    for operation in OPERATIONS:
        assert f"{operation.path} " in serve_help or f"{operation.path}," in serve_help \
            or f"{operation.path} (" in serve_help, operation.path
        if operation.tool:
            assert operation.tool in mcp_help, operation.tool
    assert "index_status" in mcp_help and "/health" in serve_help


def test_an_absolute_path_filter_is_bad_input_not_an_empty_answer(indexed: Path) -> None:
    """Paths in the index are relative to the root: `--path /abs/repo/app` matched nothing
    and said so as an empty answer, which reads as "no such code"."""
    from knoxidx.core.errors import KnoxidxError
    from knoxidx.index import Index

    absolute = f"{indexed}/app"
    with Index.open(indexed) as idx:
        assert idx.find_symbols("load", path="app")["total"] == 1
        for ask in (lambda: idx.find_symbols("load", path=absolute),
                    lambda: idx.callers("load", path=absolute),
                    lambda: idx.search("load", mode="lexical", path_glob=absolute)):
            with pytest.raises(KnoxidxError, match="relative to the repository root") as got:
                ask()
            assert got.value.exit_code == 2
    code, _, err = run("symbols", "load", str(indexed), "--path", absolute)
    assert code == 2 and "starts with '/'" in err and "Traceback" not in err


def test_a_store_url_libpq_cannot_parse_is_bad_input_and_keeps_its_password(
        indexed: Path) -> None:
    """libpq quotes a URL it cannot parse in its message, password and all: the message
    went to stderr (and CI logs) as it was, and as an unreachable server (exit 8)."""
    pytest.importorskip("psycopg")
    for url in ("postgresql://kx:hunter2-secret@[::1", "postgresql://kx:hunter2-secret@h/db?x=1",
                "host=h password=hunter2-secret dbname"):
        code, _, err = run("symbols", "load", str(indexed), "--store", url)
        assert code == 2 and err.startswith("error: bad store URL"), (url, err)
        assert "hunter2" not in err and "Traceback" not in err, err


def test_an_offset_or_minimum_past_sqlites_integers_is_bad_input(indexed: Path) -> None:
    """HTTP and MCP took at most 2**31 - 1; the CLI and the library passed any number to
    SQLite, which cannot bind one past 2**63 (a traceback)."""
    from knoxidx.core.errors import BadInputError
    from knoxidx.index import Index

    huge = 10**20
    with Index.open(indexed) as idx:
        for ask in (lambda: idx.find_symbols("load", offset=huge),
                    lambda: idx.find_symbols("*", min_complexity=huge),
                    lambda: idx.callers("load", offset=huge)):
            with pytest.raises(BadInputError):
                ask()
    for args in (["symbols", "load", "--offset", str(huge)],
                 ["symbols", "*", "--min-complexity", str(huge)]):
        code, _, err = run(*args, str(indexed))
        assert code == 2 and "Traceback" not in err, (args, err)


@pytest.mark.parametrize("args", [("symbols", "*"), ("search", "parse", "--mode", "lexical"),
                                  ("export",), ("stats",), ("index",)])
def test_a_closed_output_pipe_ends_a_command_quietly(indexed: Path, args: tuple[str, ...]) -> None:
    """`knoxidx symbols '*' | head -1`: the reader is gone, so the command stops as a Unix tool
    does, with no traceback and no error line; its status is click's for a broken pipe, 1."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader left before the first line: every write meets EPIPE
    try:
        proc = subprocess.run([*CLI, *args, str(indexed)], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (1, "")


def test_context_takes_the_same_token_budgets_as_the_library(indexed: Path) -> None:
    """The library's bound is every face's (HTTP and MCP: tests/agent)."""
    from knoxidx.answers.budget import MAX_TOKENS, MIN_TOKENS

    for budget in (MIN_TOKENS - 1, MAX_TOKENS + 1):
        code, _, err = run("context", "parse", str(indexed), "--max-tokens", str(budget))
        assert code == 2 and f"{MIN_TOKENS}<=x<={MAX_TOKENS}" in err, err


NOT_UTF8 = os.fsdecode(b"\xff")  # a byte of argv that is not UTF-8, as Python decodes it


@pytest.mark.parametrize("args,words", [
    # the lengths HTTP and MCP take (knoxidx.core.limits)
    (("symbols", "x" * 1001), "'NAME': is longer than 1000 characters"),
    (("symbols", "*", "--returns", "T" * 201), "'--returns': is longer than 200"),
    (("callers", "x" * 1001), "'SYMBOL': is longer than 1000"),
    (("show", "x" * 1001), "'SYMBOL': is longer than 1000"),
    (("history", "x" * 1001), "'SYMBOL': is longer than 1000"),
    (("context", "x" * 2001), "'QUERY': is longer than 2000"),
    (("deps", "x" * 4097), "'TARGET': is longer than 4096"),
    (("goto", "x" * 4109), "'PLACE': is longer than 4108"),
    (("changes", "--base", "x" * 201), "'--base': is longer than 200"),
    (("symbols", "load", "--path", "x" * 4097), "'--path': is longer than 4096"),
    # bytes that are not UTF-8: a traceback from SQLite or the tokenizer
    (("symbols", NOT_UTF8), "not UTF-8"), (("deps", NOT_UTF8), "not UTF-8"),
    (("context", NOT_UTF8), "not UTF-8"), (("symbols", "load", "--path", NOT_UTF8), "not UTF-8"),
    # digits int() reads and HTTP refuses
    (("symbols", "load", "--limit", "٣"), "whole number in the digits 0-9"),
    (("symbols", "load", "--offset", "1_0"), "whole number in the digits 0-9"),
    (("map", "--max-tokens", "١٠٠"), "whole number in the digits 0-9"),
    (("context", "x", "--max-tokens", "１０００"), "whole number in the digits 0-9"),
    (("history", "load", "--offset", str(2**31)), "0<=x<=2147483647"),
    (("symbols", "*", "--min-complexity", str(2**31)), "1<=x<=2147483647"),
    (("callers", "app/config.py:٥"), "must be written in the digits 0-9"),
    (("goto", "app/config.py:٥"), "must be written in the digits 0-9"),
    (("show", "app/config.py:٥"), "must be written in the digits 0-9"),
])
def test_the_cli_refuses_what_http_refuses(indexed: Path, args: tuple[str, ...],
                                           words: str) -> None:
    code, out, err = run(*args, str(indexed))
    assert code == 2 and words in " ".join(err.split()) and "Traceback" not in err, err
    assert out == ""


def test_a_window_in_other_digits_is_refused(tmp_path: Path) -> None:
    """int() reads '٣' as 3: `--since ٣` answered for three days without a word."""
    root = write_tree(tmp_path / "repo", FILES)
    build(root)
    for since in ("٣", "٣d", "３０d", "1_0"):
        code, _, err = run("hotspots", str(root), "--since", since)
        assert code == 2 and "not a number of days" in err, (since, err)


def test_seconds_are_digits_too() -> None:
    """float() reads 'nan', which no range refuses, and '٣'."""
    for value in ("nan", "inf", "٣"):
        code, _, err = run("serve", ".", "--header-timeout", value)
        assert code == 2 and "a number in the digits 0-9" in err, (value, err)


@pytest.mark.parametrize("value", ["abc", "٣", "-5", "0"])
def test_a_worker_memory_cap_that_is_no_number_is_one_line(tmp_path: Path, value: str) -> None:
    """int() raised a traceback on 'abc', read '٣' as 3, and took a cap below zero."""
    root = write_tree(tmp_path / "repo", FILES)
    code, _, err = run("index", str(root), "--graph-only",
                       env={"KNOXIDX_WORKER_MEMORY_MB": value})
    assert code == 2 and "KNOXIDX_WORKER_MEMORY_MB must be a whole number" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", ["0", "nan", "inf", "٣", "1_0", "601"])
def test_a_query_deadline_takes_digits_only(tmp_path: Path, value: str) -> None:
    from knoxidx.core.config import ConfigError, load_settings

    with pytest.raises(ConfigError, match="KNOXIDX_QUERY_DEADLINE"):
        load_settings(tmp_path, env={"KNOXIDX_QUERY_DEADLINE": value,
                                     "XDG_CONFIG_HOME": str(tmp_path)})
    assert load_settings(tmp_path, env={"KNOXIDX_QUERY_DEADLINE": "2.5",
                                        "XDG_CONFIG_HOME": str(tmp_path)}).query_deadline == 2.5
