"""The Go and Java signature oracles (go_signatures.go, JavaSignatures.java): built on first
use, as the call-graph oracles are, into ``bench/.cache/<oracle>/<source digest>/`` (so an
edited oracle rebuilds itself and nothing built is committed), run over a list of files.

Each reads the paths on stdin and writes one JSON line per function; both only parse (no type
checking), so a file stands alone and no cache of results is needed: a corpus takes seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from common import BENCH_DIR, source_digest

HERE = Path(__file__).resolve().parent
GO_SOURCE = HERE / "go_signatures.go"
JAVA_SOURCE = HERE / "JavaSignatures.java"
# The Java oracle reads a method name's position and the varargs flag off javac's own trees.
JAVA_EXPORTS = [arg for pkg in ("tree", "code")
                for arg in ("--add-exports", f"jdk.compiler/com.sun.tools.javac.{pkg}=ALL-UNNAMED")]


class OracleUnavailable(RuntimeError):
    """The toolchain an oracle needs is not installed."""


def _built(name: str, source: Path, product: str, build: Callable[[Path], None]) -> Path:
    """The directory holding ``product`` built from ``source``, building it there if need be."""
    root = BENCH_DIR / ".cache" / name
    out = root / source_digest(source)
    if (out / product).exists():
        return out
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=root))
    build(tmp)
    if out.exists():
        shutil.rmtree(tmp)  # another run built it meanwhile
    else:
        tmp.replace(out)
    return out


def _build_go(into: Path) -> None:
    shutil.copyfile(GO_SOURCE, into / GO_SOURCE.name)
    (into / "go.mod").write_text("module go_signatures\n\ngo 1.18\n")
    env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOWORK": "off"}
    subprocess.run(["go", "build", "-o", "go_signatures", "."], cwd=into, env=env, check=True)


def _build_java(into: Path) -> None:
    subprocess.run(["javac", *JAVA_EXPORTS, "-d", str(into), str(JAVA_SOURCE)], check=True)


def _rows(command: list[str], paths: list[Path]) -> dict[str, list[dict]]:
    out = subprocess.run(command, input="\n".join(str(p) for p in paths), capture_output=True,
                         text=True, check=True)
    found: dict[str, list[dict]] = {}
    for line in out.stdout.splitlines():
        row = json.loads(line)
        found.setdefault(row["file"], []).append(row)
    return found


def go_functions(paths: list[Path]) -> dict[str, list[dict]]:
    """go/parser's functions of each file, by path (a rejected file's one row has ``error``)."""
    if shutil.which("go") is None:
        raise OracleUnavailable("the Go signature oracle needs the Go toolchain (golang-go)")
    built = _built("go-signatures", GO_SOURCE, "go_signatures", _build_go)
    return _rows([str(built / "go_signatures")], paths)


def java_methods(paths: list[Path]) -> dict[str, list[dict]]:
    """javac's methods and constructors of each file, by path (likewise)."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        raise OracleUnavailable("the Java signature oracle needs a JDK (java, javac 17 or later)")
    built = _built("java-signatures", JAVA_SOURCE, "JavaSignatures.class", _build_java)
    return _rows(["java", *JAVA_EXPORTS, "-Xmx4g", "-cp", str(built), "JavaSignatures"], paths)
