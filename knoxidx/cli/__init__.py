"""The ``knoxidx`` command: parse arguments, call :class:`knoxidx.index.Index`, print.

Human output is plain aligned text (rich only draws the progress bar, and is imported only
then); ``--json`` prints exactly what the library returns. Errors are one line on stderr and a
non-zero exit code, never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click

from knoxidx.cli.group import main
from knoxidx.cli.options import (
    Text,
    WholeRange,
    json_option,
    offline_option,
    open_index,
    page_kwargs,
    page_options,
    path_argument,
    shared_url,
    store_options,
)
from knoxidx.cli.output import (
    counted,
    emit,
    location,
    print_more,
    progress_bar,
    report_error,
    site_of,
)
from knoxidx.core.errors import BadPathError, KnoxidxError
from knoxidx.core.limits import MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_TYPE_CHARS
from knoxidx.core.paging import MAX_OFFSET
from knoxidx.core.terminal import for_terminal, visible

# Set by a command that has closed every file, connection and process it opened: the console
# script then ends its process at once, without Python's teardown, which frees every object one
# by one (after a first build of the benchmark corpus, ~40 ms on one core: the facts, tables
# and caches of the update). Never run(): a caller of it in its own process goes on after it.
_closed_everything = False


def _described(item: dict) -> str:
    """``Kind, path:line`` (``Kind`` alone where there is no place)."""
    loc = location(item)
    return f"{item['kind']}, {loc}" if loc else str(item["kind"])


def _print_hits(title: str, symbol: dict, hits: list[dict],
                external: list[dict] | None = None, total: int | None = None) -> None:
    count = len(hits) if total is None else total
    click.echo(f"{title} {symbol['qualified_name']} ({_described(symbol)}): {count}")
    for h in hits:
        indent = "  " * h.get("depth", 1)
        click.echo(f"{indent}{h['qualified_name']} ({h['kind']})  {site_of(h)}  "
                   f"[{h['confidence']}]")
    if external:  # a shared store: calls from other repositories, matched by module name
        click.echo(f"from other repositories (by module name): {len(external)}")
        for e in external:
            click.echo(f"  {e['repo']}: {e['qualified_name'] or e['path']}  "
                       f"{e['path']}:{e['line']}  [{e['called_as']}]")


@main.command("index")
@path_argument
@click.option("--jobs", "-j", type=WholeRange(1, 64), default=None,
              help="Worker processes for parsing (default: CPU count).")
@click.option("--max-file-size", type=WholeRange(1), default=1024 * 1024, show_default=True,
              help="Skip files larger than this many bytes.")
@click.option("--wait", is_flag=True, help="Wait for another writer instead of failing.")
@click.option("--rebuild", is_flag=True, help="Drop the index and build it from scratch.")
@click.option("--embed/--no-embed", default=None,
              help="Embed the new chunks for semantic search once the graph and lexical "
                   "search are saved (default: on; $KNOXIDX_EMBED=0 turns it off). "
                   "Interrupting it keeps every finished batch; the next run resumes.")
@click.option("--graph-only", is_flag=True, help="Skip chunking and search indexes.")
@click.option("--no-history", is_flag=True,
              help="Do not read the git history (and drop a history read before).")
@offline_option
@json_option
@store_options
def index_cmd(path: str, jobs: int | None, max_file_size: int, wait: bool, rebuild: bool,
              embed: bool | None, graph_only: bool, no_history: bool, as_json: bool) -> None:
    """Build or update the index of PATH (default: current directory), then embed its new
    chunks with the configured embedder (see --no-embed)."""
    if rebuild and shared_url() is None:
        _drop_corrupt_index(Path(path))
    with open_index(path, create=True) as idx:
        if idx.store.rebuilt_reason and not as_json:
            click.echo(visible(idx.store.rebuilt_reason), err=True)
        extraction = idx.extraction()
        if extraction["stale"] and not as_json and not rebuild:
            from knoxidx.update.graph_update import EXTRACTION_CHANGED

            click.echo(f"{EXTRACTION_CHANGED}: re-reading all {extraction['files']} files",
                       err=True)
        progress, finish = progress_bar(enabled=not as_json and sys.stderr.isatty())
        try:
            report = idx.update(jobs=jobs, max_bytes=max_file_size, progress=progress, wait=wait,
                                retrieval=not graph_only, embed=False, rebuild=rebuild,
                                history=not no_history)
        finally:
            finish()
        data = {"root": str(idx.root), **report.as_dict()}
        if graph_only or not _embed_wanted(embed):
            emit(data, as_json, _print_report)
        else:
            if not as_json:  # the graph and lexical search are usable from here on
                _print_report(for_terminal(data), embedding_next=True)
            from knoxidx.cli.embed import embed_after_index

            embed_after_index(idx, data, wait=wait, as_json=as_json, asked=bool(embed))
            if as_json:
                emit(data, as_json, _print_report)
    _may_leave_at_once()


def _embed_wanted(flag: bool | None) -> bool:
    """--embed / --no-embed, else $KNOXIDX_EMBED (0, false, no, off: no), else yes."""
    if flag is not None:
        return flag
    from knoxidx.core.config import EMBED_ENV, falsy

    return not falsy(os.environ.get(EMBED_ENV))


def _drop_corrupt_index(path: Path) -> None:
    """--rebuild of a database SQLite cannot open: remove its files (a readable one is reset
    under the writer lock instead, so a running watcher's index is never pulled away)."""
    from knoxidx.core.errors import CorruptIndexError
    from knoxidx.graph.sqlite_schema import DB_NAME, INDEX_DIR
    from knoxidx.graph.store import SQLiteStore

    try:
        store = SQLiteStore.open(path.resolve(), create=False)
        try:
            store.quick_check()  # damage inside the b-trees: dropping tables may fail too
        finally:
            store.close()
    except CorruptIndexError:
        for suffix in ("", "-wal", "-shm"):
            target = path / INDEX_DIR / (DB_NAME + suffix)
            if target.exists():
                target.unlink()
    except KnoxidxError:
        pass


def _print_report(data: dict, embedding_next: bool = False) -> None:
    t = data["timings"]
    click.echo(
        f"indexed {data['root']}: {counted(data['files'], 'file')}, {data['changed']} changed "
        f"({data['added']} new), {data['removed']} removed, {data['resolved']} re-resolved "
        f"in {t.get('total', 0):.2f}s"
    )
    if data["skipped"]:
        click.echo("skipped: " + ", ".join(f"{v} {k}" for k, v in sorted(data["skipped"].items()))
                   + (" (`[index] minified = true` in knoxidx.toml indexes minified files)"
                      if "minified" in data["skipped"] else ""))
    r = data.get("retrieval") or {}
    if r:
        click.echo(
            f"search: {counted(r.get('chunks', 0), 'chunk')} ({r.get('added', 0)} new, "
            f"{r.get('removed', 0)} removed), {r.get('pending', 0)} to embed"
            f"{'' if embedding_next else ' (`knoxidx embed`)'}, in {r.get('seconds', 0):.2f}s"
        )
    h = data.get("history") or {}
    if h.get("available"):
        click.echo(f"history: {counted(h['commits'], 'commit')} ({h['commits_read']} read, "
                   f"{h['mode']})"
                   f"{', shallow clone' if h.get('shallow') else ''} in {h['seconds']:.2f}s")
    elif h:
        click.echo(h["reason"])
    for line in data["warnings"][:20]:
        click.echo(f"warning: {line}", err=True)
    if len(data["warnings"]) > 20:
        click.echo(f"warning: ... and {len(data['warnings']) - 20} more (see --json)", err=True)
    for line in data["errors"][:20]:
        click.echo(f"error: {line}", err=True)


@main.command()
@click.argument("name", type=Text(MAX_NAME_CHARS))
@path_argument
@page_options
@click.option("--min-complexity", type=WholeRange(1, MAX_OFFSET), default=None,
              help="Only functions of at least this cyclomatic complexity, most complex first.")
@click.option("--returns", "returns", metavar="TYPE", type=Text(MAX_TYPE_CHARS), default=None,
              help="Only functions whose declared return type names TYPE ('Request' matches "
                   "Optional[Request], Promise<Request>, *http.Request).")
@click.option("--param-type", metavar="TYPE", type=Text(MAX_TYPE_CHARS), default=None,
              help="Only functions with a parameter whose declared type names TYPE (the same "
                   "rule; a receiver or self is no parameter).")
@json_option
@store_options
def symbols(name: str, path: str, limit: int, offset: int, kind: str | None,
            path_glob: str | None, min_complexity: int | None, returns: str | None,
            param_type: str | None, as_json: bool) -> None:
    """Find definitions named NAME (exact, qualified suffix, then prefix; with * or ?, a
    wildcard pattern: 'parse*', '*Error'). `knoxidx symbols '*' --min-complexity 15`: the
    most complex functions; `knoxidx symbols '*' --param-type Request`: the functions taking
    a Request."""
    page = page_kwargs(limit, offset, kind, path_glob)
    with open_index(path) as idx:
        data = idx.find_symbols(name, page.pop("kind"), min_complexity=min_complexity,
                                returns=returns, param_type=param_type, **page)

    def human(d: dict) -> None:
        for r in d["symbols"]:
            complexity = r.get("complexity")
            measured = (f"  complexity {complexity['cyclomatic']}, nesting "
                        f"{complexity['nesting']}, {complexity['loc']} loc"
                        if complexity and min_complexity is not None else "")
            click.echo(f"{r['kind']:<9} {r['qualified_name']}  {location(r)}{measured}".rstrip())
        if not d["total"]:
            click.echo(f"no symbols match {visible(repr(name))}")
        print_more(d)

    emit(data, as_json, human)


def _graph_command(name: str, method: str, title: str, key: str, help_text: str,
                   with_depth: bool) -> None:
    @main.command(name, help=help_text)
    @click.argument("symbol", type=Text(MAX_NAME_CHARS))
    @path_argument
    @json_option
    @click.option("--depth", type=WholeRange(1, 10), default=1 if name != "impact" else 3,
                  show_default=True, hidden=not with_depth)
    @page_options
    @store_options
    def command(symbol: str, path: str, as_json: bool, depth: int, limit: int, offset: int,
                kind: str | None, path_glob: str | None) -> None:
        with open_index(path) as idx:
            data = getattr(idx, method)(symbol, depth=depth,
                                        **page_kwargs(limit, offset, kind, path_glob))

        def human(d: dict) -> None:
            _print_hits(title, d["symbol"], d[key], d.get("external_callers"), d["total"])
            if d.get("file_count", 0) > len(d.get("files", ())):
                click.echo(f"(in {d['file_count']} files; --json lists the first "
                           f"{len(d['files'])})")
            print_more(d)

        emit(data, as_json, human)


_graph_command("callers", "callers", "callers of", "callers",
               "Who calls SYMBOL (a name, qualified name or path:line), with call sites.", True)
_graph_command("callees", "callees", "callees of", "callees",
               "What SYMBOL calls.", True)
_graph_command("impact", "impact", "impact of changing", "impacted",
               "Transitive callers, users, subclasses and importers of SYMBOL.", True)


@main.command()
@click.argument("symbol", type=Text(MAX_NAME_CHARS))
@path_argument
@json_option
@page_options
@store_options
def refs(symbol: str, path: str, as_json: bool, limit: int, offset: int, kind: str | None,
         path_glob: str | None) -> None:
    """Every incoming edge of SYMBOL, grouped by type (CalledBy, UsedBy, ...)."""
    with open_index(path) as idx:
        data = idx.refs(symbol, **page_kwargs(limit, offset, kind, path_glob))

    def human(d: dict) -> None:
        s = d["symbol"]
        click.echo(f"{s['qualified_name']} ({_described(s)})")
        for via, hits in sorted(d["incoming"].items()):
            click.echo(f"  {via}: {d['counts'][via]}")
            for h in hits:
                click.echo(f"    {h['qualified_name']} ({h['kind']})  {site_of(h)}  "
                           f"[{h['confidence']}]")
        if d["possible_total"]:
            shown = len(d["possible"])
            more = f", first {shown} shown" if shown < d["possible_total"] else ""
            click.echo(f"  possible, not counted above (unresolved calls of a matching name"
                       f"{more}): {d['possible_total']}")
            for h in d["possible"]:
                click.echo(f"    {h['qualified_name']} ({h['kind']})  {site_of(h)}  "
                           f"{h['called_as']}()  [{h['reason']}]")
        print_more(d)

    emit(data, as_json, human)


@main.command()
@click.argument("target", type=Text(MAX_PATH_CHARS))
@path_argument
@click.option("--reverse", is_flag=True, help="Who depends on TARGET instead.")
@click.option("--depth", type=WholeRange(1, 10), default=1, show_default=True)
@json_option
@page_options
@store_options
def deps(target: str, path: str, reverse: bool, depth: int, as_json: bool, limit: int,
         offset: int, kind: str | None, path_glob: str | None) -> None:
    """Imports of a FILE (repo-relative path) or MODULE; --reverse for its importers."""
    with open_index(path) as idx:
        data = idx.deps(target, reverse=reverse, depth=depth,
                        **page_kwargs(limit, offset, kind, path_glob))
    title = "importers of" if reverse else "dependencies of"

    def human(d: dict) -> None:
        _print_hits(title, d["symbol"], d["dependencies"], total=d["total"])
        print_more(d)

    emit(data, as_json, human)


def _print_extraction(extraction: dict) -> None:
    if extraction["stale"]:
        stored = visible(str(extraction["stored"] or "unrecorded"))  # the index's word
        click.echo(f"  extraction: {stored}, stale (this knoxidx's is "
                   f"{extraction['current']}): `knoxidx index` reads every file again")
    else:
        click.echo(f"  extraction: {extraction['current']} (this knoxidx's)")


@main.command()
@path_argument
@json_option
@store_options
def stats(path: str, as_json: bool) -> None:
    """Counts of files, nodes and edges in the index, and each embedding model's coverage."""
    with open_index(path) as idx:
        data = idx.stats()
        data["embeddings"] = idx.embedding_coverage()

    def human(d: dict) -> None:
        click.echo(f"index of {d['root']}: {d['lines']} lines")
        for key in ("files", "skipped", "languages", "nodes", "edges", "calls_by_confidence",
                    "unresolved_calls"):
            # (a damaged index can count rows whose kind or type reads back as NULL)
            counts = sorted(d[key].items(), key=lambda kv: str(kv[0]))
            click.echo(f"  {key}: " + (", ".join(f"{k}={v}" for k, v in counts) or "none"))
        embeddings = d["embeddings"]
        if embeddings is not None:
            for model in embeddings["models"]:
                state = "searched" if model["current"] else "kept for a switch back"
                click.echo(f"  embeddings: {model['model']}: {model['chunks']} of "
                           f"{embeddings['chunks']} chunks ({state})")
            if not embeddings["models"]:
                click.echo(f"  embeddings: none of {embeddings['chunks']} chunks")
        _print_extraction(d["extraction"])

    emit(data, as_json, human)


@main.command()
@path_argument
@json_option
@store_options
def verify(path: str, as_json: bool) -> None:
    """Check the index: database integrity, and that it equals a clean rebuild."""
    from knoxidx.update.verify import DIFFERENCES, verify_index

    with open_index(path) as idx:
        data = verify_index(idx)

    def human(d: dict) -> None:
        click.echo(f"integrity: {d['integrity']}")
        click.echo(f"matches a clean rebuild: {d['equal']}")
        if d.get("history"):
            click.echo(f"history matches a read from scratch: {d['history']['equal']}")
        _print_extraction(d["extraction"])
        for key in DIFFERENCES:
            if d[key]:  # (the JSON lists the first 20)
                click.echo(f"  {key}: {d[key + '_count']:,}, the first {min(3, len(d[key]))}: "
                           f"{d[key][:3]}")

    emit(data, as_json, human)
    if not data["equal"] or data["integrity"] != "ok":
        sys.exit(1)


@main.command()
@path_argument
@click.option("--format", "fmt", default="json", show_default=True,
              type=click.Choice(["json", "graphml", "dot"], case_sensitive=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default="-",
              help="File to write (default: stdout).")
@store_options
def export(path: str, fmt: str, output: str) -> None:
    """Write the whole graph as JSON, GraphML or DOT, likely secrets in signatures masked as
    `show` masks them. The JSON gives each definition its `evolution` when the index holds
    the git history."""
    from knoxidx.graph import export as ex
    from knoxidx.retrieval.disclosure import declaration_shown

    with open_index(path) as idx:
        if fmt == "graphml":
            with _export_file(output, "wb") as out:
                ex.write_graphml(idx.q, out, declaration_shown)
        elif fmt == "json":
            evolution = idx.evolution_of_all()
            with _export_file(output, "w") as out:
                ex.write_json(idx.q, out, evolution, declaration_shown)
        else:
            with _export_file(output, "w") as out:
                ex.write_dot(idx.q, out)


@contextmanager
def _export_file(output: str, mode: str) -> Iterator[IO[Any]]:
    """The file ``export`` writes, or stdout for ``-``. A regular file is written beside its
    place and renamed over it once whole, so an export that fails (a full disk, an interrupt)
    leaves the file it would have replaced as it was, and no partial one."""
    encoding = None if "b" in mode else "utf-8"
    target = Path(os.path.realpath(output))  # through a link, as writing to it would
    in_place = output == "-" or (target.exists() and not target.is_file())  # /dev/null, a FIFO
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        out = (click.open_file(output, mode, encoding=encoding) if in_place else
               open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), mode,
                    encoding=encoding))
    except OSError as exc:
        raise BadPathError(f"cannot write {output}: {exc.strerror or exc}") from None
    if in_place:
        with out:
            yield out
        return
    try:
        with out:
            yield out
        os.replace(partial, target)
    except OSError as exc:  # a full disk, a file size limit: one line, and the old file kept
        partial.unlink(missing_ok=True)
        raise KnoxidxError(f"cannot write {output}: {exc.strerror or exc}; "
                           "nothing was changed there") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _may_leave_at_once() -> None:
    global _closed_everything
    _closed_everything = True


def _leave_at_once() -> None:
    """End the process now, its output flushed: what the interpreter's exit would do after
    a command that left nothing open (no atexit handler of ours, no child, no thread)."""
    import logging

    logging.shutdown()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe (`| head`): as Python's own exit reports it
        os._exit(120)
    os._exit(0)


def script() -> None:
    """The ``knoxidx`` console script: :func:`run`, and the process ends as soon as a command
    that closed everything it opened (``index``) has printed its report."""
    run()
    if _closed_everything:
        _leave_at_once()


def run() -> None:
    """The command line in this process: errors as one line and an exit code (SystemExit)."""
    try:
        main(standalone_mode=False)
    except (Exception, KeyboardInterrupt) as exc:
        code = report_error(exc)
        if code is None:
            raise
        sys.exit(code)


# Last, as they add their commands to this module's group: watch/serve/mcp/context,
# history/hotspots, search/embed, show, store/push/pull.
import knoxidx.cli.agent  # noqa: E402, F401
import knoxidx.cli.history  # noqa: E402, F401
import knoxidx.cli.retrieval  # noqa: E402, F401
import knoxidx.cli.show  # noqa: E402, F401
import knoxidx.cli.store  # noqa: E402, F401
