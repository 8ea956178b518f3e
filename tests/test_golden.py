"""Golden graphs: each fixture project under ``fixtures/`` is indexed and its whole graph,
rendered as sorted text, is compared with a hand-checked ``tests/golden/<fixture>.txt``.

The goldens are the truth, not a snapshot of what the tool happens to print. Where the tool is
known to be wrong, the correct line stays in the golden and the machine-readable section of
``tests/golden/KNOWN_GAPS.md`` lists it:

    <fixture> - <line>    the golden has it, the tool does not produce it (yet)
    <fixture> + <line>    the tool produces it, and it is wrong

The test compares (golden minus the ``-`` lines) with (output minus the ``+`` lines), so a
regression fails and a fix is reported as "unexpectedly passing" (printed, not failed).

``KNOXIDX_UPDATE_GOLDEN=1 pytest tests/test_golden.py`` rewrites the goldens from the tool's
output *with the known gaps re-applied* (``-`` lines added back, ``+`` lines dropped), so the
hand corrections survive. After editing a fixture, first move the line numbers in
KNOWN_GAPS.md, then update; and read the resulting ``git diff`` line by line before committing:
an updated golden is only as true as that reading.

Run ``python tests/test_golden.py FIXTURE`` to print a fixture's rendering as the tool sees it.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"
KNOWN_GAPS = GOLDEN / "KNOWN_GAPS.md"
FIXTURE_NAMES = ("python", "typescript", "javascript", "go", "rust", "java")
UPDATE_ENV = "KNOXIDX_UPDATE_GOLDEN"
MODULES_SECTION = "# (module layer: no file)"


# ---- indexing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Graph:
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    warnings: list[str]  # the update report's per-file warnings (syntax errors, bad UTF-8)


def index_fixture(name: str, tmp_path: Path) -> Graph:
    """Copy ``fixtures/<name>`` to ``tmp_path/<name>`` (the directory name is part of some
    module names, so it is kept) and index it with the library, in one process."""
    from knoxidx.graph import export
    from knoxidx.index import Index

    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, ignore=shutil.ignore_patterns(".knoxidx"))
    with Index.open(root, create=True) as idx:
        report = idx.update(jobs=1)
        return Graph(list(export.nodes(idx.q)), list(export.edges(idx.q)), list(report.warnings))


# ---- rendering --------------------------------------------------------------------------


def render(graph: Graph) -> str:
    """One line per node and per edge, grouped by file, ids replaced by qualified names.

    ``Node <Kind> <qualified name> <path>:<start>-<end>``
    ``<EdgeType> <source> -> <target> [<confidence>] <path>:<line>``

    File nodes are named by their path, module nodes by ``mod:<key>`` (in the JS family a
    module's key is its file's path); a module nothing in the repository contains (a
    third-party import) is marked ``(external)``. A name shared by two nodes (overloaded
    constructors, a Rust field and method) gets ``@<path>:<line>`` appended, so that every
    line says which node it means.
    """
    contains_module = {
        e["source"] for e in graph.edges if e["type"] == "Contains" and e["path"] is None
    }
    names = {n["id"]: ("mod:" if n["path"] is None else "") + n["qualified_name"]
             for n in graph.nodes}
    counts = Counter(names.values())
    label: dict[int, str] = {}
    for n in graph.nodes:
        name = names[n["id"]]
        if counts[name] > 1:
            name += f"@{n['path']}:{n['start_line']}" if n["path"] else f"@{n['language']}"
        label[n["id"]] = name

    sections: dict[str, list[str]] = defaultdict(list)
    for n in graph.nodes:
        if n["path"] is None:
            external = "" if n["id"] in contains_module else " (external)"
            sections[MODULES_SECTION].append(f"Node {n['kind']} {label[n['id']]}{external}")
        else:
            sections[n["path"]].append(
                f"Node {n['kind']} {label[n['id']]} {n['path']}:{n['start_line']}-{n['end_line']}"
            )
    for e in graph.edges:
        source = label.get(e["source"], f"?{e['source']}")
        target = label.get(e["target"], f"?{e['target']}")
        text = f"{e['type']} {source} -> {target} [{e['confidence']}]"
        if e["path"] is None:
            sections[MODULES_SECTION].append(text)
        else:
            sections[e["path"]].append(f"{text} {e['path']}:{e['line']}")
    return _join_sections(sections)


def _join_sections(sections: dict[str, list[str]]) -> str:
    """Files in path order, the module layer last; in each, nodes by line, then edges by line."""
    out: list[str] = []
    for section in sorted(sections, key=lambda s: (s == MODULES_SECTION, s)):
        out.append(section if section == MODULES_SECTION else f"# {section}")
        out.extend(sorted(sections[section], key=_line_order))
        out.append("")
    return "\n".join(out)


def _line_order(line: str) -> tuple:
    if line.startswith("Node "):
        kind = line.split(" ", 2)[1]
        span = re.search(r":(\d+)-\d+$", line)
        return (0, -1 if kind == "File" else int(span.group(1)) if span else 0, kind, line)
    at = re.search(r":(\d+)$", line)
    return (1, int(at.group(1)) if at else 0, line)


# ---- known gaps -------------------------------------------------------------------------

_GAP_LINE = re.compile(r"^(?P<fixture>\w+) (?P<sign>[-+]) (?P<line>.+)$")


@dataclass(frozen=True)
class Gaps:
    missing: list[str]  # in the golden, not produced by the tool
    spurious: list[str]  # produced by the tool, not in the golden


def known_gaps(fixture: str) -> Gaps:
    """The ```known-gaps``` fenced block of KNOWN_GAPS.md, for one fixture."""
    text = KNOWN_GAPS.read_text(encoding="utf-8") if KNOWN_GAPS.exists() else ""
    match = re.search(r"^```known-gaps\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    missing: list[str] = []
    spurious: list[str] = []
    for raw in (match.group(1).splitlines() if match else []):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        gap = _GAP_LINE.match(raw.rstrip())
        assert gap, f"malformed line in {KNOWN_GAPS.name}: {raw!r}"
        if gap["fixture"] == fixture:
            (missing if gap["sign"] == "-" else spurious).append(gap["line"])
    return Gaps(missing, spurious)


def _without(lines: list[str], drop: list[str]) -> list[str]:
    """``lines`` less one occurrence of each line of ``drop`` that it holds."""
    pending = Counter(drop)
    out = []
    for line in lines:
        if pending[line] > 0:
            pending[line] -= 1
        else:
            out.append(line)
    return out


def compare(fixture: str, golden: str, actual: str) -> tuple[list[str], list[str]]:
    """(unified diff lines, notes about gaps that no longer occur)."""
    gaps = known_gaps(fixture)
    golden_lines = golden.splitlines()
    actual_lines = actual.splitlines()
    actual_set, golden_set = set(actual_lines), set(golden_lines)
    notes = []
    for line in gaps.missing:
        if line not in golden_set:
            notes.append(f"KNOWN_GAPS '-' line is not in the golden (stale?): {line}")
        elif line in actual_set:
            notes.append(f"unexpectedly passing (now produced): {line}")
    for line in gaps.spurious:
        if line in golden_set:
            notes.append(f"KNOWN_GAPS '+' line is in the golden (contradiction): {line}")
        elif line not in actual_set:
            notes.append(f"unexpectedly passing (no longer produced): {line}")
    expected = _without(golden_lines, [m for m in gaps.missing if m not in actual_set])
    produced = _without(actual_lines, [s for s in gaps.spurious if s not in golden_set])
    diff = list(difflib.unified_diff(
        expected, produced, f"golden/{fixture}.txt (minus known gaps)",
        "knoxidx output (minus known gaps)", lineterm="",
    ))
    return diff, notes


def with_gaps_applied(fixture: str, actual: str) -> str:
    """The tool's rendering corrected by the known gaps: what an update writes."""
    gaps = known_gaps(fixture)
    lines = _without(actual.splitlines(), gaps.spurious)
    present = set(lines)
    added = [m for m in gaps.missing if m not in present]
    # Put each added line back in its file's section.
    sections: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        if line.startswith("#"):
            current = line if line == MODULES_SECTION else line[2:]
            sections.setdefault(current, [])
        elif line:
            sections.setdefault(current, []).append(line)
    for line in added:
        where = re.search(r" (\S+):\d+(?:-\d+)?$", line)
        sections.setdefault(where.group(1) if where else MODULES_SECTION, []).append(line)
    return _join_sections(sections)


