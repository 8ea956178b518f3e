"""The hot-loop counter parses the same files whatever the host's speed: under callgrind a
large file would pass its parse deadline and drop out of the count."""

from __future__ import annotations

import pytest

from bench import work
from knoxidx.parse import tree_parse


@pytest.fixture
def past_every_deadline(monkeypatch):
    monkeypatch.setattr(tree_parse, "PARSE_SECONDS", -1.0)  # every parse is already late
    monkeypatch.setattr(tree_parse, "PARSE_SECONDS_PER_MB", 0.0)


@pytest.fixture
def corpus(tmp_path):
    body = "".join(f"def f{n}(x):\n    return g(x) + {n}\n\n" for n in range(800))
    (tmp_path / "big.py").write_text(body)
    return tmp_path


def test_a_late_parse_drops_out_of_the_count(past_every_deadline, corpus):
    assert work.extract_work(corpus, 1)["ok"] == 0


def test_counting_parses_every_file_however_slow(past_every_deadline, corpus):
    work.lift_parse_deadline()
    assert work.extract_work(corpus, 1)["ok"] == 1
