"""A docstring -> code task from a real project: which functions to ask for, which files to
index, and the copy with the asked-for functions' doc comments stripped.

Selection (deterministic for a seed): functions and methods with a body and a doc comment
whose summary says more than the name does (at least ``MIN_WORDS`` words, at least
``MIN_NEW_WORDS`` content words that are not parts of the name), not in test code, not
overloaded (the qualified name occurs once in its file), with a summary that no other
definition in the project shares. At most ``PER_FILE`` per file, so the queries spread over
the project. The indexed subset is the files holding them plus random other files of the
language (distractors) until it has ``min_chunks`` chunks, counted with ``SELECTION_BUDGET``
(fixed: the task must not change when the chunker being measured does).
"""

from __future__ import annotations

import os
import random
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.retrieval_eval.docs import DocComment, doc_comment, has_body, node_for, parse, summary
from knoxidx.parse.discovery import discover
from knoxidx.parse.extract import extract
from knoxidx.retrieval.chunker import ChunkBudget, chunk_file
from knoxidx.retrieval.terms import STOP_WORDS, identifier_parts

# The chunker's budget when the benchmark's tasks were first drawn (classes whole up to 2,048
# tokens, neighbours merged up to 512): it sizes the distractor set, whatever the chunker is now.
SELECTION_BUDGET = ChunkBudget(max_tokens=2048, overlap_tokens=256, merge_tokens=512,
                               min_tokens=48, member_tokens=2048, definition_merge_tokens=512)
MIN_WORDS = 6
MIN_NEW_WORDS = 3
MIN_FUNCTION_LINES = 3
# What the questions ask for: functions and methods (the benchmark), or, for a counter-check of
# anything that favours functions, types: KNOXIDX_EVAL_KINDS=Class,Interface (classes, structs,
# enums, interfaces, traits with a body and a doc comment)
KINDS_ENV = "KNOXIDX_EVAL_KINDS"


def target_kinds() -> frozenset[str]:
    return frozenset(os.environ.get(KINDS_ENV, "Function").split(","))
PER_FILE = 3
# Words that say nothing a name does not ("Returns the value of the given key").
FILLER = frozenset({
    "return", "returns", "get", "gets", "set", "sets", "given", "specified", "value", "values",
    "new", "instance", "object", "method", "function", "true", "false", "null", "none", "nil",
    "if", "otherwise", "whether", "not", "this", "current", "provided", "called", "use", "used",
})
_SKIP_DOC = re.compile(r"inheritdoc|^deprecated|^see\b|^todo|^alias|^fixme|^xxx", re.IGNORECASE)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|test_utils|testdata|fixtures?|benches|examples?)(/|$)"
    r"|(^|/)test_[^/]*$|_test\.go$|[^/]*Tests?\.java$|\.(test|spec)\.[jt]sx?$|_tests?\.rs$"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    qualname: str
    name: str
    start_line: int  # the definition's span in the original file
    end_line: int
    doc: DocComment
    query: str  # the doc's summary


@dataclass(frozen=True, slots=True)
class Target:
    """A query and the function that answers it, with its span in the stripped copy."""

    query: str
    path: str
    qualname: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Task:
    project: str
    languages: tuple[str, ...]
    targets: list[Target]
    files: list[str]  # the indexed subset, repo-relative
    config_paths: list[str]
    estimated_chunks: int
    candidates: int  # functions that passed the filters, before sampling


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def informative(text: str, name: str) -> bool:
    words = re.findall(r"[a-z]+", text.lower())
    if len(words) < MIN_WORDS or _SKIP_DOC.search(text):
        return False
    name_parts = set(identifier_parts(name))
    new = {w for w in words if w not in STOP_WORDS and w not in FILLER and w not in name_parts}
    return len(new) >= MIN_NEW_WORDS


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def scan(root: Path, path: str, language: str) -> tuple[list[Candidate], list[str]]:
    """The documented functions of one file that pass the per-function filters, and every
    doc summary in it (for the project-wide duplicate check)."""
    source = (root / path).read_bytes()
    facts = extract(path, source, language)
    tree = parse(source, language)
    qualnames = Counter(d.qualname for d in facts.defs)
    found: list[Candidate] = []
    summaries: list[str] = []
    kinds = target_kinds()
    for d in facts.defs:
        if d.kind not in kinds:
            continue
        node = node_for(tree.root_node, d.start_byte, d.end_byte)
        if node is None:
            continue
        doc = doc_comment(node, language, source)
        if doc is None:
            continue
        text = summary(doc.raw)
        summaries.append(_normal(text))
        inside = d.start_line <= doc.first_line <= d.end_line
        length = d.end_line - d.start_line + 1 - (doc.last_line - doc.first_line + 1 if inside else 0)
        if (
            qualnames[d.qualname] == 1
            and has_body(node)
            and length >= MIN_FUNCTION_LINES
            and informative(text, d.name)
        ):
            found.append(Candidate(path, d.qualname, d.name, d.start_line, d.end_line, doc, text))
    return found, summaries


