"""Driver for the Java oracle (JavaOracle.java): compile it, run it over a corpus, cache.

Why a Python wrapper: the benchmark is Python, and the oracle needs the same conveniences as
the jedi and TypeScript ones -- per-file caching keyed by the whole corpus, a deterministic
``--max-files`` quick mode -- and the oracle itself must be built: JavaOracle.java is compiled
on first use into ``bench/.cache/java-oracle/<source digest>/`` with the JDK's ``javac``
(17 or later), so no class file is ever committed and an edited oracle rebuilds itself.

javac attributes a whole program at once, so one process compiles every file of the corpus
and examines the chosen ones. Rows are those of JavaOracle.java (see its header); per file
the ``file`` row comes last.

Usage::

    python bench/oracles/java_oracle.py CORPUS_DIR OUT.jsonl [--max-files N]
        [--subset stride|first] [--no-cache]
"""

from __future__ import annotations

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

ORACLE_NAME = "java_oracle"
# Part of the cache key: bump whenever a change alters which rows are produced.
ORACLE_VERSION = "3"

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "JavaOracle.java"
BUILD_ROOT = BENCH_DIR / ".cache" / "java-oracle"
# The oracle reads declaration positions off javac's own trees (JCTree.pos is a name's).
EXPORTS = [arg for pkg in ("tree", "code")
           for arg in ("--add-exports", f"jdk.compiler/com.sun.tools.javac.{pkg}=ALL-UNNAMED")]
JAVA_HEAP = "-Xmx4g"


class OracleUnavailable(RuntimeError):
    """The JDK tools the oracle needs are not installed."""


def jdk_version() -> str:
    if shutil.which("javac") is None or shutil.which("java") is None:
        raise OracleUnavailable("java_oracle: a JDK (java and javac, 17 or later) is required")
    proc = subprocess.run(["javac", "-version"], capture_output=True, text=True, check=True)
    return (proc.stdout or proc.stderr).strip()


def ensure_built() -> Path:
    """The directory holding JavaOracle.class for the current source, compiling it if needed."""
    out = BUILD_ROOT / source_digest(SOURCE)
    if (out / "JavaOracle.class").exists():
        return out
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=BUILD_ROOT))
    subprocess.run(["javac", *EXPORTS, "-d", str(tmp), str(SOURCE)], check=True, stdout=sys.stderr)
    if out.exists():
        shutil.rmtree(tmp)  # another run built it meanwhile
    else:
        tmp.replace(out)
    return out


def run_java(corpus: Path, files: list[str], examine: list[str], workdir: Path) -> dict[str, list[Row]]:
    classes = ensure_built()
    listing, chosen, out = workdir / "files.txt", workdir / "examine.txt", workdir / "out.jsonl"
    listing.write_text("\n".join(files) + "\n")
    chosen.write_text("\n".join(examine) + "\n")
    cmd = ["java", *EXPORTS, JAVA_HEAP, "-cp", str(classes), "JavaOracle", "--corpus", str(corpus),
           "--files", str(listing), "--examine", str(chosen), "--out", str(out)]
    proc = subprocess.run(cmd, stdout=sys.stderr)
    if proc.returncode != 0:
        print(f"[{ORACLE_NAME}] warning: java exited with {proc.returncode}", file=sys.stderr)
    return parse_rows(out.read_text()) if out.exists() else {}


def run_oracle(corpus: Path, out: Path, max_files: int | None = None, subset: str = "stride",
               use_cache: bool = True) -> dict[str, object]:
    """Produce OUT.jsonl for the corpus (cached per file); return run statistics."""
    salt = [ORACLE_NAME, ORACLE_VERSION, jdk_version(), source_digest(SOURCE)]
    return run_whole_program_oracle(ORACLE_NAME, corpus, out, (".java",), salt, run_java,
                                    max_files, subset, use_cache)


def main(argv: list[str] | None = None) -> int:
    return whole_program_main(ORACLE_NAME, __doc__.split("\n\n")[0],
                              "~/.cache/knoxidx-corpus/java/javac",
                              run_oracle, OracleUnavailable, argv)


if __name__ == "__main__":
    sys.exit(main())
