"""Secret masking against the corpus of credential shapes and look-alikes
(``tests/data/secrets_corpus.toml``, scored by ``python -m bench.secrets_corpus``), the leaks
it used to let through, and hostile lines that would make a backtracking pattern hang."""

from __future__ import annotations

import base64
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from bench.secrets_corpus import HOSTILE_LINES, Case, false_positive, load_corpus, missed
from knoxidx.retrieval.secrets import _detect, mask_secrets, may_hold_secret

REPO = Path(__file__).resolve().parents[2]
SECRETS, LOOK_ALIKES = load_corpus()
_rng = random.Random(49)


def fake(length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """Random characters, made at run time so that no scanner takes this file for a leak."""
    return "".join(_rng.choice(alphabet) for _ in range(length))


def test_the_corpus_is_large_and_varied() -> None:
    assert len(SECRETS) >= 50 and len(LOOK_ALIKES) >= 50
    kinds = {case.kind for case in SECRETS}
    assert {"aws-access-key", "private-key", "connection-password", "jwt", "basic-auth",
            "url-password", "azure-key", "github-token", "assigned-secret"} <= kinds


@pytest.mark.parametrize("case", SECRETS, ids=lambda c: c.id)
def test_every_secret_of_the_corpus_is_masked(case: Case) -> None:
    assert missed(case) is None, f"{case.id}: {missed(case)}\n{case.text}"


@pytest.mark.parametrize("case", LOOK_ALIKES, ids=lambda c: c.id)
def test_no_look_alike_of_the_corpus_is_masked(case: Case) -> None:
    assert false_positive(case) is None, f"{case.id}: {false_positive(case)}"


def test_the_leaks_found_by_the_hardening_run() -> None:
    """Each leaked through masking verbatim before: an ADO.NET password, an Azure account key,
    Basic credentials in a header, an AWS key id split over adjacent literals."""
    password = fake(10) + "&3!"
    ado = f'"Server=db;Database=app;User Id=sa;Password={password};"'
    assert mask_secrets(ado) == (
        '"Server=db;Database=app;User Id=sa;Password=«secret:connection-password»;"',
        {"connection-password": 1})
    key = fake(86, string.ascii_letters + string.digits + "+/") + "=="
    azure = f"AccountName=acme;AccountKey={key};EndpointSuffix=core.windows.net"
    assert mask_secrets(azure)[0] == \
        "AccountName=acme;AccountKey=«secret:azure-key»;EndpointSuffix=core.windows.net"
    basic = base64.b64encode(f"deploy:{fake(16)}".encode()).decode()
    header = f'{{"Authorization": "Basic {basic}"}}'
    assert mask_secrets(header) == ('{"Authorization": "Basic «secret:basic-auth»"}',
                                    {"basic-auth": 1})
    tail = fake(16, string.ascii_uppercase + string.digits)
    split = f'key = ("AKIA" "{tail}")'
    assert mask_secrets(split) == ('key = ("«secret:aws-access-key»" "«secret:aws-access-key»")',
                                   {"aws-access-key": 1})


def test_masking_keeps_lines_and_the_text_around_each_value() -> None:
    for case in SECRETS:
        masked, _ = mask_secrets(case.text)
        assert masked.count("\n") == case.text.count("\n"), case.id
        assert "«secret:" in masked


def test_the_prefilter_never_rules_out_a_text_a_detector_finds_a_secret_in() -> None:
    """``find_secrets`` runs no detector on a text without a trigger literal; every text of
    the corpus (four seeds), and each of its lines, in which the detectors find something
    must hold one, so a detector whose literal the triggers lack fails here."""
    kinds: set[str] = set()
    for seed in (20261205, 1, 2, 3):
        secrets, look_alikes = load_corpus(seed=seed)
        for case in (*secrets, *look_alikes):
            for text in (case.text, *case.text.splitlines()):
                found = _detect(text)
                if found:
                    kinds.update(f.kind for f in found)
                    assert may_hold_secret(text), f"{case.id}: {text!r}"
    assert kinds >= {case.kind for case in SECRETS}
    assert not may_hold_secret("public Period minusYears(long yearsToSubtract)")


def test_hostile_lines_are_masked_in_linear_time() -> None:
    """Each line (~200 kB of what a pattern's repetitions accept, without what ends a match)
    is masked in a child process; a pattern that backtracked catastrophically would take
    hours, and the child is stopped long before (this bounds a hang, it times nothing)."""
    script = ("from bench.secrets_corpus import HOSTILE_LINES\n"
              "from knoxidx.retrieval.secrets import mask_secrets\n"
              "for line in HOSTILE_LINES.values():\n"
              "    mask_secrets(line)\n"
              "print('done', len(HOSTILE_LINES))\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["done", str(len(HOSTILE_LINES))]
