"""Minified files (a minifier's output: a library on a line or a few) are skipped with their own
counted reason, unless the settings ask for them; a file written to be read, long lines and
all, is always indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from knoxidx.core.config import ConfigError, load_settings
from knoxidx.index import Index
from knoxidx.languages.js import MINIFIED_LINE_CHARS
from knoxidx.parse.reader import looks_minified
from knoxidx.retrieval.stores import chunk_store_for
from knoxidx.update.verify import verify_index
from tests.helpers import build, run_cli

APP = ('const { helper } = require("./lib");\n\n'
       "function run() {\n  return helper(1);\n}\n\nmodule.exports = { run };\n")
READABLE_LIB = ("function helper(a) {\n  return a + 1;\n}\n\n"
                "module.exports = { helper };\n")
# what a minifier makes of a library: a licence comment, then everything on one line
MINIFIED_LIB = ("/*! lib v1.0 | MIT */\n"
                + "function helper(a){return a+1}"
                + "".join(f"function f{i}(a){{return helper(a)*{i}}}" for i in range(200))
                + "module.exports={helper};\n")
OPT_IN = "[index]\nminified = true\n"


def chunked_paths(root: Path) -> set[str]:
    with Index.open(root) as idx:
        return set(chunk_store_for(idx.store).paths())


def defined(root: Path, name: str) -> list[str]:
    with Index.open(root) as idx:
        return [s["path"] for s in idx.symbols(name) if s["name"] == name]


def callers_of_helper(root: Path) -> list[str]:
    with Index.open(root) as idx:
        return [c["name"] for c in idx.callers("helper")["callers"]]


def test_a_minified_file_is_skipped_with_its_reason(repo) -> None:
    root = repo({"app.js": APP, "vendor/lib.min.js": MINIFIED_LIB})
    report = build(root)
    assert report.skipped["minified"] == 1
    assert report.changed == 1
    assert defined(root, "f7") == []
    assert chunked_paths(root) == {"app.js"}  # nothing of it to search either
    with Index.open(root) as idx:
        assert idx.status()["files_by_status"] == {"ok": 1, "minified": 1}
        state = idx.store.file_states()["vendor/lib.min.js"]
        assert state.status == "minified"
        assert verify_index(idx)["equal"]


def test_hand_written_files_with_a_long_line_are_indexed(repo) -> None:
    table = "const TABLE = [" + ", ".join(str(i * 7919 % 100003) for i in range(250)) + "];\n"
    blob = "DATA = '" + "QUJD" * 25_000 + "'\n"  # a base64 blob: 100,000 characters
    root = repo({
        # one 1,600-character line of data among forty written to be read (three.js's
        # MathUtils.js has one of 1,552 among 740)
        "table.js": "".join(f"function step{i}(x) {{ return TABLE[x % {i + 1}]; }}\n"
                            for i in range(40)) + table,
        # a language nobody minifies: however long its lines, they are data
        "blob.py": "import base64\n\n" + blob + "\n\ndef decoded():\n    return "
                   "base64.b64decode(DATA)\n",
        # CJK text: three bytes a character; the rule counts characters
        "messages.js": "".join(f"export const m{i} = '{'漢字' * 30}';\n" for i in range(20)),
    })
    report = build(root)
    assert not report.skipped, report.skipped
    assert defined(root, "step39") == ["table.js"]
    assert defined(root, "decoded") == ["blob.py"]
    assert defined(root, "m19") == ["messages.js"]


def test_the_rule_is_the_mean_characters_a_line() -> None:
    limit = MINIFIED_LINE_CHARS
    assert looks_minified(MINIFIED_LIB.encode(), limit)
    assert not looks_minified(READABLE_LIB.encode(), limit)
    assert not looks_minified(b"", limit)
    line = b"x" * limit
    assert not looks_minified(line, limit) and not looks_minified(line + b"\n", limit)
    assert looks_minified(line + b"x", limit)
    assert not looks_minified(("漢" * limit).encode(), limit)  # 3 bytes each, one character
    assert looks_minified(("漢" * (limit + 1)).encode(), limit)


def test_the_setting_indexes_them_and_a_change_of_it_applies_to_unchanged_files(repo) -> None:
    root = repo({"app.js": APP, "lib.js": MINIFIED_LIB, "knoxidx.toml": OPT_IN})
    report = build(root)
    assert not report.skipped and report.changed == 2
    assert defined(root, "f7") == ["lib.js"]
    assert {"run", "f7"} <= set(callers_of_helper(root))
    assert chunked_paths(root) == {"app.js", "lib.js"}
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]  # the clean rebuild indexes them too

    (root / "knoxidx.toml").unlink()  # lib.js itself is untouched
    report = build(root)
    assert report.skipped["minified"] == 1 and report.removed_paths == ["lib.js"]
    assert defined(root, "f7") == [] and defined(root, "helper") == []
    assert chunked_paths(root) == {"app.js"}

    (root / "knoxidx.toml").write_text(OPT_IN, encoding="utf-8")
    report = build(root)
    assert report.changed == 1 and report.changed_paths == ["lib.js"]
    assert defined(root, "f7") == ["lib.js"] and {"run", "f7"} <= set(callers_of_helper(root))


def test_an_edit_makes_a_file_minified_and_readable_again(repo) -> None:
    root = repo({"app.js": APP, "lib.js": READABLE_LIB})
    build(root)
    assert callers_of_helper(root) == ["run"]

    (root / "lib.js").write_text(MINIFIED_LIB, encoding="utf-8")
    report = build(root)
    assert report.skipped["minified"] == 1 and report.removed_paths == ["lib.js"]
    assert defined(root, "helper") == []
    assert chunked_paths(root) == {"app.js"}

    (root / "lib.js").write_text(READABLE_LIB + "\n", encoding="utf-8")
    report = build(root)
    assert not report.skipped and report.changed_paths == ["lib.js"]
    assert defined(root, "helper") == ["lib.js"] and callers_of_helper(root) == ["run"]
    assert chunked_paths(root) == {"app.js", "lib.js"}
    with Index.open(root) as idx:
        assert verify_index(idx)["equal"]


def test_the_setting_must_be_a_boolean(tmp_path: Path) -> None:
    (tmp_path / "knoxidx.toml").write_text('[index]\nminified = "yes"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="index.minified must be a bool"):
        load_settings(tmp_path)
    (tmp_path / "knoxidx.toml").write_text(OPT_IN, encoding="utf-8")
    assert load_settings(tmp_path).index_minified


def test_the_index_summary_counts_them_and_says_how_to_index_them(repo) -> None:
    root = repo({"app.js": APP, "vendor/lib.min.js": MINIFIED_LIB})
    code, out, err = run_cli("index", "--graph-only", "--no-history", str(root))
    assert code == 0, err
    assert "skipped: 1 minified (`[index] minified = true` in knoxidx.toml" in out
    code, out, err = run_cli("stats", str(root))
    assert code == 0, err
    assert "files: minified=1, ok=1" in out