# ---- the test ---------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_golden(fixture: str, tmp_path: Path) -> None:
    actual = render(index_fixture(fixture, tmp_path))
    golden_path = GOLDEN / f"{fixture}.txt"
    if os.environ.get(UPDATE_ENV) == "1":
        golden_path.write_text(with_gaps_applied(fixture, actual), encoding="utf-8")
        for line in known_gaps(fixture).missing:  # stale line numbers would land here too
            print(f"[{fixture}] kept from KNOWN_GAPS.md: {line}")
    assert golden_path.exists(), f"no golden file {golden_path}; run with {UPDATE_ENV}=1"
    diff, notes = compare(fixture, golden_path.read_text(encoding="utf-8"), actual)
    for note in notes:  # a fix of a known gap: the maintainer should take it off the list
        print(f"[{fixture}] {note}")
        warnings.warn(f"[{fixture}] {note}", stacklevel=1)
    if diff:
        pytest.fail(
            f"{fixture}: the graph differs from tests/golden/{fixture}.txt "
            "('-' expected by the golden, '+' produced by knoxidx):\n" + "\n".join(diff),
            pytrace=False,
        )


if __name__ == "__main__":
    import tempfile

    for name in sys.argv[1:] or FIXTURE_NAMES:
        with tempfile.TemporaryDirectory() as tmp:
            sys.stdout.write(render(index_fixture(name, Path(tmp))))
