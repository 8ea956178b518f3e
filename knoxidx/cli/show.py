"""``knoxidx show``: registered on :data:`knoxidx.cli.main` when ``knoxidx.cli`` is imported.
Thin: parse, call :meth:`knoxidx.index.Index.describe`, print."""

from __future__ import annotations

from typing import Any

import click

from knoxidx.answers.entity import DEFAULT_RELATED, MAX_RELATED, RELATIONS
from knoxidx.cli.group import main
from knoxidx.cli.options import (
    Text,
    WholeRange,
    json_option,
    open_index,
    path_argument,
    store_options,
)
from knoxidx.cli.output import counted, emit, location, site_of
from knoxidx.core.limits import MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_PLACE_CHARS


@main.command("show")
@click.argument("symbol", type=Text(MAX_NAME_CHARS))
@path_argument
@click.option("--limit", type=WholeRange(1, MAX_RELATED), default=DEFAULT_RELATED,
              show_default=True, help="At most this many definitions per relation (calls, "
                                      "called by, ...); the totals count all of them.")
@json_option
@store_options
def show_cmd(symbol: str, path: str, limit: int, as_json: bool) -> None:
    """Everything about SYMBOL (a name, qualified name or path:line) in one answer: kind,
    location, signature, doc, complexity, where it sits, calls and callers, types it uses
    and their users, supertypes and subtypes, and its git history."""
    with open_index(path) as idx:
        data = idx.describe(symbol, limit=limit)
    emit(data, as_json, _print_entity)


def _print_entity(d: dict) -> None:
    span = f"-{d['end_line']}" if d.get("end_line") and d["end_line"] != d.get("start_line") \
        else ""
    click.echo(f"{d['kind']} {d['qualified_name']}  {location(d)}{span}".rstrip())
    for text in (d.get("signature"), d.get("doc")):
        if text:
            click.echo(f"  {text}")
    _print_signature_parts(d)
    complexity = d.get("complexity")
    if complexity:
        click.echo(f"complexity: cyclomatic {complexity['cyclomatic']}, nesting "
                   f"{complexity['nesting']}, {complexity['loc']} loc")
    places = []
    if d.get("enclosing"):
        places.append(f"{d['enclosing']['kind']} {d['enclosing']['qualified_name']} "
                      f"({location(d['enclosing'])})")
    if d.get("module"):
        places.append(f"module {d['module']['qualified_name']}")
    if d.get("file"):
        places.append(f"file {d['file']['path']}")
    if places:
        click.echo("in: " + "; ".join(places))
    if d.get("members_total"):
        hits = d["members"]
        shown = f" (first {len(hits)})" if len(hits) < d["members_total"] else ""
        click.echo(f"members: {d['members_total']}{shown}")
        for h in hits:
            click.echo(f"  {h['qualified_name']} ({h['kind']})  {location(h)}  "
                       f"{h['signature']}".rstrip())
    for name, _, _ in RELATIONS:
        total, hits = d[f"{name}_total"], d[name]
        if not total:
            continue
        shown = f" (first {len(hits)})" if len(hits) < total else ""
        click.echo(f"{name.replace('_', ' ')}: {total}{shown}")
        for h in hits:
            sites = f" +{h['sites'] - 1} more sites" if h["sites"] > 1 else ""
            click.echo(f"  {h['qualified_name']} ({h['kind']})  {site_of(h)}{sites}  "
                       f"[{h['confidence']}]")
    _print_evolution(d)


def _print_signature_parts(d: dict) -> None:
    """A function's parameters (one ``name: type = default`` line each), return type, type
    parameters and decorators, where extraction gives them."""
    parameters = d.get("parameters")
    if parameters:
        click.echo("parameters:")
        for p in parameters:
            line = str(p.get("name") or "?")
            if p.get("type"):
                line += f": {p['type']}"
            if p.get("default") is not None:
                line += f" = {p['default']}"
            if p.get("kind") and p["kind"] != "positional":
                line += f"  ({p['kind']})"
            click.echo(f"  {line}")
    if d.get("returns"):
        click.echo(f"-> {d['returns']}")
    for key, title in (("type_parameters", "type parameters"), ("decorators", "decorators")):
        if d.get(key):
            click.echo(f"{title}: " + ", ".join(_named(item) for item in d[key]))


