"""``knoxidx index``: build or update the index of a repository, print what the update did,
then embed the new chunks. Registered on :data:`knoxidx.cli.main` when ``knoxidx.cli`` is
imported."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from knoxidx.cli.group import main
from knoxidx.cli.options import (
    WholeRange,
    json_option,
    offline_option,
    open_index,
    path_argument,
    shared_url,
    store_options,
)
from knoxidx.cli.output import counted, emit, progress_bar
from knoxidx.cli.process_end import may_leave_at_once
from knoxidx.core.errors import KnoxidxError
from knoxidx.core.terminal import for_terminal, visible


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
    may_leave_at_once()


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
