"""The shared store on the command line: ``--store``/``--repo`` on every index command,
``knoxidx store init|status|migrate``, ``knoxidx push`` and ``knoxidx pull``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from knoxidx.cli.group import main
from knoxidx.cli.options import (
    WholeRange,
    json_option,
    path_argument,
)
from knoxidx.cli.output import emit
from knoxidx.core.store_url import STORE_ENV, StoreConfigError, parse_store, redact, repo_id


def _need_url(store: str | None) -> str:
    target = parse_store(store)
    if not target.is_postgres:
        raise StoreConfigError(f"no shared store: pass --store postgresql://... or set {STORE_ENV}")
    return target.url


# ---- knoxidx store ... -------------------------------------------------------------------------

store_url_option = click.option("--store", default=None, metavar="URL",
                                help=f"The PostgreSQL store (default: ${STORE_ENV}).")


@main.group("store")
def store_group() -> None:
    """Create, inspect and upgrade a shared PostgreSQL store."""


@store_group.command("init")
@store_url_option
@click.option("--vector-dim", type=WholeRange(1, 16000), multiple=True, default=(384,),
              show_default=True, help="Make the HNSW index for vectors of this size now (384: "
                                      "the local model; 1024: voyage-code-3). Repeatable.")
@json_option
def store_init(store: str | None, vector_dim: tuple[int, ...], as_json: bool) -> None:
    """Create the knoxidx schema (needs a role allowed to CREATE EXTENSION vector, or the
    extension made beforehand by an administrator)."""
    from knoxidx.graph import pg_schema
    from knoxidx.retrieval.pg_embed_store import ensure_vector_index

    url = _need_url(store)
    conn = pg_schema.connect(url)
    try:
        before = pg_schema.current_version(conn)
        applied = pg_schema.migrate(conn)
        for dim in vector_dim:
            ensure_vector_index(conn, dim)
    finally:
        conn.close()
    data = {"store": redact(url), "version_before": before, "applied": applied,
            "version": pg_schema.SCHEMA_VERSION}
    emit(data, as_json, lambda d: click.echo(
        f"{d['store']}: schema {d['version']}"
        + (f" (applied {', '.join(map(str, d['applied']))})" if d["applied"] else
           " (already there)")))


@store_group.command("migrate")
@store_url_option
@json_option
def store_migrate(store: str | None, as_json: bool) -> None:
    """Apply the schema migrations this knoxidx has and the store lacks."""
    from knoxidx.graph import pg_schema

    url = _need_url(store)
    conn = pg_schema.connect(url)
    try:
        before = pg_schema.current_version(conn)
        if before is None:
            raise StoreConfigError(f"{redact(url)} has no knoxidx schema; run `knoxidx store init`")
        applied = pg_schema.migrate(conn)
    finally:
        conn.close()
    data = {"store": redact(url), "version_before": before, "applied": applied,
            "version": pg_schema.SCHEMA_VERSION}
    emit(data, as_json, lambda d: click.echo(
        f"{d['store']}: schema {d['version_before']} -> {d['version']}"
        if d["applied"] else f"{d['store']}: schema {d['version']}, up to date"))


@store_group.command("status")
@store_url_option
@json_option
def store_status(store: str | None, as_json: bool) -> None:
    """The schema version and each repository's files, nodes, chunks and last update."""
    from knoxidx.graph import pg_schema

    url = _need_url(store)
    conn = pg_schema.connect(url, role="status")
    try:
        version = pg_schema.current_version(conn)
        repos: list[dict[str, Any]] = []
        if version is not None:
            for repo, root, updated in conn.execute(
                    "SELECT repo, root, updated_at FROM knoxidx.repos ORDER BY repo"):
                counts = [conn.execute(f"SELECT count(*) FROM knoxidx.{t} WHERE repo = %s",
                                       (repo,)).fetchone()[0]
                          for t in ("files", "nodes", "edges", "chunk", "chunk_vector")]
                repos.append({"repo": repo, "root": root, "updated_at": updated.isoformat(),
                              **dict(zip(("files", "nodes", "edges", "chunks", "vectors"),
                                         counts, strict=True))})
    finally:
        conn.close()
    data = {"store": redact(url), "schema_version": version,
            "expected_version": pg_schema.SCHEMA_VERSION,
            "up_to_date": version == pg_schema.SCHEMA_VERSION, "repos": repos}

    def human(d: dict) -> None:
        state = "no knoxidx schema (run `knoxidx store init`)" if d["schema_version"] is None \
            else f"schema {d['schema_version']}" + ("" if d["up_to_date"] else
                                                    f" (this knoxidx: {d['expected_version']};"
                                                    " run `knoxidx store migrate`)")
        click.echo(f"{d['store']}: {state}, {len(d['repos'])} repositories")
        for r in d["repos"]:
            click.echo(f"  {r['repo']:<24} {r['files']:>7} files {r['nodes']:>9} nodes "
                       f"{r['chunks']:>8} chunks {r['vectors']:>8} vectors  {r['updated_at']}")

    emit(data, as_json, human)


# ---- push / pull -------------------------------------------------------------------------------


@main.command("push")
@path_argument
@store_url_option
@click.option("--repo", "--repo-id", "repo", default=None, metavar="ID", help="Repository id (default: the directory).")
@click.option("--wait", is_flag=True, help="Wait for another writer of the repository.")
@json_option
def push_cmd(path: str, store: str | None, repo: str | None, wait: bool, as_json: bool) -> None:
    """Upload the local index of PATH to the shared store (replacing that repository)."""
    from knoxidx.update.transfer import push

    root = Path(path).resolve()
    url = _need_url(store)
    rid = repo_id(repo, root)
    counts = push(root, url, rid, wait=wait)
    emit({"repo": rid, "store": redact(url), **counts}, as_json,
          lambda d: click.echo(f"pushed {d['repo']}: {d['files']} files, {d['nodes']} nodes, "
                               f"{d['edges']} edges, {d.get('chunks', 0)} chunks"))


@main.command("pull")
@path_argument
@store_url_option
@click.option("--repo", "--repo-id", "repo", default=None, metavar="ID", help="Repository id (default: the directory).")
@click.option("--wait", is_flag=True, help="Wait for another writer of the local index.")
@json_option
def pull_cmd(path: str, store: str | None, repo: str | None, wait: bool, as_json: bool) -> None:
    """Replace the local index of PATH with the repository's copy in the shared store."""
    from knoxidx.update.transfer import pull

    root = Path(path).resolve()
    url = _need_url(store)
    rid = repo_id(repo, root)
    counts = pull(url, rid, root, wait=wait)
    emit({"repo": rid, "store": redact(url), **counts}, as_json,
          lambda d: click.echo(f"pulled {d['repo']}: {d['files']} files, {d['nodes']} nodes, "
                               f"{d['edges']} edges, {d.get('chunks', 0)} chunks"))
