"""Secret masking scored on a corpus of credential shapes and harmless look-alikes
(``tests/data/secrets_corpus.toml``): how many secrets it misses, how many look-alikes it
masks, and how long it takes on hostile lines built to make a regular expression backtrack.

The corpus's random parts are generated here from a fixed seed (see the file's header), so
that no credential-shaped string is stored in the repository.

    python -m bench.secrets_corpus [--seeds N] [--files DIR ...] [--out FILE.json]

``--seeds N`` scores the corpus again with N other seeds (other random values of the same
shapes); ``--files`` also masks every text file under each DIR and reports the masks by kind
(on code with no secrets, each is a false positive) and the throughput.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import string
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib

from knoxidx.retrieval.secrets import mask_secrets

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "secrets_corpus.toml"
SEED = 20261205
ALPHABETS = {
    "upper": string.ascii_uppercase + string.digits,
    "lower": string.ascii_lowercase + string.digits,
    "alnum": string.ascii_letters + string.digits,
    "hex": "0123456789abcdef",
    "digits": string.digits,
    "b64": string.ascii_letters + string.digits + "+/",
    "url": string.ascii_letters + string.digits + "-_",
    "pw": string.ascii_letters + string.digits + "!#%^*~-",
}
_FIELD = re.compile(r"\{\{(rand|basic|jwt|pem|pemesc|uuid)(?::([^{}]*))?\}\}")
# hostile inputs: long runs of what each pattern's repetitions accept, with the character
# that ends a match left out (each about 200 kB)
HOSTILE_LINES = {
    "quotes": '"' * 200_000,
    "quoted-runs": ('"' + "a" * 300) * 650,
    "adjacent-literals": '"AKIA" "' * 25_000,
    "aws-prefixes": "AKIA" * 50_000,
    "password-keys": ";Password=" * 20_000,
    "basic-schemes": "Basic " + "A" * 200_000,
    "authorization": "Authorization: Bearer " * 9_000,
    "url-colons": "://" + ":" * 200_000 + "@",
    "config-line": "DB_PASSWORD=" + "a1" * 100_000,
    "pem-body": "-----BEGIN PRIVATE KEY-----\n" + "A" * 200_000,
    "names-before-quotes": ("password = " * 10 + '"' + "x9Q" * 3) * 2_000,
    "spaces": " " * 200_000,
}


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    kind: str  # the kind a secret must be masked as; "" for a look-alike
    text: str
    secrets: tuple[str, ...]  # the generated parts that must not survive masking


def load_corpus(path: Path = CORPUS, seed: int = SEED) -> tuple[list[Case], list[Case]]:
    """The corpus's secrets and look-alikes, their random parts generated from ``seed``."""
    data = tomllib.loads(path.read_text("utf-8"))
    rng = random.Random(seed)
    secrets = [_case(entry, rng, secret=True) for entry in data["secret"]]
    harmless = [_case(entry, rng, secret=False) for entry in data["harmless"]]
    ids = [c.id for c in (*secrets, *harmless)]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"{path}: ids used twice: {', '.join(duplicated)}")
    return secrets, harmless


def _case(entry: dict[str, Any], rng: random.Random, *, secret: bool) -> Case:
    generated: list[str] = []

    def fill(match: re.Match[str]) -> str:
        value = _generate(match[1], match[2] or "", rng)
        generated.append(value)
        return value

    text = _FIELD.sub(fill, entry["text"])
    if secret and not generated:
        raise ValueError(f"secret {entry['id']!r} has no generated part to look for")
    return Case(entry["id"], entry.get("kind", "") if secret else "", text,
                tuple(generated) if secret else ())


