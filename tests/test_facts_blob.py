"""The stored facts: a file's references are marshalled apart inside its blob, so that another
file's resolution reads only the file's interface and a resolver's cache holds no references."""

from __future__ import annotations

import marshal
import shutil
from pathlib import Path

import pytest

from knoxidx.core.facts import (
    BASE_KINDS,
    dump_facts,
    load_facts,
    load_interface,
    load_references,
)
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.extract import extract
from knoxidx.parse.file_index import FileIndex, definition_ids
from tests.helpers import build, resolve_every_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PYTHON_RULES = family_plugin("python").RULES
SOURCE = b"""\
import os

class Base:
    pass

class Child(Base, os.PathLike):
    def run(self):
        return helper(os.getcwd())

def helper(x):
    return len(x)
"""


def test_the_interface_has_the_base_references_and_the_rest_stays_marshalled() -> None:
    facts = extract("m.py", SOURCE, "python")
    ids = definition_ids(facts)
    blob = dump_facts(facts, ids)
    assert load_facts(blob) == facts
    interface, refs, stored_ids = load_interface(blob)
    assert interface == facts._replace(refs=tuple(r for r in facts.refs if r.kind in BASE_KINDS))
    assert [r.path for r in interface.refs] == [("Base",), ("os", "PathLike")]
    assert load_references(refs) == facts.refs  # every one, in order
    # the node ids come with the interface: a resolver that loads it hashes none of them
    assert stored_ids == tuple(ids) and len(ids) == len(facts.defs) > 1
    fi = FileIndex(interface, "python", PYTHON_RULES, refs, stored_ids)
    assert fi._ids == ids and fi.ids == ids


def test_a_blob_an_earlier_knoxidx_wrote_still_loads() -> None:
    """An index built before the references moved apart, read by a query before the next
    update rewrites it (``knoxidx search`` after an upgrade): it crashed on the blob's shape."""
    facts = extract("m.py", SOURCE, "python")
    earlier = marshal.dumps((
        facts.path, facts.language, facts.package, facts.lines, facts.error_nodes,
        *(tuple(map(tuple, records)) for records in facts[5:10]),
    ))
    assert load_facts(earlier) == facts
    assert load_interface(earlier) == (facts, None, None)
    # ... and one with the references apart, but no node ids: they are hashed on first use
    refs = tuple(map(tuple, facts.refs))
    without_ids = marshal.dumps((
        facts.path, facts.language, facts.package, facts.lines, facts.error_nodes,
        *(tuple(map(tuple, records)) for records in facts[5:6]),
        tuple(r for r in refs if r[0] in BASE_KINDS),
        *(tuple(map(tuple, records)) for records in facts[7:10]), marshal.dumps(refs),
    ))
    assert load_facts(without_ids) == facts
    interface, stored_refs, ids = load_interface(without_ids)
    assert ids is None and load_references(stored_refs) == facts.refs
    assert FileIndex(interface, "python", PYTHON_RULES, stored_refs, ids).ids == definition_ids(facts)


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_resolving_from_interfaces_answers_as_from_whole_facts(tmp_path, fixture) -> None:
    root = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, root)
    build(root)
    # with every blob in hand, files come as interfaces; else as the store's whole facts
    from_blobs, resolver = resolve_every_file(root, load_all_facts=True)
    assert from_blobs == resolve_every_file(root, load_all_facts=False)[0]
    # what the resolver keeps of a file holds its base references only
    cached = [fi for fi in resolver._indexes.values() if fi is not None]
    assert cached
    assert all(r.kind in BASE_KINDS for fi in cached for r in fi.facts.refs)
    assert sum(len(fi.reference_rows()) for fi in cached) > sum(len(fi.facts.refs) for fi in cached)


def test_a_workers_plain_reference_rows_store_as_the_records_do() -> None:
    """``extract_rows`` (what an index worker calls) leaves the references as plain tuples,
    which ``dump_facts`` marshals without converting them; the blob (decoded: marshal's bytes
    follow reference counts) and the interface fingerprint are the same as from ``extract``'s
    records."""
    from knoxidx.core.facts import Reference, blob_fields
    from knoxidx.parse.extract import extract_rows
    from knoxidx.parse.reader import interface_fingerprint

    rows, _ = extract_rows("m.py", SOURCE, "python")
    facts = extract("m.py", SOURCE, "python")
    assert rows.refs and all(type(r) is tuple for r in rows.refs)
    assert all(type(r) is Reference for r in facts.refs)
    assert rows.refs == tuple(map(tuple, facts.refs))
    ids = definition_ids(facts)
    plain, records = blob_fields(dump_facts(rows, ids)), blob_fields(dump_facts(facts, ids))
    assert plain[:10] == records[:10] and plain[11] == records[11]
    assert marshal.loads(plain[10]) == marshal.loads(records[10])
    assert interface_fingerprint(rows) == interface_fingerprint(facts)
    assert load_facts(dump_facts(rows, ids)) == facts


def test_references_of_one_expression_keep_their_order_and_a_value_reading_yields() -> None:
    """The references are ordered by (start, end, kind) — one integer key in extraction — and
    a value reading of an expression another pattern read more specifically is dropped: the
    base class `Base` is read as `extends` (and by the value pattern of arguments)."""
    facts = extract("m.py", SOURCE, "python")
    keys = [(r.line, r.col) for r in facts.refs]
    assert keys == sorted(keys)
    at_base = [r.kind for r in facts.refs if r.path == ("Base",)]
    assert at_base == ["extends"]


def test_a_query_capturing_an_unknown_reference_kind_fails_loudly() -> None:
    from knoxidx.parse.compiled_queries import pattern_role

    assert pattern_role({"reference.call": []})[:2] == ("ref", "call")
    with pytest.raises(ValueError, match="unknown reference kind"):
        pattern_role({"reference.calls": []})


def test_a_go_file_s_build_constraint_is_stored() -> None:
    facts = extract("a.go", b"//go:build !go1.18\n\npackage a\n\nfunc f() {}\n", "go")
    assert facts.build == "!go1.18"
    loaded = load_facts(dump_facts(facts, definition_ids(facts)))
    assert loaded.build == "!go1.18"
    assert load_interface(dump_facts(facts, definition_ids(facts)))[0].build == "!go1.18"


def test_bindings_are_stored_with_their_places_and_an_earlier_blob_s_have_none() -> None:
    source = b"def f(flag):\n    x = A()\n    if flag:\n        x = B()\n    x.m()\n"
    facts = extract("m.py", source, "python")
    assert [(b.name, b.at >> 24, b.block_end >> 24) for b in facts.bindings] == [
        ("x", 2, 5), ("x", 4, 4)]
    assert load_facts(dump_facts(facts, definition_ids(facts))).bindings == facts.bindings
    earlier = marshal.dumps((
        facts.path, facts.language, facts.package, facts.lines, facts.error_nodes,
        *(tuple(map(tuple, records)) for records in facts[5:8]),
        tuple(tuple(b[:4]) for b in facts.bindings), tuple(map(tuple, facts.impls)),
    ))
    loaded = load_facts(earlier).bindings
    assert [b[:4] for b in loaded] == [b[:4] for b in facts.bindings]
    assert {(b.at, b.block_end, b.loop) for b in loaded} == {(0, 0, 0)}
