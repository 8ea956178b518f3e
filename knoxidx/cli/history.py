"""``knoxidx history`` and ``knoxidx hotspots``: registered on :data:`knoxidx.cli.main` when
``knoxidx.cli`` is imported. Thin: parse, call :class:`knoxidx.index.Index`, print."""

from __future__ import annotations

import re

import click

from knoxidx.cli.group import main
from knoxidx.cli.options import (
    Text,
    WholeRange,
    json_option,
    open_index,
    page_kwargs,
    page_options,
    path_argument,
    store_options,
)
from knoxidx.cli.output import counted, emit, location, print_more, site_of
from knoxidx.core.limits import MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_REVISION_CHARS
from knoxidx.core.model import NODE_KINDS
from knoxidx.core.paging import MAX_LIMIT, MAX_OFFSET

_DAYS = re.compile(r"([0-9]+) *d?")  # ASCII digits: int() also reads '٣' and '1_000'


def _since_days(text: str) -> int | None:
    """``90d`` or ``90``: days; ``all``: the whole history (None)."""
    if text.strip().lower() == "all":
        return None
    found = _DAYS.fullmatch(text.strip().lower())
    if not found:
        raise click.BadParameter(f"{text!r} is not a number of days like 90d, or 'all'")
    return int(found.group(1))


@main.command("history")
@click.argument("symbol", type=Text(MAX_NAME_CHARS))
@path_argument
@click.option("--limit", type=WholeRange(1, MAX_LIMIT), default=20, show_default=True,
              help="At most this many commits.")
@click.option("--offset", type=WholeRange(0, MAX_OFFSET), default=0, show_default=True,
              help="Skip this many commits (newest first).")
@json_option
@store_options
def history_cmd(symbol: str, path: str, limit: int, offset: int, as_json: bool) -> None:
    """How SYMBOL evolved: the commit that created its lines, the commits that changed them
    (first-parent history of HEAD, as `git log -L` follows them), authors, churn, renames."""
    with open_index(path) as idx:
        data = idx.history(symbol, limit=limit, offset=offset)

    def human(d: dict) -> None:
        s, t = d["symbol"], d["totals"]
        click.echo(f"{s['kind']} {s['qualified_name']}  {s['path']}:{s['start_line']}")
        created = d["created"]
        if created:
            click.echo(f"created   {created['commit'][:10]} {created['date'][:10]} "
                       f"{created['author']}: {created['subject']}"
                       + ("  (shallow clone: may be older)" if d["shallow"] else ""))
        if d["renamed_from"]:
            click.echo("renamed from " + ", ".join(d["renamed_from"]))
        if not created and not t["changes"]:
            click.echo("no commit yet: no commit the index has read holds its lines")
        if t["changes"]:
            click.echo(f"{counted(t['changes'], 'commit')} ({t['modifications']} after "
                       f"creation) by {counted(t['authors'], 'author')}, "
                       f"{t['first_change'][:10]} .. "
                       f"{t['last_change'][:10]}, churn {t['churn']} lines")
        for c in d["changes"]:
            click.echo(f"  {c['commit'][:10]} {c['date'][:10]} +{c['added']:<4} -{c['removed']:<4} "
                       f"{c['author']}: {c['subject']}")
        print_more(d, narrowed_by="")  # a definition's commits: no --kind, no --path

    emit(data, as_json, human)


@main.command("hotspots")
@path_argument
@click.option("--since", default="90d", show_default=True,
              help="The window: days before the newest commit (90d), or 'all'.")
@click.option("--kind", type=click.Choice(NODE_KINDS, case_sensitive=False), default=None,
              help="Only definitions of this kind (default: functions, classes, interfaces, "
                   "types).")
@click.option("--path", "path_glob", type=Text(MAX_PATH_CHARS), default=None, metavar="GLOB",
              help="Only files matching GLOB ('*' crosses '/'), or under this directory.")
