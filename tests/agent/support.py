"""Shared pieces of the agent-side tests: a small repository, real subprocesses, polling."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from mcp import StdioServerParameters

from knoxidx.index import Index
from tests.helpers import write_tree

T = TypeVar("T")

FILES = {
    "app/__init__.py": "",
    "app/config.py": '''\
        """Configuration loading."""
        import json

        from app.util import normalise, read_text

        DEFAULT_PATH = "config.json"


        class Config:
            """Holds the settings."""

            def __init__(self, values):
                self.values = values

            def get(self, key, default=None):
                return self.values.get(key, default)


        def parse_config(path=DEFAULT_PATH):
            """Parse the configuration file at path into a Config."""
            text = read_text(path)
            data = json.loads(normalise(text))
            return Config(data)
        ''',
    "app/util.py": '''\
        def read_text(path):
            """Read a whole file as text."""
            with open(path, encoding="utf-8") as fh:
                return fh.read()


        def normalise(text):
            """Strip surrounding whitespace."""
            return text.strip()
        ''',
    "app/main.py": '''\
        from app.config import parse_config


        def main():
            config = parse_config()
            return config.get("name")


        def run():
            return main()
        ''',
    "tools/other.py": '''\
        def main():
            return 1
        ''',
    "README.md": "# demo\n",
    ".gitignore": "secrets/\n*.log\n",
    "secrets/token.py": "TOKEN = 'x'\n",
}


def make_repo(root: Path, files: dict[str, str] | None = None, *, retrieval: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_tree(root, files or FILES)
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=retrieval)
    return root


def make_hostile_repo(base: Path) -> Path:
    """The demo repository plus what a client must not read: VCS and index internals, ignored
    and skipped files, symlinks out of the root (and one inside, which is fine)."""
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = 1\n")
    files = {**FILES, ".git/config": "[core]\n", "debug.log": "log\n",
             "node_modules/m/i.js": "x\n", "app/.git/HEAD": "ref\n",
             "data/blob.py": b"\x00\x01binary", "docs/notes.txt": "one\ntwo\nthree\n"}
    repo = make_repo(base / "repo", files)
    os.symlink(outside, repo / "escape")
    os.symlink(outside / "secret.py", repo / "evil.py")
    os.symlink(repo / "app" / "util.py", repo / "alias.py")
    return repo


def knoxidx_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from knoxidx.cli import run; run()", *args]


def mcp_server(root: Path, *extra: str) -> StdioServerParameters:
    """``knoxidx mcp ROOT`` as a stdio server an MCP client starts."""
    command, *args = knoxidx_command("mcp", str(root), *extra)
    return StdioServerParameters(command=command, args=args)


def wait_for(check: Callable[[], T], timeout: float = 60.0, interval: float = 0.02,
             what: str = "condition") -> T:
    """Poll ``check`` until it returns something truthy, or fail after ``timeout`` (generous:
    it is reached only when the condition never comes, and a loaded machine is slow)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Process:
    """A knoxidx subprocess whose stdout and stderr lines are collected as they come."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None,
                 stdin: int | None = subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin, text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.seen: list[tuple[str, str]] = []
        for name, stream in (("out", self.proc.stdout), ("err", self.proc.stderr)):
            threading.Thread(target=self._pump, args=(name, stream), daemon=True).start()

    def _pump(self, name: str, stream: Any) -> None:
        for line in stream:
            self.lines.put((name, line.rstrip("\n")))

    def expect(self, pattern: str, timeout: float = 60.0, stream: str | None = None) -> re.Match:
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        for name, line in self.seen:
            match = regex.search(line)
            if match and (stream is None or stream == name):
                return match
        while time.monotonic() < deadline:
            try:
                name, line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            self.seen.append((name, line))
            match = regex.search(line)
            if match and (stream is None or stream == name):
                return match
        raise AssertionError(f"no line matching {pattern!r} within {timeout}s; "
                             f"rc={self.proc.poll()}; seen: {self.seen[-20:]}")

    def stop(self, sig: int | None = None, timeout: float = 20.0) -> int:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(sig if sig is not None else signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise

    def drain(self) -> list[tuple[str, str]]:
        while True:
            try:
                self.seen.append(self.lines.get(timeout=0.2))
            except queue.Empty:
                return self.seen


def write_whole(root: Path, rel: str, text: str) -> None:
    """Write ``root/rel`` as one file event: staged beside the repository, then renamed into
    place. A plain write is several events (created or truncated, modified, closed), and a
    writer descheduled between them gives the watcher two batches, the first of a part-written
    file, which a test counting one batch's changes took for a failure."""
    staged = root.parent / f".{root.name}.staged"
    staged.write_text(text, encoding="utf-8")
    os.replace(staged, root / rel)


def start_server(root: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[Process, str]:
    proc = Process(knoxidx_command("serve", str(root), "--port", "0", *extra), env=env)
    match = proc.expect(r"on (http://\S+?:\d+)", timeout=60)
    url = match.group(1).replace("0.0.0.0", "127.0.0.1")
    return proc, url
