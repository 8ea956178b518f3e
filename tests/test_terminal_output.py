"""A hostile repository's names and doc comments reach the terminal as visible text: file
names and docstrings holding ESC]0;…BEL (retitle), ESC[2J (clear), a C1 CSI, a newline or a
bidirectional override, through every human output of the CLI; ``--json`` keeps them exact."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from knoxidx.core.terminal import for_terminal, json_text, visible
from knoxidx.watch_log import line_emitter
from tests.helpers import run_cli, write_tree

TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
CSI = "\x9b31m"
BIDI = "\u202e"
FILES = {
    "util.py": "def helper():\n    return 1\n",
    f"title{TITLE}.py": "from util import helper\n\n\ndef retitle():\n    return helper()\n",
    f"clear{CLEAR}.py": (
        "from util import helper\n\n\n"
        f'def wipe():\n    """Docs with {TITLE} and {CLEAR} and {CSI} inside."""\n'
        "    return helper()\n"),
    "line\nbreak.py": "from util import helper\n\n\ndef forged():\n    return helper()\n",
    f"csi{CSI}{BIDI}.py": "from util import helper\n\n\ndef tinted():\n    return helper()\n",
    "[bold]loud[/bold].py": "from util import helper\n\n\ndef shouted():\n    return helper()\n",
    "dup_a.py": "def twin():\n    pass\n",
    f"dup{TITLE}.py": "def twin():\n    pass\n",
}
# anything a terminal may obey: every C0 but newline and tab, DEL, C1, bidi controls
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("hostile"), FILES)
    result = CliRunner().invoke(main, ["index", "--jobs", "1", str(root)])
    assert result.exit_code == 0, result.output
    assert not RAW_CONTROL.search(result.output), repr(result.output)
    return root


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    assert not RAW_CONTROL.search(result.output), repr(result.output)
    return result.output


@pytest.mark.parametrize("args", [
    ["symbols", "*"], ["symbols", "retitle"], ["callers", "helper"], ["impact", "helper"],
    ["refs", "helper"], ["callees", "wipe"], ["deps", "util.py", "--reverse"],
    ["search", "Docs with inside", "--mode", "lexical"], ["context", "wipe docs inside"],
])
def test_human_output_shows_control_characters_never_sends_them(hostile: Path,
                                                                 args: list[str]) -> None:
    output = cli(*args, str(hostile)) if args[0] != "search" else \
        cli(args[0], args[1], str(hostile), *args[2:])
    assert "\\x1b" in output or "\\n" in output or args[0] == "callees", output


def test_a_newline_in_a_file_name_splits_no_line(hostile: Path) -> None:
    lines = cli("symbols", "forged", str(hostile)).splitlines()
    assert lines == ["Function  line\\nbreak.forged  line\\nbreak.py:4"]
    callers = cli("callers", "helper", str(hostile)).splitlines()
    assert len(callers) == 1 + 5  # the title line and one line per caller
    assert any("title\\x1b]0;pwned\\x07.py:5" in line for line in callers)
    assert any("csi\\x9b31m\\u202e.py:5" in line for line in callers)


def test_markup_like_names_are_printed_as_they_are(hostile: Path) -> None:
    assert "[bold]loud[/bold].py:4" in cli("symbols", "shouted", str(hostile))


def test_doc_comments_are_escaped_in_snippets_and_context(hostile: Path) -> None:
    found = cli("search", "Docs with inside", str(hostile), "--mode", "lexical")
    assert "Docs with \\x1b]0;pwned\\x07 and \\x1b[2J and \\x9b31m inside." in found
    context = cli("context", "wipe docs inside", str(hostile))
    assert "clear\\x1b[2J.py:" in context and "\\x1b[2J and \\x9b31m" in context


def test_json_keeps_every_name_exact(hostile: Path) -> None:
    output = cli("symbols", "*", str(hostile), "--json", "--limit", "100")
    paths = {s["path"] for s in json.loads(output)["symbols"]}
    assert {f"title{TITLE}.py", "line\nbreak.py", f"csi{CSI}{BIDI}.py"} <= paths
    found = json.loads(cli("search", "Docs with inside", str(hostile), "--mode", "lexical",
                           "--json"))
    assert f"{TITLE} and {CLEAR} and {CSI}" in found["results"][0]["snippet"]


def test_errors_quoting_the_repository_are_escaped(hostile: Path) -> None:
    code, out, err = run_cli("callers", "twin", str(hostile))
    assert code == 4 and not RAW_CONTROL.search(out + err), repr(err)
    assert "dup\\x1b]0;pwned\\x07.py" in err and err.count("\n") == 1


def test_watch_log_lines_are_escaped() -> None:
    out = io.StringIO()
    emit = line_emitter(out, as_json=False)
    emit("error", {"error": f"cannot read title{TITLE}.py"})
    line_emitter(out, as_json=True)("error", {"error": f"x{CSI}"})
    human, machine = out.getvalue().splitlines()
    assert not RAW_CONTROL.search(out.getvalue())
    assert human.endswith("error: cannot read title\\x1b]0;pwned\\x07.py")
    assert json.loads(machine)["error"] == f"x{CSI}"


def test_escaping_rules() -> None:
    assert visible("a\x1b[2Jb\nc\td\r\x00\x7f\x9b\u2066") == \
        "a\\x1b[2Jb\\nc\\td\\r\\x00\\x7f\\x9b\\u2066"
    assert visible("x\ny\tz\x1b", multiline=True) == "x\ny\tz\\x1b"
    assert visible("plain [bold] ünïcode ✓") == "plain [bold] ünïcode ✓"
    data = {"path": "a\nb", "snippet": "one\ntwo\x1b", "items": [{"name": "\x07"}], "n": 3}
    assert for_terminal(data) == {"path": "a\\nb", "snippet": "one\ntwo\\x1b",
                                  "items": [{"name": "\\x07"}], "n": 3}
    text = json_text({"p": f"{TITLE}{CSI}{BIDI}\n"}, indent=2)
    assert not RAW_CONTROL.search(text) and json.loads(text) == {"p": f"{TITLE}{CSI}{BIDI}\n"}


def test_the_index_report_before_embedding_is_escaped(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`knoxidx index` embeds by default, and prints its report before it starts: that report
    (a warning naming a file) went out unescaped, a newline forging a line, an ESC obeyed."""
    import knoxidx.cli.embed

    monkeypatch.setattr(knoxidx.cli.embed, "embed_after_index", lambda *a, **k: None)
    root = write_tree(tmp_path / "r", {f"bad{TITLE}\nname.py": "def f(:\n    pass\n"})
    result = CliRunner().invoke(main, ["index", "--jobs", "1", "--embed", str(root)], color=True)
    assert result.exit_code == 0, result.output
    assert not RAW_CONTROL.search(result.output), repr(result.output)
    assert "warning: bad\\x1b]0;pwned\\x07\\nname.py: " in result.output