def _generate(field: str, argument: str, rng: random.Random) -> str:
    def chars(alphabet: str, n: int) -> str:
        return "".join(rng.choice(ALPHABETS[alphabet]) for _ in range(n))

    makers: dict[str, Callable[[], str]] = {
        "rand": lambda: chars(argument.split(":")[0], int(argument.split(":")[1])),
        "basic": lambda: base64.b64encode(f"{argument}:{chars('pw', 18)}".encode()).decode(),
        "jwt": lambda: ".".join([
            _b64url(b'{"alg":"HS256","typ":"JWT"}'),
            _b64url(json.dumps({"sub": chars("digits", 8), "exp": 1900000000}).encode()),
            chars("url", 43)]),
        "pem": lambda: "\n".join(chars("b64", 64) for _ in range(int(argument))),
        "pemesc": lambda: "\\n".join(chars("b64", 64) for _ in range(int(argument))),
        "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    }
    return makers[field]()


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def missed(case: Case) -> str | None:
    """Why masking failed a secret (a part left visible, or not counted as its kind), or
    None."""
    masked, counts = mask_secrets(case.text)
    visible = [part for part in case.secrets if _pieces_visible(part, masked)]
    if visible:
        return f"left visible: {visible[0][:12]}…"
    if counts.get(case.kind, 0) < 1:
        return f"masked as {dict(counts)}, not {case.kind}"
    return None


def _pieces_visible(part: str, masked: str) -> bool:
    # a key body's lines are masked one by one: each must be gone
    return any(len(line) >= 8 and line in masked for line in re.split(r"\n|\\n", part))


def false_positive(case: Case) -> str | None:
    masked, counts = mask_secrets(case.text)
    return f"masked {dict(counts)}: {masked[:100]!r}" if masked != case.text else None


def score(path: Path = CORPUS) -> dict[str, Any]:
    secrets, harmless = load_corpus(path)
    misses = {c.id: why for c in secrets if (why := missed(c)) is not None}
    false_positives = {c.id: why for c in harmless if (why := false_positive(c)) is not None}
    return {
        "corpus": str(path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd())
                      else path),
        "secrets": len(secrets),
        "kinds": len({c.kind for c in secrets}),
        "missed": len(misses),
        "look_alikes": len(harmless),
        "false_positives": len(false_positives),
        "misses": misses,
        "false_positive_cases": false_positives,
    }


def hostile_seconds() -> dict[str, float]:
    """Seconds to mask each hostile line (one run each)."""
    out = {}
    for name, line in HOSTILE_LINES.items():
        t0 = time.perf_counter()
        mask_secrets(line)
        out[name] = round(time.perf_counter() - t0, 4)
    return out


def other_seeds(n: int) -> dict[str, Any]:
    """The corpus generated with seeds 1..n: checks, misses and false positives, by case."""
    misses: Counter[str] = Counter()
    false_positives: Counter[str] = Counter()
    secrets: list[Case] = []
    harmless: list[Case] = []
    for seed in range(1, n + 1):
        secrets, harmless = load_corpus(seed=seed)
        misses.update(c.id for c in secrets if missed(c) is not None)
        false_positives.update(c.id for c in harmless if false_positive(c) is not None)
    return {"seeds": n, "secret_checks": n * len(secrets), "missed": sum(misses.values()),
            "look_alike_checks": n * len(harmless),
            "false_positives": sum(false_positives.values()),
            "missed_by_case": dict(misses), "false_positives_by_case": dict(false_positives)}


def files_masked(roots: list[Path]) -> dict[str, Any]:
    """Masks found in every text file under ``roots``, and the CPU seconds it took."""
    texts = [p.read_bytes().decode("utf-8", errors="replace") for root in roots
             for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in TEXT_SUFFIXES]
    kinds: Counter[str] = Counter()
    t0 = time.process_time()
    for text in texts:
        kinds.update(mask_secrets(text)[1])
    seconds = time.process_time() - t0
    size = sum(len(t) for t in texts)
    return {"files": len(texts), "megabytes": round(size / 1e6, 1),
            "cpu_seconds": round(seconds, 2),
            "megabytes_per_second": round(size / 1e6 / seconds, 1) if seconds else None,
            "masks_by_kind": dict(kinds.most_common())}


TEXT_SUFFIXES = frozenset({".py", ".js", ".ts", ".tsx", ".go", ".rs", ".java", ".json", ".md",
                           ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=0)
    parser.add_argument("--files", type=Path, nargs="*", default=[])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    result = score()
    result["hostile_seconds"] = hostile_seconds()
    if args.seeds:
        result["other_seeds"] = other_seeds(args.seeds)
    if args.files:
        result["files"] = files_masked(args.files)
    print(json.dumps(result, indent=2))
    print(f"secrets corpus: {result['secrets']} secrets of {result['kinds']} kinds, "
          f"{result['missed']} missed; {result['look_alikes']} look-alikes, "
          f"{result['false_positives']} masked; slowest hostile line "
          f"{max(result['hostile_seconds'].values()):.3f}s")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 1 if result["missed"] or result["false_positives"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
