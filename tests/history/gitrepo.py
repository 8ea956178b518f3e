"""Real git repositories made by tests: commits with fixed authors and dates, so that every
answer can be checked exactly."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}


def git(root: Path, *args: str, author: str = "Ada", when: int = 1_700_000_000) -> str:
    env = {**os.environ, **_ENV, "GIT_AUTHOR_NAME": author,
           "GIT_AUTHOR_EMAIL": f"{author.lower()}@example.com", "GIT_COMMITTER_NAME": author,
           "GIT_COMMITTER_EMAIL": f"{author.lower()}@example.com",
           "GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000"}
    done = subprocess.run(["git", "-C", str(root), *args], env=env, capture_output=True,
                          text=True, check=True)
    return done.stdout


class Repo:
    """A work tree with ``git init`` done; :meth:`commit` writes files and commits them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
        self.clock = 1_700_000_000

    def commit(self, message: str, files: dict[str, str | None], author: str = "Ada") -> str:
        for rel, text in files.items():
            path = self.root / rel
            if text is None:
                git(self.root, "rm", "-q", rel)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
            git(self.root, "add", rel)
        self.clock += 86_400
        git(self.root, "commit", "-q", "--allow-empty", "-m", message, author=author,
            when=self.clock)
        return git(self.root, "rev-parse", "HEAD").strip()

    def log_l(self, start: int, end: int, path: str) -> list[str]:
        """The oracle: ``git log -L`` over HEAD's first-parent history."""
        return git(self.root, "log", "-L", f"{start},{end}:{path}", "--first-parent",
                   "--format=%H", "-s").split()
