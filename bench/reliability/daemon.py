"""A knoxidx child process (``watch`` or ``serve``) whose output lines are collected."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time

from bench.reliability.common import knoxidx_command


class Daemon:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(knoxidx_command(*args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     text=True, start_new_session=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.put(line.rstrip("\n"))

    def poll_lines(self) -> list[str]:
        out = []
        while True:
            try:
                out.append(self.lines.get_nowait())
            except queue.Empty:
                break
        self.seen.extend(out)
        return out

    def expect(self, pattern: str, timeout: float = 120.0) -> re.Match[str]:
        regex = re.compile(pattern)
        for line in self.seen:
            match = regex.search(line)
            if match:
                return match
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            self.seen.append(line)
            match = regex.search(line)
            if match:
                return match
        raise RuntimeError(f"no line matching {pattern!r} in {timeout}s (rc="
                           f"{self.proc.poll()}); last lines: {self.seen[-8:]}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return -9
