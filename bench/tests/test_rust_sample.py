"""The Rust sample's call forms and its precision arithmetic (undecidable counted apart)."""

from __future__ import annotations

import pytest

from bench.rust_sample import call_form, precision


@pytest.mark.parametrize(("line", "name", "form"), [
    ("let s = Semaphore::new(0);", "new", "path"),
    ("Self::new(s)", "new", "Self::"),
    ("self.set_stage(Stage::Consumed);", "set_stage", "self."),
    ("let semaphore = chan.semaphore();", "semaphore", "method"),
    (".load_next(Acquire)", "load_next", "method"),
    ("for i in 0..normal_or_miri(10, 1) {", "normal_or_miri", "bare"),
    ("Punctuated::<Field, ()>::new().into_iter(),", "new", "path"),
    ("assert_empty!(rx2);", "assert_empty", "macro"),
    ("Ok(AsyncFdReadyMutGuard {", "AsyncFdReadyMutGuard", "bare"),
])
def test_call_form(line: str, name: str, form: str) -> None:
    assert call_form(line, name) == form


def test_precision_leaves_undecidable_out() -> None:
    records = [{"verdict": v} for v in ("right", "right", "right", "wrong", "undecidable")]
    assert precision(records) == (0.75, 3, 1, 1)
    assert precision([{"verdict": "undecidable"}]) == (None, 0, 0, 1)
