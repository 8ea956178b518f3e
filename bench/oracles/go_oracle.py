"""Driver for the Go oracle (go_oracle.go): build it, run it over a corpus, cache.

Why a Python wrapper: the benchmark is Python, and the oracle needs the same conveniences as
the others -- per-file caching keyed by the whole corpus, a deterministic ``--max-files``
quick mode -- and must be built: go_oracle.go (standard library only) is compiled on first
use with the installed ``go`` (Debian's ``golang-go`` will do) into
``bench/.cache/go-oracle/<source digest>/``, offline (``GOPROXY=off``).

go/types checks whole packages, so one process checks every package of the corpus and
examines the chosen files. Rows are those of go_oracle.go (see its header); per file the
``file`` row comes last.

Usage::

    python bench/oracles/go_oracle.py CORPUS_DIR OUT.jsonl [--max-files N]
        [--subset stride|first] [--no-cache]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import (
    BENCH_DIR,
    Row,
    parse_rows,
    run_whole_program_oracle,
    source_digest,
    whole_program_main,
)

ORACLE_NAME = "go_oracle"
# Part of the cache key: bump whenever a change alters which rows are produced.
ORACLE_VERSION = "4"

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "go_oracle.go"
BUILD_ROOT = BENCH_DIR / ".cache" / "go-oracle"
GO_MOD = "module go_oracle\n\ngo 1.18\n"


class OracleUnavailable(RuntimeError):
    """The Go toolchain the oracle needs is not installed."""


def go_version() -> str:
    if shutil.which("go") is None:
        raise OracleUnavailable("go_oracle: the Go toolchain is required (apt-get install golang-go)")
    return subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.strip()


def ensure_built() -> Path:
    """The oracle's executable for the current source, building it if needed."""
    out = BUILD_ROOT / source_digest(SOURCE)
    binary = out / "go_oracle"
    if binary.exists():
        return binary
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=BUILD_ROOT))
    shutil.copyfile(SOURCE, tmp / SOURCE.name)
    (tmp / "go.mod").write_text(GO_MOD)
    env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOWORK": "off"}
    subprocess.run(["go", "build", "-o", "go_oracle", "."], cwd=tmp, env=env, check=True, stdout=sys.stderr)
    if out.exists():
        shutil.rmtree(tmp)  # another run built it meanwhile
    else:
        tmp.replace(out)
    return binary


def run_go(corpus: Path, files: list[str], examine: list[str], workdir: Path) -> dict[str, list[Row]]:
    binary = ensure_built()
    listing, chosen, out = workdir / "files.txt", workdir / "examine.txt", workdir / "out.jsonl"
    listing.write_text("\n".join(files) + "\n")
    chosen.write_text("\n".join(examine) + "\n")
    cmd = [str(binary), "-corpus", str(corpus), "-files", str(listing), "-examine", str(chosen), "-out", str(out)]
    proc = subprocess.run(cmd, stdout=sys.stderr)
    if proc.returncode != 0:
        print(f"[{ORACLE_NAME}] warning: go_oracle exited with {proc.returncode}", file=sys.stderr)
    return parse_rows(out.read_text()) if out.exists() else {}


def run_oracle(corpus: Path, out: Path, max_files: int | None = None, subset: str = "stride",
               use_cache: bool = True) -> dict[str, object]:
    """Produce OUT.jsonl for the corpus (cached per file); return run statistics."""
    salt = [ORACLE_NAME, ORACLE_VERSION, go_version(), source_digest(SOURCE)]
    return run_whole_program_oracle(ORACLE_NAME, corpus, out, (".go",), salt, run_go,
                                    max_files, subset, use_cache)


def main(argv: list[str] | None = None) -> int:
    return whole_program_main(ORACLE_NAME, __doc__.split("\n\n")[0],
                              "~/.cache/knoxidx-corpus/go/go-git",
                              run_oracle, OracleUnavailable, argv)


if __name__ == "__main__":
    sys.exit(main())
