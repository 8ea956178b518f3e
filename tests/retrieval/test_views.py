"""What the local model embeds for a chunk (the views of text_views.py) and how a view is chosen."""

from __future__ import annotations

import pytest
from pydefs import python_definitions

from knoxidx.retrieval.backends import LocalEmbedder, select_embedder
from knoxidx.retrieval.chunker import ChunkBudget, chunk_file
from knoxidx.retrieval.errors import EmbeddingConfigError
from knoxidx.retrieval.text_views import condensed_view

SOURCE = b'''\
class OffsetClock:
    """A clock at a fixed offset from UTC."""

    def with_second(self, second):
        if second is None:
            return self
        adjusted = self.local_time.replace(second=second)
        return OffsetClock(adjusted, self.zone_offset)

    def with_minute(self, minute):
        for candidate in self.candidates:
            if candidate.matches(minute):
                return candidate
        return None
''' + b"\n".join(f"    def helper_{i}(self):\n        return self.value_{i} * {i}\n".encode()
                for i in range(12))


def member_chunks():
    budget = ChunkBudget(member_tokens=64, definition_merge_tokens=0, min_tokens=8)
    chunks = chunk_file("src/time/offset_clock.py", SOURCE, "python",
                        python_definitions(SOURCE), budget=budget)
    return {c.symbol: c for c in chunks}


def test_the_condensed_view_names_the_member_and_its_class_first_and_drops_keywords() -> None:
    chunk = member_chunks()["OffsetClock.with_minute"]  # a member chunk of its own
    view = condensed_view(chunk)
    first, *rest = view.split("\n")
    assert first == "function with minute in offset clock"
    assert "time offset clock" in rest  # the last two path parts, as words
    assert "def with_minute(self, minute):" in rest
    identifiers = rest[-1].split()
    # what the body is about stays, in order; syntax (for, in, if, return, none, self) goes
    assert identifiers == ["with", "minute", "minute", "candidate", "candidates", "matches"]


def test_the_condensed_view_lists_the_other_definitions_of_a_merged_chunk() -> None:
    merged = chunk_file("m.py", b"def open_gate():\n    pass\n\ndef close_gate():\n    pass\n",
                        "python", python_definitions(
                            b"def open_gate():\n    pass\n\ndef close_gate():\n    pass\n"))
    assert len(merged) == 1
    lines = condensed_view(merged[0]).split("\n")
    assert lines[0] == "function open gate"
    assert lines[1] == "also close gate"


def test_each_view_is_its_own_model_id_and_the_view_is_chosen_by_env_or_config() -> None:
    ids = {view: LocalEmbedder(view=view).model_id for view in ("full", "condensed-v2")}
    assert len(set(ids.values())) == 2  # switching view re-embeds (see test_store_pipeline)
    assert select_embedder({}, {"KNOXIDX_LOCAL_VIEW": "full"}).model_id == ids["full"]
    assert select_embedder({"local_view": "full"}, {}).model_id.endswith("/full/256")
    # the first condensed view is gone: asking for it is an error, not another view's vectors
    for gone in ("everything", "condensed"):
        with pytest.raises(EmbeddingConfigError, match="unknown local view"):
            select_embedder({}, {"KNOXIDX_LOCAL_VIEW": gone})


def test_the_default_view_is_condensed_and_knoxidx_toml_can_choose_another(tmp_path) -> None:
    from knoxidx.core.config import load_settings
    from knoxidx.core.errors import KnoxidxError

    default = select_embedder({}, {}).model_id  # the model is MiniLM with its adapter
    assert default.startswith("local/all-MiniLM-L6-v2+code-v1.")
    assert default.endswith("/condensed-v2/256")
    assert load_settings(tmp_path, {}).local_view == "condensed-v2"
    (tmp_path / "knoxidx.toml").write_text(
        '[local]\nview = "full"\nadapter = "none"\nprecision = "fp32"\n')
    config = load_settings(tmp_path, {}).embedder_config()
    assert select_embedder(config, {}).model_id == "local/all-MiniLM-L6-v2/full/256"
    for gone in ("everything", "condensed"):
        (tmp_path / "knoxidx.toml").write_text(f'[local]\nview = "{gone}"\n')
        with pytest.raises(KnoxidxError, match="view"):
            load_settings(tmp_path, {})
