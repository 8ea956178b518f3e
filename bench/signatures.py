"""``python -m bench.signatures [CORPUS]``: knoxidx's signatures as data against the languages'
own parsers.

- Python: the standard library's ``ast`` (of this interpreter). Each ``def`` is matched with
  knoxidx's Function node by (file, line of its ``def``); a function counts as exact when its
  parameters agree in order, name, kind, annotation and default (the written text parsed as an
  expression and compared as ``ast.dump``: the same expression, whatever the spacing), and its
  return annotation and decorators agree the same way.
- TypeScript and TSX: the TypeScript compiler's own parser (``ts.createSourceFile``, the pinned
  ``typescript`` bench/oracles installs): each function-like declaration's parameters (name,
  optional ``?``, rest ``...``, declared type and initializer as written, whitespace runs as
  one space) and return type, matched by (file, line of the declaration's name).
- Go: the standard library's ``go/parser`` (bench/oracles/go_signatures.go, built with the
  installed ``go``): each function's, method's and interface method's receiver, parameters
  (a grouped ``a, b int`` one per name, ``...T`` variadic of T), results as declared and type
  parameters per declared group, as written.
- Java: javac's parser (bench/oracles/JavaSignatures.java, compiled with the installed JDK):
  each method's and constructor's receiver parameter, parameters (``T...`` variadic of T),
  return type, type parameters and annotations, as written. Both matched by (file, line of
  the name) within the function's lines.

For every source file of the corpus (``$KNOXIDX_CORPUS``, else ``~/.cache/knoxidx-corpus``;
``--step N`` reads every N-th file) it prints, per language, how many of knoxidx's functions
the oracle matched and the share of those exactly the oracle's, and for each differing part
(parameters, returns, decorators) how many differ. ``--show N`` prints N differing functions
per language, for finding the cause.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knoxidx.languages.registry import language_for_path
from knoxidx.parse.extract import extract
from knoxidx.parse.signatures import MAX_WRITTEN, POSITIONAL, RECEIVER, SELF, VARIADIC

DEFAULT_CORPUS = Path.home() / ".cache" / "knoxidx-corpus"
MAX_FILE_BYTES = 1_000_000  # knoxidx's own default size limit
ORACLES = Path(__file__).resolve().parent / "oracles"
TS_SCRIPT = ORACLES / "ts_signatures.mjs"
TS_LANGUAGES = ("typescript", "tsx")
COMPILED_LANGUAGES = ("go", "java")
ORACLE_NAMES = {"python": "ast", "go": "go/parser", "java": "javac"}


@dataclass(slots=True)
class Tally:
    """One language's comparison with its oracle."""

    files: int = 0
    oracle_failed: int = 0  # files the oracle could not read, left out
    ours: int = 0  # knoxidx's functions
    matched: int = 0
    exact: int = 0
    cut: int = 0  # differing only because knoxidx cut a text longer than MAX_WRITTEN
    parts: Counter = field(default_factory=Counter)  # which part differed, how often
    differing: list[tuple[str, int, str, str, Any, Any]] = field(default_factory=list)
    # the oracle's functions none of knoxidx's matched (file, line, name); None where not
    # counted (Python, TypeScript)
    oracle_only: list[tuple[str, int, str]] | None = None

    def row(self) -> dict[str, Any]:
        counted = {} if self.oracle_only is None else {
            "oracle_functions_not_knoxidx": len(self.oracle_only)}
        return {**counted,
            "files": self.files, "oracle_failed": self.oracle_failed,
            "knoxidx_functions": self.ours, "matched": self.matched,
            "matched_share": round(self.matched / self.ours, 4) if self.ours else 0.0,
            "exact": self.exact,
            "exact_share": round(self.exact / self.matched, 4) if self.matched else 0.0,
            "differing_only_by_a_cut_text": self.cut,
            "differing_parts": dict(sorted(self.parts.items())),
        }


def source_files(root: Path, step: int, languages: tuple[str, ...]) -> Iterator[tuple[Path, str]]:
    """Every ``step``-th file of ``root`` in ``languages``, with its language, in path order
    (the downloads the corpus script leaves are not corpus)."""
    found = sorted(p for p in root.rglob("*") if p.is_file() and ".downloads" not in p.parts
                   and ".knoxidx" not in p.parts and "node_modules" not in p.parts)
    count = 0
    for path in found:
        spec = language_for_path(path.name)
        if spec is None or spec.name not in languages or path.stat().st_size > MAX_FILE_BYTES:
            continue
        if count % step == 0:
            yield path, spec.name
        count += 1


