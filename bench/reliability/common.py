"""Pieces the scenarios share: running the CLI as a child process, comparing an index with a
clean rebuild, judging an error message."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knoxidx.graph.export import Canonical

CORPUS = Path(os.environ.get("KNOXIDX_CORPUS", Path.home() / ".cache" / "knoxidx-corpus"))
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# The scenarios judge the graph and lexical search: `knoxidx index` and watchers leave the
# chunks pending, as they did before embedding was part of indexing (the model's CPU would
# otherwise be in every figure).
os.environ.setdefault("KNOXIDX_EMBED", "0")


def knoxidx_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from knoxidx.cli import run; run()", *args]


def run_cli(*args: str, prefix: Sequence[str] = (), preexec: Callable[[], None] | None = None,
            timeout: float = 600, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, *knoxidx_command(*args)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=preexec,
                          env={**os.environ, **(env or {})}, check=False)


@dataclass(slots=True)
class Outcome:
    """What a scenario saw: ``trials`` runs, the ones that went wrong described in
    ``failures`` (empty: data lost 0, every error clear), and measurements in ``figures``."""

    name: str
    trials: int = 0
    failures: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures and self.trials > 0

    def fail(self, message: str) -> None:
        self.failures.append(message)


def clear_error(proc: subprocess.CompletedProcess[str], exit_code: int | None,
                *needles: str) -> str | None:
    """None if ``proc`` failed the way a user should see: the expected exit code, stderr one
    line starting ``error:`` that contains every needle, no traceback; else what was wrong."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    if "Traceback" in proc.stderr:
        return f"traceback (rc={proc.returncode}): {proc.stderr[-600:]}"
    if exit_code is not None and proc.returncode != exit_code:
        return f"exit code {proc.returncode}, expected {exit_code}; stderr: {proc.stderr[-400:]}"
    if proc.returncode == 0:
        return "succeeded, expected an error"
    if len(errors) != 1:
        return f"expected one 'error:' line, got {lines[-5:]}"
    missing = [n for n in needles if n not in errors[0]]
    if missing:
        return f"error line lacks {missing}: {errors[0]}"
    return None


def graph_of(root: Path) -> Canonical:
    """The index's nodes, edges and unresolved calls, order-free
    (``knoxidx.graph.export.canonical``)."""
    from knoxidx.core.errors import IndexNotFoundError
    from knoxidx.graph import export
    from knoxidx.index import Index

    try:
        idx = Index.open_reader(root)
    except IndexNotFoundError:  # none yet, or a first build that never committed
        return export.EMPTY
    with idx:
        return export.canonical(idx.q)


def verify(root: Path) -> dict[str, Any]:
    """``knoxidx verify``'s check: integrity, and equality with a clean rebuild."""
    from knoxidx.index import Index
    from knoxidx.update.verify import verify_index

    with Index.open(root) as idx:
        return verify_index(idx)


def copy_tree(source: Path, target: Path) -> Path:
    """A private copy of a corpus (mtimes kept, no index), so the shared one is never written."""
    shutil.copytree(source, target, symlinks=True, copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns(".knoxidx"))
    return target