def build_task(
    root: Path,
    project: str,
    languages: Sequence[str],
    *,
    queries: int = 100,
    min_chunks: int = 1500,
    seed: int = 4,
) -> tuple[Task, dict[str, list[Candidate]]]:
    """Choose the functions to ask for and the files to index (see the module docstring)."""
    found = discover(root)
    files = [f.path for f in found.files if f.language in languages]
    language_of = {f.path: f.language for f in found.files}
    by_file: dict[str, list[Candidate]] = {}
    seen: Counter[str] = Counter()
    for path in files:
        try:
            candidates, summaries = scan(root, path, language_of[path])
        except Exception:  # noqa: BLE001  (an unparsable file is just not a source of queries)
            candidates, summaries = [], []
        seen.update(summaries)
        if candidates and not is_test_path(path):
            by_file[path] = candidates
    for path in list(by_file):
        by_file[path] = [c for c in by_file[path] if seen[_normal(c.query)] == 1]
        if not by_file[path]:
            del by_file[path]
    total = sum(len(c) for c in by_file.values())
    rng = random.Random(seed)
    order = sorted(by_file)
    rng.shuffle(order)
    chosen: dict[str, list[Candidate]] = {}
    count = 0
    for path in order:
        if count >= queries:
            break
        picks = list(by_file[path])
        rng.shuffle(picks)
        picks = sorted(picks[: min(PER_FILE, queries - count)], key=lambda c: c.start_line)
        chosen[path] = picks
        count += len(picks)
    subset = list(chosen)
    chunks = sum(_chunk_count(root, p, language_of[p]) for p in subset)
    others = sorted(set(files) - set(subset))
    rng.shuffle(others)
    for path in others:
        if chunks >= min_chunks:
            break
        subset.append(path)
        chunks += _chunk_count(root, path, language_of[path])
    targets = [t for path, picks in chosen.items() for t in _targets(path, picks)]
    task = Task(project, tuple(languages), targets, sorted(subset), found.config_paths, chunks,
                total)
    return task, chosen


def _chunk_count(root: Path, path: str, language: str) -> int:
    source = (root / path).read_bytes()
    try:
        defs = extract(path, source, language).defs
        return len(chunk_file(path, source, language, defs, budget=SELECTION_BUDGET))
    except Exception:  # noqa: BLE001  (an estimate; the index will say)
        return max(1, source.count(b"\n") // 40)


def _targets(path: str, picks: list[Candidate]) -> list[Target]:
    removed = [(c.doc.first_line, c.doc.last_line) for c in picks]

    def moved(line: int) -> int:
        return line - sum(last - first + 1 for first, last in removed if last < line)

    return [Target(c.query, path, c.qualname, moved(c.start_line), moved(c.end_line))
            for c in picks]


def write_copy(root: Path, dest: Path, task: Task, chosen: dict[str, list[Candidate]]) -> None:
    """``dest`` gets the subset's files (and config files), with the chosen functions' doc
    comments removed line by line; anything else in ``dest`` except ``.knoxidx`` goes."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in dest.iterdir():
        if entry.name == ".knoxidx":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for path in [*task.files, *task.config_paths]:
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if path not in chosen:
            shutil.copyfile(root / path, target)
            continue
        lines = (root / path).read_bytes().split(b"\n")
        drop = {n for c in chosen[path] for n in range(c.doc.first_line, c.doc.last_line + 1)}
        target.write_bytes(b"\n".join(line for n, line in enumerate(lines, 1) if n not in drop))