def _named(item: Any) -> str:
    if isinstance(item, dict):
        return str(item.get("name") or item)
    return str(item)


def _print_evolution(d: dict) -> None:
    evolution = d.get("evolution")
    if evolution is None:
        click.echo(f"evolution: none ({d.get('evolution_unavailable', 'no history')})")
        return
    created = evolution["created"]
    origin = (f"created {created['commit'][:10]} {created['date'][:10]} {created['author']}"
              if created else "not committed yet")
    last = evolution["last_modified"]
    click.echo(f"evolution: {origin}; {counted(evolution['modifications'], 'modification')} "
               f"by {counted(evolution['authors'], 'author')}"
               + (f", last {last[:10]}" if last else "")
               + f"; churn {evolution['churn']}; hotspot {evolution['hotspot']}"
               " (the history's last 90 days)")


@main.command("goto")
@click.argument("place", type=Text(MAX_PLACE_CHARS))
@path_argument
@click.option("--name", type=Text(MAX_NAME_CHARS), default=None,
              help="Only the references of this name on the line.")
@json_option
@store_options
def goto_cmd(place: str, path: str, name: str | None, as_json: bool) -> None:
    """Go to definition: what the code at PLACE (PATH:LINE) refers to, each call, type,
    value, base and import on the line with the definitions the graph resolved it to, or
    why it has none."""
    with open_index(path) as idx:
        data = idx.goto(place, name)

    def human(d: dict) -> None:
        enclosing = d["enclosing"]
        inside = f" (in {enclosing['kind']} {enclosing['qualified_name']})" if enclosing else ""
        click.echo(f"{d['path']}:{d['line']}{inside}")
        for ref in d["references"]:
            _print_targets(f"  {ref['written']}  col {ref['column']}  {ref['kind']}",
                           ref["definitions"], f"unresolved: {ref.get('unresolved')}", True)
        for imp in d["imports"]:
            bound = f" {imp['name']}" if imp["name"] else ""
            _print_targets(f"  import {imp['module']}{bound}", imp["definitions"],
                           "not in the repository", False)
        for other in d["other_edges"]:
            click.echo(f"  {other['via']} -> {other['kind']} {other['qualified_name']}  "
                       f"{location(other) or '-'}")
        if not (d["references"] or d["imports"] or d["other_edges"]):
            click.echo("  no references on this line")

    emit(data, as_json, human)


@main.command("map")
@path_argument
@click.option("--max-tokens", type=WholeRange(64, 200_000), default=1024, show_default=True,
              help="The map's token budget.")
@click.option("--path", "path_glob", type=Text(MAX_PATH_CHARS), default=None,
              help="Map only files matching this glob ('*' crosses '/'), or this directory.")
@json_option
@store_options
def map_cmd(path: str, max_tokens: int, path_glob: str | None, as_json: bool) -> None:
    """A map of the repository: its most central functions, classes, interfaces and types
    (PageRank over calls and imports, tests lower) whose signatures fit the budget, file by
    file, each with the line it starts on."""
    with open_index(path) as idx:
        data = idx.repo_map(max_tokens, path_glob)

    def human(d: dict) -> None:
        click.echo(d["text"], nl=False)
        click.echo(f"({d['shown']} of {d['total']} definitions, {d['tokens']} of "
                   f"{d['max_tokens']} tokens)")

    emit(data, as_json, human)


def _print_targets(head: str, targets: list[dict], missing: str, confidence: bool) -> None:
    """A goto line: what ``head`` names, one line per definition it resolves to."""
    if not targets:
        click.echo(f"{head}  -> {missing}")
    for target in targets:
        where = location(target) or ("-" if confidence else "external")
        tail = f"  [{target['confidence']}]" if confidence else ""
        click.echo(f"{head}  -> {target['kind']} {target['qualified_name']}  {where}{tail}")