@click.option("--limit", type=WholeRange(1, MAX_LIMIT), default=20, show_default=True)
@click.option("--offset", type=WholeRange(0, MAX_OFFSET), default=0, show_default=True)
@json_option
@store_options
def hotspots_cmd(path: str, since: str, kind: str | None, path_glob: str | None, limit: int,
                 offset: int, as_json: bool) -> None:
    """The definitions and files that change most, weighted by what a change risks:
    score = changes in the window x log2(1 + weight), weight = cyclomatic x loc for a
    function, lines for a class, interface, type or file."""
    with open_index(path) as idx:
        data = idx.hotspots(path=path_glob, since_days=_since_days(since), kind=kind,
                            limit=limit, offset=offset)

    def human(d: dict) -> None:
        window = d["window"]
        click.echo(f"{d['formula']}; window: "
                   + (f"{window['since_days']} days from {window['from'][:10]}"
                      if window["since_days"] is not None else "all history"))
        click.echo(f"{'score':>8} {'changes':>7} {'weight':>7} {'cc':>4} {'loc':>5} "
                   f"{'lines':>6} {'authors':>7}  definition")
        for h in d["definitions"]:
            cyclomatic = "-" if h["cyclomatic"] is None else h["cyclomatic"]
            loc = "-" if h["loc"] is None else h["loc"]
            click.echo(f"{h['score']:>8.1f} {h['changes']:>7} {h['weight']:>7} {cyclomatic:>4} "
                       f"{loc:>5} {h['lines']:>6} {h['authors']:>7}  {h['kind']} "
                       f"{h['qualified_name']}  {h['path']}:{h['start_line']}")
        if not d["definitions"]:
            click.echo("  (no definition changed in the window)")
        click.echo(f"{'score':>8} {'changes':>7} {'weight':>7} {'':>4} {'':>5} {'lines':>6}"
                   f" {'':>7}  file")
        for f in d["files"]:
            click.echo(f"{f['score']:>8.1f} {f['changes']:>7} {f['weight']:>7} {'':>4} {'':>5} "
                       f"{f['lines']:>6} {'':>7}  {f['path']}")
        print_more(d)

    emit(data, as_json, human)


@main.command("changes")
@path_argument
@click.option("--base", type=Text(MAX_REVISION_CHARS), default="HEAD", show_default=True,
              help="The commit to compare the work tree with (a hash, branch, tag, HEAD~1).")
@click.option("--depth", type=WholeRange(1, 10), default=3, show_default=True,
              help="Hops of callers, users, subclasses and importers to follow.")
@json_option
@page_options
@store_options
def changes_cmd(path: str, base: str, depth: int, as_json: bool, limit: int, offset: int,
                kind: str | None, path_glob: str | None) -> None:
    """What the work tree changed since BASE (definitions modified, added and removed, as
    indexed: run `knoxidx index` or `watch` first) and what it may break: their transitive
    callers, users, subclasses and importers, and the tests among them."""
    with open_index(path) as idx:
        data = idx.changes(base, depth=depth, **page_kwargs(limit, offset, kind, path_glob))

    def human(d: dict) -> None:
        if d["stale"]:
            click.echo(f"warning: {counted(len(d['stale']), 'file')} changed since the last "
                       f"`knoxidx index` ({d['stale'][0]}...): lines may be off",
                       err=True)
        changed = d["changed"] + d["removed"]
        click.echo(f"since {d['base']['revision']} ({d['base']['commit'][:10]}): "
                   f"{counted(d['files_total'], 'file')}, "
                   f"{counted(d['changed_total'] + d['removed_total'], 'definition')} changed")
        for c in changed:
            lines = f"+{c.get('lines_added', 0)} -{c.get('lines_removed', 0)}"
            where = location(c) + (" (base)" if c["change"] == "removed" else "")
            click.echo(f"  {c['change']:<8} {c['kind']:<9} {c['qualified_name']}  {where}  "
                       f"{lines}")
            if c["change"] == "removed" and c["still_called_total"]:
                sites = ", ".join(f"{s['path']}:{s['line']}"
                                  for s in c["still_called"][:3])
                click.echo(f"           still called at {c['still_called_total']} sites: "
                           f"{sites}")
        if len(changed) < d["changed_total"] + d["removed_total"]:
            click.echo(f"  ... (--json lists the first {len(d['changed'])} changed and "
                       f"{len(d['removed'])} removed)")
        click.echo(f"may break: {counted(d['total'], 'definition')} in "
                   f"{counted(d['file_count'], 'file')}")
        for h in d["impacted"]:
            indent = "  " * h.get("depth", 1)
            click.echo(f"{indent}{h['qualified_name']} ({h['kind']})  {site_of(h)}  "
                       f"[{h['via']}]")
        if d["test_count"]:
            click.echo(f"tests reached: {d['test_count']} in "
                       f"{counted(len(d['test_files']), 'file')}: "
                       + ", ".join(p for p in d["test_files"][:10])
                       + (" ..." if len(d["test_files"]) > 10 else ""))
        print_more(d)

    emit(data, as_json, human)
