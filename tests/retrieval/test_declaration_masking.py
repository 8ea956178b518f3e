"""A definition as a graph answer or the export shows it: a secret found once in its
signature is masked wherever its value recurs, the same way in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from knoxidx.retrieval.disclosure import declaration_shown

VALUE = "Xk9mQ2vL8pR4tZ1w"
# the value is an assigned secret beside `api_key`, a URL's password in `dsn`, and nothing
# that masking would find by itself beside `fallback`
SIGNATURE = f'def connect(api_key="{VALUE}", dsn="postgres://app:{VALUE}@db", fallback="{VALUE}")'
NODE = {
    "path": "db.py", "signature": SIGNATURE, "doc": f"Falls back to {VALUE}.",
    "parameters": [
        {"name": "api_key", "type": None, "default": f'"{VALUE}"', "kind": "positional"},
        {"name": "dsn", "type": None, "default": f'"postgres://app:{VALUE}@db"',
         "kind": "positional"},
        {"name": "fallback", "type": None, "default": f'"{VALUE}"', "kind": "positional"},
    ],
}


def test_a_secret_recurring_in_a_signature_is_masked_everywhere() -> None:
    shown = declaration_shown(NODE)
    assert VALUE not in json.dumps(shown)  # the signature's and doc's `fallback` showed it
    assert shown["signature"].endswith('fallback="«secret:assigned-secret»")')


def test_the_masking_is_the_same_whatever_the_hash_seed() -> None:
    """Two findings of one value (its kinds differ) were applied in a set's order, which the
    hash seed decides: the seeds here gave `url-password` in one process and
    `assigned-secret` in another, so one graph exported different bytes."""
    script = ("import json, sys; from knoxidx.retrieval.disclosure import declaration_shown; "
              "print(json.dumps(declaration_shown(json.loads(sys.argv[1]))))")
    answers = {
        subprocess.run([sys.executable, "-c", script, json.dumps(NODE)], check=True,
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2", "6")
    }
    assert len(answers) == 1
