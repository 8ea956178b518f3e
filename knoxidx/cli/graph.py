"""``knoxidx symbols``, ``callers``, ``callees``, ``impact``, ``refs`` and ``deps``: the graph's
questions, registered on :data:`knoxidx.cli.main` when ``knoxidx.cli`` is imported. Thin:
parse, call :class:`knoxidx.index.Index`, print."""

from __future__ import annotations

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
from knoxidx.cli.output import emit, location, print_more, site_of
from knoxidx.core.limits import MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_TYPE_CHARS
from knoxidx.core.paging import MAX_OFFSET
from knoxidx.core.terminal import visible


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
