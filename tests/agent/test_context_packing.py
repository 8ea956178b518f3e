"""What the context pack shows for the shapes of code that real change requests meet: small
neighbours in one search chunk, long definitions, many hits, test files, a central class, and
the list of what was left out. Each repository is real (indexed in tmp), each query real."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bench.context_eval.coverage import covers
from bench.context_eval.mining import Definition
from bench.context_eval.systems import context_pack
from knoxidx.answers.blocks import short_name
from knoxidx.answers.context import Candidate, ContextWeights, build_context
from knoxidx.answers.context_features import local_name
from knoxidx.answers.pack_files import Files
from knoxidx.answers.packing import Packer
from knoxidx.index import Index
from knoxidx.retrieval.tokens import default_counter
from tests.agent.support import make_repo


def _shown(data: dict, path: str) -> set[int]:
    """The line numbers of ``path`` the pack shows (a signature: its first line)."""
    lines: set[int] = set()
    for block in data["blocks"]:
        if block["path"] == path:
            whole = [[block["start_line"], block["start_line"] if block["mode"] == "signature"
                      else block["end_line"]]]
            for start, end in block.get("ranges") or whole:
                lines.update(range(start, end + 1))
    return lines


def test_a_hit_chunk_brings_all_the_small_definitions_it_holds(tmp_path: Path) -> None:
    # the chunker merges these small functions into one chunk; the hit names only one of them
    files = {"pkg/__init__.py": "", "pkg/codec.py": (
        "def encode_header(value):\n    return value.upper()\n\n\n"
        "def decode_header(value):\n    return value.lower()\n\n\n"
        "def strip_header(value):\n    return value.strip()\n")}
    root = make_repo(tmp_path / "repo", files)
    with Index.open(root) as idx:
        data = idx.context("strip the header", 4000)
    assert set(range(1, 11)) <= _shown(data, "pkg/codec.py")
    assert "def encode_header(value):" in data["markdown"]


def test_a_long_hit_shows_its_signature_and_the_lines_that_match(tmp_path: Path) -> None:
    steps = [f"    total = total + {i}  # step {i}\n" for i in range(400)]
    files = {"pkg/__init__.py": "", "pkg/long.py": (
        "def accumulate(total):\n    \"\"\"Adds the steps.\"\"\"\n" + "".join(steps[:200])
        + "    total = apply_discount(total)  # the discount for loyal customers\n"
        + "".join(steps[200:]) + "    return total\n")}
    root = make_repo(tmp_path / "repo", files)
    counter = default_counter()
    with Index.open(root) as idx:
        data = idx.context("discount for loyal customers", 4000)
    block = next(b for b in data["blocks"] if b["path"] == "pkg/long.py")
    assert block["mode"] == "elided"
    assert block["tokens"] <= ContextWeights().block_share * 4000  # no more than its share
    md = data["markdown"]
    assert "def accumulate(total):" in md and "apply_discount(total)" in md
    assert "not shown)" in md  # the elided lines are named by number
    assert counter.count(md) == data["tokens"] <= 4000
    shown = _shown(data, "pkg/long.py")
    # line 203 matches: it is shown with lines on both sides of it, the rest elided
    assert {1, 190, 203, 215} <= shown and 100 not in shown and 350 not in shown
    # the benchmark credits the lines shown, not the elided span
    pack = context_pack(data)
    assert covers(pack[1], Definition("pkg/long.py", "window", 195, 210))
    assert not any(covers(s, Definition("pkg/long.py", "elided", 330, 360)) for s in pack)


def test_hits_fill_the_budget_past_the_tenth(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": ""}
    for i in range(30):
        files[f"pkg/handler_{i:02}.py"] = (
            f"def handle_refund_{i}(order):\n    \"\"\"Refund the order, case {i}.\"\"\"\n"
            f"    return order.refund({i})\n")
    root = make_repo(tmp_path / "repo", files)
    with Index.open(root) as idx:
        data = idx.context("refund the order", 4000)
    hits = [b for b in data["blocks"] if b["path"].startswith("pkg/handler_")]
    assert len(hits) > 10


def test_tests_rank_below_the_code_unless_asked_about(tmp_path: Path) -> None:
    # the test calls the top hit and matches every word: as a caller it would outrank the
    # second hit, were test code not demoted
    files = {
        "pkg/__init__.py": "",
        "pkg/money.py": "def round_amount(amount):\n    return round(amount, 2)\n",
        "pkg/text.py": "def format_amount(amount):\n    return f'{amount:.2f}'\n",
        "tests/test_money.py": (
            "from pkg.money import round_amount\n\n\n"
            "def test_round_amount_rounds_the_amount():\n"
            "    # round amount: the amount is rounded, the amount rounds\n"
            "    assert round_amount(1.234) == 1.23\n"),
    }
    root = make_repo(tmp_path / "repo", files)
    test_name = "test_money.test_round_amount_rounds_the_amount"
    with Index.open(root) as idx:
        plain = idx.context("round the amount", 2000)
        about_tests = idx.context("round the amount in the test", 2000)
    ranks = {i["qualified_name"]: i["rank"] for i in plain["items"]}
    assert ranks["pkg.text.format_amount"] < ranks[test_name]
    weights = ContextWeights()

    def formula(item: dict) -> float:
        parts = item["scores"]
        return (weights.semantic * parts["semantic"] + weights.lexical * parts["lexical"]
                + weights.proximity * parts["proximity"]
                + weights.centrality * parts["centrality"])
    demoted = next(i for i in plain["items"] if i["qualified_name"] == test_name)
    asked = next(i for i in about_tests["items"] if i["qualified_name"] == test_name)
    assert demoted["score"] <= weights.demoted * formula(demoted) + 1e-5
    assert asked["score"] == pytest.approx(formula(asked), abs=1e-5)


def test_a_graph_neighbour_never_outranks_its_hit(tmp_path: Path) -> None:
    # Registry is called by everything (central) and its name matches the query best; only
    # its method is a hit, and Registry comes in as the method's enclosing class
    users = {f"pkg/user_{i}.py": f"from pkg.registry import Registry\n\n\n"
                                 f"def use_{i}():\n    return Registry()\n" for i in range(8)}
    methods = "".join(f"    def other_{i}(self):\n        return {i}\n\n" for i in range(30))
    files = {"pkg/__init__.py": "", **users, "pkg/registry.py": (
        "class Registry:\n    \"\"\"Registry of plugins.\"\"\"\n\n" + methods
        + "    def unregister_plugin(self, plugin):\n"
          "        self.plugins.remove(plugin)\n")}
    root = make_repo(tmp_path / "repo", files)
    with Index.open(root) as idx:
        data = idx.context("unregister a plugin from the registry", 4000)
    ranks = {i["qualified_name"]: i for i in data["items"]}
    registry = ranks["pkg.registry.Registry"]
    method = ranks["pkg.registry.Registry.unregister_plugin"]
    assert method["rank"] < registry["rank"]
    assert registry["score"] <= method["score"]


def test_the_pack_ends_with_what_it_left_out(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": ""}
    for i in range(40):
        files[f"pkg/report_{i:02}.py"] = (
            f"def render_report_{i}(rows):\n"
            + "".join(f"    rows = [r for r in rows if r != {j}]  # report rows\n"
                      for j in range(12))
            + "    return rows\n")
    root = make_repo(tmp_path / "repo", files)
    counter = default_counter()
    with Index.open(root) as idx:
        data = idx.context("render the report rows", 1000)
    md = data["markdown"]
    assert data["left_out"], "a full budget leaves candidates out"
    tail = md.rsplit("Left out (the next best; ask for any of them by path and lines):\n", 1)
    assert len(tail) == 2
    listed = tail[1].split("\n")
    first = data["left_out"][0]
    module = first["path"].removesuffix(".py").replace("/", ".")  # pkg.report_06
    assert first["qualified_name"].startswith(module + ".")
    # named within its module: the path already says which
    assert listed[0] == (f"- {first['path']}:{first['start_line']}-{first['end_line']} "
                         f"{first['kind']} {first['qualified_name'].removeprefix(module + '.')}")
    assert all(item["included"] is None for item in data["left_out"])
    assert counter.count(md) == data["tokens"] <= 1000


def test_a_chunk_with_the_comments_above_a_definition_stands_for_it(tmp_path: Path) -> None:
    # the first chunk of a long function starts at the comment above it: one definition, so
    # one block, not the chunk and the definition side by side
    steps = "".join(f"    total = total + {i}  # step {i}\n" for i in range(400))
    files = {"pkg/__init__.py": "", "pkg/fees.py": (
        "# Fee rules: the discount for loyal customers.\n# Kept in one function.\n"
        "def apply_fees(total):\n    total = discount_loyal_customers(total)\n" + steps
        + "    return discount_loyal_customers(total)\n")}
    root = make_repo(tmp_path / "repo", files)
    with Index.open(root) as idx:
        data = idx.context("discount for loyal customers", 4000)
    blocks = [b for b in data["blocks"] if b["path"] == "pkg/fees.py"]
    assert len(blocks) == 1, blocks
    assert blocks[0]["items"][0] == "pkg.fees.apply_fees"


def test_the_last_chunk_of_a_long_definition_stands_for_it(tmp_path: Path) -> None:
    # a long Go function's last chunk holds the blank line below its closing brace: it once
    # stood for a range of its own, so the definition came twice, as two elided blocks
    steps = "".join(f"\ttotal = total + {i} // step {i}\n" for i in range(400))
    files = {"go.mod": "module example.com/fees\n\ngo 1.21\n", "fees.go": (
        "package fees\n\n// ApplyFees applies the fee rules.\nfunc ApplyFees(total int) int {\n"
        + steps + "\ttotal = discountLoyalCustomers(total) // the discount for loyal customers\n"
        "\treturn total\n}\n\n// Other is another function.\nfunc Other(n int) int {\n"
        + "".join(f"\tn = n * {i} // other {i}\n" for i in range(40)) + "\treturn n\n}\n")}
    root = make_repo(tmp_path / "repo", files)
    with Index.open(root) as idx:
        chunks = idx.store.conn.execute(
            "SELECT start_line, end_line FROM chunk WHERE path = 'fees.go' ORDER BY start_line"
        ).fetchall()
        data = idx.context("discount for loyal customers", 4000)
    assert (202, 408) in chunks  # the blank line below its closing brace (407) and no more
    blocks = [b for b in data["blocks"] if b["path"] == "fees.go"]
    assert [b["items"][0] for b in blocks].count("example.com/fees.ApplyFees") == 1, blocks


def test_a_chunk_of_small_definitions_named_for_its_last_keeps_them_all(tmp_path: Path) -> None:
    # search names a chunk for its best matching definition; one holding small methods and
    # the blank line below the last, named for the last, once stood for that one alone
    from knoxidx.answers.context_seeds import candidate_for_result

    files = {"go.mod": "module example.com/r\n\ngo 1.21\n", "r.go": (
        "package r\n\n// Mark marks.\nfunc Mark() int {\n\treturn 1\n}\n\n"
        "// Rewind rewinds.\nfunc Rewind() int {\n\treturn 2\n}\n\nfunc Other() int {\n"
        "\treturn 3\n}\n")}
    root = make_repo(tmp_path / "repo", files)
    with Index.open(root) as idx:
        both = candidate_for_result(idx, {
            "path": "r.go", "start_line": 3, "end_line": 12, "symbol": "example.com/r.Rewind",
            "definitions": ["example.com/r.Mark", "example.com/r.Rewind"]})
        alone = candidate_for_result(idx, {
            "path": "r.go", "start_line": 8, "end_line": 12, "symbol": "example.com/r.Rewind",
            "definitions": ["example.com/r.Rewind"]})
    assert (both.key, both.start, both.end) == ("range:r.go:3:12", 3, 12)
    assert alone.key.startswith("node:") and (alone.start, alone.end) == (9, 11)


def test_a_long_neighbour_ranked_high_shows_its_signature_and_matching_lines(
        tmp_path: Path) -> None:
    # a callee of the top hit, too long for a neighbour's share, was left out whole; shown
    # elided it brings the lines that match the question within that share
    steps = "".join(f"    total = total + {i}  # step {i}\n" for i in range(300))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "orders.py").write_text(
        "def refund_order(order):\n    return settle(order)\n")
    (tmp_path / "pkg" / "settle.py").write_text(
        "def settle(order):\n    total = 0\n" + steps[: len(steps) // 2]
        + "    ledger.refund(order)  # the refund of the order\n" + steps[len(steps) // 2:]
        + "    return total\n")
    files = Files(tmp_path, default_counter())

    def candidates(neighbour_relevance: float) -> list[Candidate]:
        hit = Candidate(key="node:1", path="pkg/orders.py", start=1, end=2, kind="Function",
                        name="pkg.orders.refund_order", signature="def refund_order(order):",
                        node_id=1, hit_rank=0, forced_signature=False, score=1.0,
                        relevance=1.0)
        callee = Candidate(key="node:2", path="pkg/settle.py", start=1, end=303,
                           kind="Function", name="pkg.settle.settle",
                           signature="def settle(order):", node_id=2, relation="callee",
                           forced_signature=False, score=neighbour_relevance,
                           relevance=neighbour_relevance)
        return [hit, callee]

    def packed(weights: ContextWeights, relevance: float) -> dict[str, object]:
        packer = Packer(files, files.counter, 4000, weights, frozenset({"refund", "order"}))
        packer.pack(candidates(relevance))
        return {b.path: b for b in packer.blocks}

    blocks = packed(ContextWeights(), 0.8)
    callee = blocks["pkg/settle.py"]
    assert callee.mode == "elided"
    shown = {line for start, end in callee.shown() for line in range(start, end + 1)}
    assert {1, 152} <= shown and 20 not in shown and 290 not in shown
    assert callee.tokens <= ContextWeights().block_share * 4000
    assert "pkg/settle.py" not in packed(ContextWeights(neighbour_elided=False), 0.8)
    # ranked far below the top hit, it waits for the budget the others leave
    assert "pkg/settle.py" not in packed(ContextWeights(fill_neighbours=False), 0.3)
    assert packed(ContextWeights(), 0.3)["pkg/settle.py"].mode == "elided"


def test_budget_left_at_the_end_goes_to_neighbours_below_the_cut_off(tmp_path: Path) -> None:
    # a caller ranked below the cut-off was left out even with most of the budget unused
    (tmp_path / "pkg").mkdir()
    for name in ("orders", "audit", "report"):
        (tmp_path / "pkg" / f"{name}.py").write_text(
            f"def {name}_refund(order):\n" + "".join(
                f"    order = order.step({i})  # {name}\n" for i in range(30))
            + "    return order\n")
    files = Files(tmp_path, default_counter())

    def candidates() -> list[Candidate]:
        def function(n: int, name: str, **kw: object) -> Candidate:
            return Candidate(key=f"node:{n}", path=f"pkg/{name}.py", start=1, end=32,
                             kind="Function", name=f"pkg.{name}.{name}_refund",
                             signature=f"def {name}_refund(order):", node_id=n,
                             forced_signature=False, **kw)  # type: ignore[arg-type]
        return [function(1, "orders", hit_rank=0, score=1.0, relevance=1.0),
                function(2, "audit", relation="caller", score=0.9, relevance=0.3),
                function(3, "report", hit_rank=1, score=0.8, relevance=0.8)]

    def packed(weights: ContextWeights, budget: int) -> list[str]:
        packer = Packer(files, files.counter, budget, weights, frozenset({"refund"}))
        packer.pack(candidates())
        return [b.path for b in packer.blocks]

    room = packed(ContextWeights(), 4000)
    assert room == ["pkg/orders.py", "pkg/report.py", "pkg/audit.py"]  # the caller last
    assert packed(ContextWeights(fill_neighbours=False), 4000) == room[:2]
    one_short = files.span_tokens("pkg/orders.py", 1, 32) * 2 + 250
    assert packed(ContextWeights(), one_short) == room[:2]  # never ahead of a hit


def test_budget_left_at_the_end_shows_a_neighbour_whole_up_to_a_hits_share(
        tmp_path: Path) -> None:
    # a caller ranked below the cut-off, longer than a neighbour's share of the greedy pass,
    # was cut to a window (or left out) although nothing else wanted the budget it fills
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "orders.py").write_text("def refund(order):\n    return order\n")
    (tmp_path / "pkg" / "audit.py").write_text(
        "def audit_refund(order):\n" + "".join(
            f"    order = order.record_step({i}, 'refund audit entry {i}')\n"
            for i in range(25)) + "    return order\n")
    files = Files(tmp_path, default_counter())
    caller_tokens = files.span_tokens("pkg/audit.py", 1, 27)
    w = ContextWeights()
    assert w.neighbour_share * 4000 < caller_tokens < w.block_share * 4000

    def packed() -> dict[str, object]:
        hit = Candidate(key="node:1", path="pkg/orders.py", start=1, end=2, kind="Function",
                        name="pkg.orders.refund", signature="def refund(order):", node_id=1,
                        hit_rank=0, forced_signature=False, score=1.0, relevance=1.0)
        caller = Candidate(key="node:2", path="pkg/audit.py", start=1, end=27,
                           kind="Function", name="pkg.audit.audit_refund",
                           signature="def audit_refund(order):", node_id=2, relation="caller",
                           forced_signature=False, score=0.3, relevance=0.3)
        packer = Packer(files, files.counter, 4000, w, frozenset({"refund"}))
        packer.pack([hit, caller])
        return {b.path: b for b in packer.blocks}

    caller = packed()["pkg/audit.py"]
    assert caller.mode == "full"  # type: ignore[attr-defined]
    assert caller.shown() == [(1, 27)]  # type: ignore[attr-defined]


def test_a_neighbour_longer_than_its_share_takes_only_what_the_others_leave(
        tmp_path: Path) -> None:
    # given a hit's share first, a long neighbour ranked higher took the room a short one
    # ranked below it fitted in within its own share
    (tmp_path / "pkg").mkdir()

    def write(name: str, lines: int) -> None:
        (tmp_path / "pkg" / f"{name}.py").write_text(f"def {name}(order):\n" + "".join(
            f"    order = order.apply_step({i}, 'the {name} step number {i}')\n"
            for i in range(lines)) + "    return order\n")

    for n in range(5):
        write(f"hit{n}", 12)
    write("long", 20)
    write("short", 3)
    files = Files(tmp_path, default_counter())
    w = ContextWeights(neighbour_elided=False)

    def function(n: int, name: str, **kw: object) -> Candidate:
        end = len(files.lines(f"pkg/{name}.py")) - 1
        return Candidate(key=f"node:{n}", path=f"pkg/{name}.py", start=1, end=end,
                         kind="Function", name=f"pkg.{name}.{name}", node_id=n,
                         signature=f"def {name}(order):", forced_signature=False,
                         **kw)  # type: ignore[arg-type]

    def ranked() -> list[Candidate]:
        hits = [function(n, f"hit{n}", hit_rank=n, score=1.0 - n / 10, relevance=1.0 - n / 10)
                for n in range(5)]
        return [*hits, function(5, "long", relation="caller", score=0.3, relevance=0.3),
                function(6, "short", relation="caller", score=0.2, relevance=0.2)]

    def cost(*names: str) -> int:
        packer = Packer(files, files.counter, 100_000, w)
        packer.pack([c for c in ranked() if c.name.rsplit(".", 1)[-1] in names])
        return packer.used

    hits = cost(*(f"hit{n}" for n in range(5)))
    long, short = cost("long"), cost("short")
    budget = hits + long + short // 2 + 160  # room for the long one, not for both
    packer = Packer(files, files.counter, budget, w)
    assert short < w.neighbour_share * budget < long < packer.cap
    packer.pack(ranked())
    paths = [b.path for b in packer.blocks]
    assert "pkg/short.py" in paths and "pkg/long.py" not in paths


def test_a_long_hit_from_its_doc_comment_shows_its_signature(tmp_path: Path) -> None:
    # a hit whose chunk starts at the doc comment above a definition stands for those lines:
    # the elided head once showed the doc's first line in place of the signature, and the
    # window could spend itself on the doc
    doc = "".join(f"/// The discount rules, part {i}.\n" for i in range(8)) + "#[must_use]\n"
    steps = [f"    total = total + {i}; // step {i}\n" for i in range(400)]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text(
        doc + "pub fn accumulate(mut total: u64) -> u64 {\n" + "".join(steps[:200])
        + "    total = apply_discount(total); // the discount for loyal customers\n"
        + "".join(steps[200:]) + "    total\n}\n")
    files = Files(tmp_path, default_counter())
    hit = Candidate(key="range:src/lib.rs:1:413", path="src/lib.rs", start=1, end=413,
                    kind="Function", name="shop::accumulate",
                    signature="pub fn accumulate(mut total: u64) -> u64", node_id=1,
                    hit_rank=0, forced_signature=False, score=1.0, relevance=1.0)
    packer = Packer(files, files.counter, 4000, ContextWeights(),
                    frozenset({"discount", "loyal", "customers"}))
    packer.pack([hit])
    block = packer.blocks[0]
    assert block.mode == "elided"
    shown = {line for start, end in block.shown() for line in range(start, end + 1)}
    assert {1, 10, 211} <= shown  # the doc's first line, the signature, the matching line
    assert not shown & set(range(2, 10))  # the rest of the doc is elided
    assert "pub fn accumulate(mut total: u64) -> u64 {" in block.body


def test_an_elided_chunk_of_two_definitions_shows_its_own_signature(tmp_path: Path) -> None:
    # a chunk holding a short definition above the one it stands for: the elided block once
    # took the chunk's first line for the head, showed the short one's body (it matched the
    # question too) and hid the signature and body of the definition it is named for
    steps = "".join(f"    total = total + {i}  # step {i}\n" for i in range(300))
    (tmp_path / "flags.py").write_text(
        "# Flag climbs up the command tree looking for a matching flag.\n"
        "def flag(name):\n    found = local_flag(name)\n    if found is None:\n"
        "        found = persistent_flag(name)  # the persistent flag\n    return found\n\n"
        "# Recursively find the matching persistent flag.\n"
        "def persistent_flag(name):\n    total = 0\n" + steps[: len(steps) // 2]
        + "    flag = parent_flags().lookup(name)  # the parent's persistent flag\n"
        + steps[len(steps) // 2:] + "    return flag\n")
    files = Files(tmp_path, default_counter())
    last = len(files.lines("flags.py"))
    hit = Candidate(key=f"range:flags.py:1:{last}", path="flags.py", start=1, end=last,
                    kind="Function", name="flags.persistent_flag",
                    signature="def persistent_flag(name):", node_id=2, hit_rank=0,
                    forced_signature=False, score=1.0, relevance=1.0)
    packer = Packer(files, files.counter, 4000, ContextWeights(),
                    frozenset({"persistent", "flag", "parent"}))
    packer.pack([hit])
    block = packer.blocks[0]
    assert block.mode == "elided"
    shown = {line for start, end in block.shown() for line in range(start, end + 1)}
    assert {9, 161} <= shown  # the signature and the line that matches
    assert "def persistent_flag(name):" in block.body


def test_budget_the_ranked_candidates_leave_is_filled_from_search_in_its_order(
        tmp_path: Path) -> None:
    # the hits come from search's first fused chunks only: what search finds deeper was never
    # shown, however much budget the pack left (plain search's results packed showed it)
    files = {"pkg/__init__.py": ""}
    for i in range(8):
        files[f"pkg/refund_{i}.py"] = (
            f"def refund_order_{i}(order):\n    \"\"\"Refund the order, case {i}.\"\"\"\n"
            f"    return order.refund({i})\n")
    root = make_repo(tmp_path / "repo", files)
    narrow = ContextWeights(search_depth=2, expand_hits=0, sibling=0.0, top_file_share=0.0,
                            recent=0.0)
    with Index.open(root) as idx:
        searched = {r["path"] for r in idx.search("refund the order", k=100)["results"]}
        filled = build_context(idx, "refund the order", max_tokens=4000, weights=narrow)
        assert len(searched) == 8
        assert {b["path"] for b in filled["blocks"]} == searched
        unfilled = build_context(idx, "refund the order", max_tokens=4000,
                                 weights=replace(narrow, fill_search=0))
    assert len({b["path"] for b in unfilled["blocks"]}) < 8
    # the ranked candidates first, then search's other results in its order
    assert filled["blocks"][:len(unfilled["blocks"])] == unfilled["blocks"]
    assert filled["tokens"] <= 4000


def test_the_search_fill_trims_what_is_shown_and_passes_over_what_does_not_fit(
        tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "orders.py").write_text("".join(
        f"def refund_{i}(order):\n    return order.refund({i})\n\n" for i in range(10)))
    (tmp_path / "pkg" / "big.py").write_text("def settle(order):\n" + "".join(
        f"    order = order.step({i})  # the refund step {i}\n" for i in range(300)))
    (tmp_path / "pkg" / "audit.py").write_text("def audit(order):\n    return order\n")
    files = Files(tmp_path, default_counter())

    def result(path: str, start: int, end: int) -> Candidate:
        return Candidate(key=f"search:{path}:{start}:{end}", path=path, start=start, end=end,
                         kind="Function", name=path, relation="search",
                         forced_signature=False)

    hit = Candidate(key="node:1", path="pkg/orders.py", start=1, end=2, kind="Function",
                    name="pkg.orders.refund_0", signature="def refund_0(order):", node_id=1,
                    hit_rank=0, forced_signature=False, score=1.0, relevance=1.0)
    fill = [result("pkg/orders.py", 1, 8), result("pkg/big.py", 1, 301),
            result("pkg/audit.py", 1, 2), result("pkg/orders.py", 4, 5)]
    packer = Packer(files, files.counter, 4000, ContextWeights(), frozenset({"refund"}))
    packer.pack([hit], lambda: fill)
    shown = [(b.path, b.shown()) for b in packer.blocks]
    # the hit's lines merged with the result around them, shown once; the long result, past
    # a hit's share, passed over for the next; one inside what is shown costs nothing
    assert shown == [("pkg/orders.py", [(1, 8)]), ("pkg/audit.py", [(1, 2)])]
    assert packer.placed(fill[3])
    packer.render([hit, *fill])
    assert [c.path for _, c in packer.left_out] == ["pkg/big.py"]


def test_a_used_type_and_the_imports_get_only_what_search_results_leave(
        tmp_path: Path) -> None:
    # the types a hit uses and its file's imports are read to understand a change, rarely
    # where it is made: they displaced search's own results that plain retrieval showed
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "orders.py").write_text(
        "from pkg.model import Order\n\nLIMIT = 3\nFEE = 2\n\n\n"
        "def refund(order: Order):\n    return order.refund()\n")
    (tmp_path / "pkg" / "model.py").write_text("class Order:\n" + "".join(
        f"    field_{i}: int = {i}\n" for i in range(8)))
    (tmp_path / "pkg" / "audit.py").write_text("def audit_refund(order):\n" + "".join(
        f"    order = order.check({i})  # the refund check {i}\n" for i in range(12))
        + "    return order\n")
    files = Files(tmp_path, default_counter())
    hit = Candidate(key="node:1", path="pkg/orders.py", start=7, end=8, kind="Function",
                    name="pkg.orders.refund", signature="def refund(order: Order):",
                    node_id=1, hit_rank=0, forced_signature=False, score=1.0, relevance=1.0)
    used = Candidate(key="node:2", path="pkg/model.py", start=1, end=9, kind="Class",
                     name="pkg.model.Order", node_id=2, relation="type",
                     links=[("type", "node:1")], forced_signature=False, score=0.9,
                     relevance=0.9)
    imports = Candidate(key="imports:pkg/orders.py", path="pkg/orders.py", start=1, end=1,
                        kind="imports", name="pkg/orders.py", relation="imports",
                        links=[("imports", "node:1")], forced_signature=False, score=0.8,
                        relevance=0.8)
    result = Candidate(key="search:pkg/audit.py:1:14", path="pkg/audit.py", start=1, end=14,
                       kind="Function", name="pkg.audit.audit_refund", relation="search",
                       forced_signature=False)
    w = ContextWeights(left_out=0)

    def packed(budget: int) -> list[str]:
        packer = Packer(files, files.counter, budget, w, frozenset({"refund"}))
        packer.pack([hit, used, imports], lambda: [result])
        return [f"{b.path}:{b.start}" for b in packer.blocks]

    # room for all: search's result comes before them
    assert packed(4000) == ["pkg/orders.py:7", "pkg/audit.py:1", "pkg/model.py:1",
                            "pkg/orders.py:1"]
    sizes = Packer(files, files.counter, 4000, w, frozenset({"refund"}))
    sizes.pack([hit, used, imports], lambda: [result])
    tokens = {f"{b.path}:{b.start}": b.tokens for b in sizes.blocks}
    assert tokens["pkg/audit.py:1"] > tokens["pkg/model.py:1"]
    # room for the hit and search's result only: the type and the imports are what is left out
    assert packed(tokens["pkg/orders.py:7"] + tokens["pkg/audit.py:1"]) == [
        "pkg/orders.py:7", "pkg/audit.py:1"]
    # a type that is also a callee (a constructor called) keeps its place in the ranking
    both = replace(used, links=[("type", "node:1"), ("callee", "node:1")])
    packer = Packer(files, files.counter, 4000, w, frozenset({"refund"}))
    packer.pack([hit, both], lambda: [result])
    assert [b.path for b in packer.blocks] == ["pkg/orders.py", "pkg/model.py", "pkg/audit.py"]


def test_a_definition_is_named_within_its_module_in_every_language() -> None:
    assert local_name("serde_json::ser::Formatter::write_f64", ["Formatter.write_f64"]) == \
        "Formatter::write_f64"
    # a Go method keeps its receiver's type; a TypeScript module path goes
    assert local_name("github.com/spf13/cobra.Command.HasParent",
                      ["Command.HasParent"]) == "Command.HasParent"
    assert local_name("src/middleware/persist:persist", ["persist"]) == "persist"
    # the longest of the file's names that the qualified name ends with
    assert local_name("org.jsoup.parser.Parser.parse", ["parse", "Parser.parse"]) == \
        "Parser.parse"
    # only after a separator, and never the whole name: else it stays as it is
    assert local_name("pkg.myparse", ["parse"]) == "pkg.myparse"
    assert local_name("parse", ["parse"]) == "parse"
    assert local_name("x.y", []) == "x.y"
    assert [short_name(n) for n in ("a.b.c", "a::b", "src/x:y", "plain")] == \
        ["c", "b", "y", "plain"]


def test_headers_name_definitions_within_their_module(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "go.mod": "module example.com/shop\n\ngo 1.21\n",
        "cart/cart.go": "package cart\n\n// Cart holds the items of an order.\ntype Cart struct"
                        "{ items []string }\n\n// Total sums the prices of the cart's items.\n"
                        "func (c *Cart) Total() int {\n\treturn len(c.items)\n}\n"})
    with Index.open(root) as idx:
        data = idx.context("sum the prices of the cart items", 2000)
    total = next(i for i in data["items"] if i["qualified_name"].endswith("Cart.Total"))
    assert total["qualified_name"] == "example.com/shop/cart.Cart.Total"  # the JSON: whole
    block = data["blocks"][total["block"]]
    assert block["header"].startswith("cart/cart.go:") and \
        "(Function Cart.Total — " in block["header"]