def _name_line(source: bytes, d: Any) -> int:
    """The line of a definition's name: its first line after decorators and annotations
    (knoxidx's Python function starts at ``def``; a TypeScript method at its modifiers)."""
    text = source[d.start_byte:d.end_byte]
    at = text.find(d.name.encode())
    return d.start_line + (text.count(b"\n", 0, at) if at >= 0 else 0)


# ---- Python: ast ----------------------------------------------------------------------------

def _same_expression(ours: str | None, node: ast.expr | None) -> bool:
    if node is None or ours is None:
        return node is None and ours is None
    try:
        parsed = ast.parse(ours, mode="eval").body
    except SyntaxError:
        return False
    return ast.dump(parsed) == ast.dump(node)


def ast_functions(source: bytes) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """Every ``def`` of a module by the line of its ``def`` keyword; None where this
    interpreter's parser rejects the file."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.lineno, node)
    return found


def ast_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str, Any, Any]]:
    """(name, kind, annotation, default) of each parameter, in order, as ``ast`` has them."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    out: list[tuple[str, str, Any, Any]] = []
    for i, arg in enumerate(positional):
        kind = "positional-only" if i < len(args.posonlyargs) else "positional"
        out.append((arg.arg, kind, arg.annotation, defaults[i]))
    if args.vararg is not None:
        out.append((args.vararg.arg, "variadic", args.vararg.annotation, None))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append((arg.arg, "keyword-only", arg.annotation, default))
    if args.kwarg is not None:
        out.append((args.kwarg.arg, "variadic-keyword", args.kwarg.annotation, None))
    return out


