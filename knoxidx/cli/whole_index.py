"""``knoxidx stats``, ``verify`` and ``export``: the index as a whole, counted, checked against
a clean rebuild, or written out. Registered on :data:`knoxidx.cli.main` when ``knoxidx.cli``
is imported."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click

from knoxidx.cli.group import main
from knoxidx.cli.options import json_option, open_index, path_argument, store_options
from knoxidx.cli.output import emit
from knoxidx.core.errors import BadPathError, KnoxidxError
from knoxidx.core.terminal import visible


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