def test_a_newline_in_a_file_name_splits_no_map_line(hostile: Path) -> None:
    lines = cli("map", str(hostile)).splitlines()
    assert "line\\nbreak.py:" in lines and "line" not in lines
    data = json.loads(cli("map", str(hostile), "--json"))
    assert "line\nbreak.py" in {f["path"] for f in data["files"]}


def test_a_file_name_holding_a_newline_can_be_named_as_path_line(hostile: Path) -> None:
    assert "Function line\\nbreak.forged" in cli("show", "line\nbreak.py:4", str(hostile))
    assert "-> Function util.helper" in cli("goto", "line\nbreak.py:5", str(hostile))


@pytest.mark.parametrize("fmt", ["json", "dot", "graphml"])
def test_an_export_to_the_terminal_sends_no_control_character(hostile: Path, fmt: str) -> None:
    """`knoxidx export` writes to stdout by default: its JSON escapes C1 and bidi characters
    as well (the same values), its DOT writes them as character references."""
    output = cli("export", str(hostile), "--format", fmt)
    if fmt == "json":
        paths = {n["path"] for n in json.loads(output)["nodes"]}
        assert f"csi{CSI}{BIDI}.py" in paths and f"title{TITLE}.py" in paths
    if fmt == "dot":
        assert "title&#27;]0;pwned&#7;.py" in output
    if fmt == "graphml":
        assert "csi&#155;31m&#8238;.py" in output  # (C0 but tab and newline: no XML text)