def compare_python(ours: tuple, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The parts of knoxidx's signature that differ from ``ast``'s: [] when exact. A method's
    ``self`` (knoxidx's kind) is ``ast``'s positional (or positional-only) first argument."""
    params, returns, _, decorators = ours
    expected = ast_parameters(node)
    differs: list[str] = []
    if len(params) != len(expected):
        differs.append("parameters")
    else:
        for (name, type_text, default, kind), (their_name, their_kind, annotation,
                                               their_default) in zip(params, expected, strict=True):
            if name != their_name:
                differs.append("name")
            if kind != their_kind and not (kind == SELF and their_kind.startswith("positional")):
                differs.append("kind")
            if not _same_expression(type_text, annotation):
                differs.append("type")
            if not _same_expression(default, their_default):
                differs.append("default")
    if not _same_expression(returns, node.returns):
        differs.append("returns")
    if len(decorators) != len(node.decorator_list) or not all(
            _same_expression(d, e) for d, e in zip(decorators, node.decorator_list, strict=False)):
        differs.append("decorators")
    return sorted(set(differs))


def _was_cut(ours: tuple) -> bool:
    params, returns, _, decorators = ours
    texts = [t for p in params for t in (p[1], p[2])] + [returns, *decorators]
    return any(t is not None and len(t) == MAX_WRITTEN and t.endswith("…") for t in texts)


def run_python(root: Path, step: int, tally: Tally) -> None:
    for path, language in source_files(root, step, ("python",)):
        source = path.read_bytes()
        theirs = ast_functions(source)
        if theirs is None:
            tally.oracle_failed += 1
            continue
        tally.files += 1
        rel = path.relative_to(root).as_posix()
        for d in extract(path.as_posix(), source, language).defs:
            if d.kind != "Function" or not d.signature_data:
                continue
            tally.ours += 1
            node = theirs.get(d.start_line)
            if node is None or node.name != d.name:
                continue
            tally.matched += 1
            differs = compare_python(d.signature_data, node)
            _count(tally, differs, d.signature_data, rel, d.start_line, d.name,
                   lambda n=node: ast.unparse(n.args) + (
                       f" -> {ast.unparse(n.returns)}" if n.returns else ""))


def _count(tally: Tally, differs: list[str], ours: tuple, rel: str, line: int, name: str,
           theirs: Any) -> None:
    if not differs:
        tally.exact += 1
        return
    if _was_cut(ours):
        tally.cut += 1
    tally.parts.update(differs)
    if len(tally.differing) < 200:
        tally.differing.append((rel, line, name, ",".join(differs), ours, theirs()))


# ---- TypeScript: the compiler's parser ------------------------------------------------------

def ts_declarations(paths: list[Path]) -> dict[str, list[dict]]:
    """The TypeScript compiler's function-like declarations of each file (ts_signatures.mjs),
    by path; the pinned ``typescript`` installed first if need be."""
    sys.path.insert(0, str(ORACLES))
    from ts_oracle import NODE_DIR, ensure_node_deps  # type: ignore[import-not-found]

    ensure_node_deps()
    out = subprocess.run(
        ["node", str(TS_SCRIPT), str(NODE_DIR / "node_modules" / "typescript")],
        input="\n".join(str(p) for p in paths), capture_output=True, text=True, check=True)
    found: dict[str, list[dict]] = {}
    for line in out.stdout.splitlines():
        row = json.loads(line)
        found.setdefault(row["file"], []).append(row)
    return found


def compare_ts(ours: tuple, theirs: dict) -> list[str]:
    """The parts of knoxidx's signature that differ from the compiler's: [] when exact. The
    compiler's ``this`` parameter is knoxidx's receiver; its ``?`` knoxidx's optional, its
    ``...`` variadic; a parameter with neither is positional."""
    params, returns, type_parameters, _ = ours
    expected = theirs["parameters"]
    differs: list[str] = []
    if len(params) != len(expected):
        differs.append("parameters")
    else:
        for (name, type_text, default, kind), their in zip(params, expected, strict=True):
            their_kind = ("receiver" if their["name"] == "this" else "variadic" if their["rest"]
                          else "optional" if their["optional"] else "positional")
            if name != their["name"]:
                differs.append("name")
            if kind != their_kind:
                differs.append("kind")
            if type_text != their["type"]:
                differs.append("type")
            if default != their["default"]:
                differs.append("default")
    if returns != theirs["returns"]:
        differs.append("returns")
    if list(type_parameters) != theirs["typeParameters"]:
        differs.append("type_parameters")
    return sorted(set(differs))


def run_ts(root: Path, step: int, tallies: dict[str, Tally]) -> None:
    files = list(source_files(root, step, TS_LANGUAGES))
    if not files:
        return
    declarations = ts_declarations([p for p, _ in files])
    for path, language in files:
        tally = tallies.setdefault(language, Tally())
        source = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        theirs: dict[int, dict] = {}
        for row in declarations.get(str(path), []):
            theirs.setdefault(row["line"], row)
        tally.files += 1
        for d in extract(path.as_posix(), source, language).defs:
            if d.kind != "Function" or not d.signature_data:
                continue
            tally.ours += 1
            line = _name_line(source, d)
            their = theirs.get(line)
            if their is None or their["name"] != d.name:
                continue
            tally.matched += 1
            differs = compare_ts(d.signature_data, their)
            _count(tally, differs, d.signature_data, rel, line, d.name, lambda t=their: t)


# ---- Go and Java: their compilers' parsers ---------------------------------------------------

def _compiled_oracle() -> Any:
    sys.path.insert(0, str(ORACLES))
    import compiled_signatures  # type: ignore[import-not-found]

    return compiled_signatures


def _their_parameter(their: dict, kind: str) -> tuple[str | None, str | None, None, str]:
    return (their["name"], their["type"], None, VARIADIC if their["variadic"] else kind)


def compare_go(ours: tuple, theirs: dict) -> list[str]:
    """The parts of knoxidx's signature that differ from go/parser's: [] when exact. Its
    receiver is knoxidx's (kind receiver), before the parameters; a Go function has no
    defaults nor decorators."""
    expected = [_their_parameter(p, RECEIVER) for p in theirs["receiver"]]
    expected += [_their_parameter(p, POSITIONAL) for p in theirs["parameters"]]
    return _compare_parameters(ours, expected, theirs["results"], theirs["typeParameters"], [])


def compare_java(ours: tuple, theirs: dict) -> list[str]:
    """The parts of knoxidx's signature that differ from javac's: [] when exact. javac's
    receiver parameter (`Foo this`) is knoxidx's, its method annotations knoxidx's decorators."""
    expected = [_their_parameter(p, RECEIVER if p["receiver"] else POSITIONAL)
                for p in theirs["parameters"]]
    return _compare_parameters(ours, expected, theirs["returns"], theirs["typeParameters"],
                               theirs["annotations"])


def _compare_parameters(ours: tuple, expected: list[tuple], returns: str | None,
                        type_parameters: list[str], decorators: list[str]) -> list[str]:
    params, our_returns, our_type_parameters, our_decorators = ours
    differs: list[str] = []
    if len(params) != len(expected):
        differs.append("parameters")
    else:
        for mine, their in zip(params, expected, strict=True):
            for part, a, b in (("name", mine[0], their[0]), ("type", mine[1], their[1]),
                               ("default", mine[2], their[2]), ("kind", mine[3], their[3])):
                if a != b:
                    differs.append(part)
    if our_returns != returns:
        differs.append("returns")
    if list(our_type_parameters) != type_parameters:
        differs.append("type_parameters")
    if list(our_decorators) != decorators:
        differs.append("decorators")
    return sorted(set(differs))


def run_compiled(root: Path, step: int, language: str, tally: Tally) -> None:
    """Go's or Java's files of ``root`` against their compiler's parser. A function matches
    the oracle's of its name whose name's line is the first within its lines."""
    files = [p for p, _ in source_files(root, step, (language,))]
    if not files:
        return
    oracle = _compiled_oracle()
    declared = (oracle.go_functions if language == "go" else oracle.java_methods)(files)
    compare = compare_go if language == "go" else compare_java
    tally.oracle_only = tally.oracle_only or []
    for path in files:
        rows = declared.get(str(path), [])
        if any("error" in row for row in rows):
            tally.oracle_failed += 1
            continue
        tally.files += 1
        by_name: dict[str, list[dict]] = {}
        for row in sorted(rows, key=lambda r: r["line"]):
            by_name.setdefault(row["name"], []).append(row)
        rel = path.relative_to(root).as_posix()
        unmatched = {id(row): row for row in rows}
        for d in extract(path.as_posix(), path.read_bytes(), language).defs:
            if d.kind != "Function" or not d.signature_data:
                continue
            tally.ours += 1
            their = next((r for r in by_name.get(d.name, ())
                          if d.start_line <= r["line"] <= d.end_line), None)
            if their is None:
                continue
            tally.matched += 1
            unmatched.pop(id(their), None)
            differs = compare(d.signature_data, their)
            _count(tally, differs, d.signature_data, rel, their["line"], d.name,
                   lambda t=their: t)
        tally.oracle_only += [(rel, row["line"], row["name"]) for row in unmatched.values()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.signatures", description=__doc__)
    parser.add_argument("corpus", nargs="*", type=Path,
                        default=[Path(os.environ.get("KNOXIDX_CORPUS", DEFAULT_CORPUS))])
    parser.add_argument("--step", type=int, default=1, help="read every N-th file")
    parser.add_argument("--show", type=int, default=0, help="differing functions to print")
    parser.add_argument("--json", action="store_true", help="the table as JSON")
    parser.add_argument("--save", type=Path, help="also write the table as JSON to this file")
    args = parser.parse_args(argv)
    tallies: dict[str, Tally] = {}
    for corpus in args.corpus:
        if not corpus.is_dir():
            print(f"no corpus at {corpus}: fetch it with ../shared/corpus/get-corpus.sh",
                  file=sys.stderr)
            return 2
        run_python(corpus, max(1, args.step), tallies.setdefault("python", Tally()))
        run_ts(corpus, max(1, args.step), tallies)
        for language in COMPILED_LANGUAGES:
            run_compiled(corpus, max(1, args.step), language,
                         tallies.setdefault(language, Tally()))
    table = {lang: t.row() for lang, t in sorted(tallies.items()) if t.files}
    if args.save:
        args.save.write_text(json.dumps({
            "command": "python -m bench.signatures " + " ".join(sys.argv[1:] if argv is None
                                                               else argv),
            "corpora": [c.name for c in args.corpus], "languages": table}, indent=1) + "\n")
    if args.json:
        print(json.dumps(table, indent=1))
    else:
        print("| language | oracle | files (oracle failed) | knoxidx functions | matched "
              "| exactly the oracle's | differing parts |")
        print("|---|---|---:|---:|---:|---:|---|")
        for lang, row in table.items():
            oracle = ORACLE_NAMES.get(lang, "tsc")
            parts = ", ".join(f"{k} {v}" for k, v in row["differing_parts"].items()) or "-"
            print(f"| {lang} | {oracle} | {row['files']} ({row['oracle_failed']}) "
                  f"| {row['knoxidx_functions']} | {row['matched_share']:.1%} "
                  f"| {row['exact_share']:.2%} | {parts} |")
    for lang, tally in sorted(tallies.items()):
        for rel, line, name, parts, ours, theirs in tally.differing[:args.show]:
            print(f"{lang} {rel}:{line} {name} [{parts}]\n  knoxidx {ours}\n  oracle  {theirs}")
        if tally.oracle_only:
            print(f"{lang}: {len(tally.oracle_only)} of the oracle's functions are none of "
                  "knoxidx's" + "".join(f"\n  {rel}:{line} {name}"
                                        for rel, line, name in tally.oracle_only[:args.show]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