def test_the_bidirectional_marks_are_escaped_too() -> None:
    """ALM, LRM and RLM reorder the text around them as the overrides do (all of Unicode's
    Bidi_Control): `x.py\u200f:12` must not show its line number moved."""
    assert visible("x.py\u200f:12 \u200e\u061c") == "x.py\\u200f:12 \\u200e\\u061c"
    text = json_text({"p": "a\u200fb"})
    assert "\u200f" not in text and json.loads(text) == {"p": "a\u200fb"}


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile names in git history: two commits by an author whose name and subject hold
    escapes too, and an uncommitted edit."""
    import subprocess

    root = write_tree(tmp_path_factory.mktemp("committed"), FILES)
    git = ["git", "-C", str(root), "-c", f"user.name=A{TITLE}", "-c", "user.email=a@x"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", f"start{CLEAR}"], check=True)
    for name in (f"title{TITLE}.py", "line\nbreak.py"):
        with open(root / name, "a", encoding="utf-8") as out:
            out.write("\n\ndef later():\n    return helper()\n")
    subprocess.run([*git, "commit", "-qam", f"more{CSI}{BIDI}"], check=True)
    with open(root / f"clear{CLEAR}.py", "a", encoding="utf-8") as out:
        out.write("\n\ndef fresh():\n    return wipe()\n")
    result = CliRunner().invoke(main, ["index", "--jobs", "1", str(root)])
    assert result.exit_code == 0, result.output
    return root


@pytest.mark.parametrize("args", [
    ["changes"], ["hotspots"], ["hotspots", "--since", "all"], ["history", "retitle"],
    ["history", "line\nbreak.py:4"], ["show", "retitle"], ["show", "wipe"],
    ["goto", f"title{TITLE}.py:5"], ["map"], ["stats"], ["symbols", "later"],
    ["callers", "helper"], ["impact", "wipe"], ["context", "retitle later"],
])
def test_every_answer_about_history_is_escaped_too(committed: Path, args: list[str]) -> None:
    """File names, authors and commit subjects from the repository, through the commands that
    read git history or print a whole-repository view."""
    command, *rest = args
    output = cli(command, *rest[:1], str(committed), *rest[1:]) if rest and \
        not rest[0].startswith("-") else cli(command, str(committed), *rest)
    assert output.strip(), args


def test_the_librarys_warnings_reach_the_terminal_escaped(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Warnings went out through Python's last-resort handler as they were: a model name from
    the repository's settings, a file name in an exception's message or traceback."""
    import logging

    from knoxidx.cli.output import log_to_terminal

    log_to_terminal()
    log_to_terminal()  # once per process, however many commands run in it
    log = logging.getLogger("knoxidx.somewhere")
    log.warning("vectors made by %s", f"m{TITLE}")
    try:
        raise OSError(f"cannot read title{TITLE}\nbreak.py")
    except OSError:
        log.exception("update failed")
    err = capsys.readouterr().err
    assert not RAW_CONTROL.search(err), repr(err)
    assert err.startswith("vectors made by m\\x1b]0;pwned\\x07\nupdate failed\nTraceback")
    assert "cannot read title\\x1b]0;pwned\\x07\nbreak.py" in err  # a traceback keeps its lines
