"""Definition-sized results: the offline definition rerank and narrowing (rerank.py), and the
symbol source's handling of sentence queries."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from knoxidx.index import Index
from knoxidx.retrieval.chunker import chunk_file
from knoxidx.retrieval.intents import act_and_object, name_openings
from knoxidx.retrieval.query_words import QueryWords
from knoxidx.retrieval.rerank import (
    asks_for_declaration,
    narrow,
    query_units,
    rerank_definitions,
)
from knoxidx.retrieval.rerank_weights import RerankWeights
from knoxidx.retrieval.searcher import looks_like_code
from knoxidx.retrieval.units import units, without_doc_examples


class D(NamedTuple):
    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int
    signature: str = ""
    parent: int = -1
    doc: str = ""


SOURCE = (
    "def feed_zebra(bucket):\n"          # 1
    "    pellets = bucket.take()\n"
    "    return pellets.pour()\n"
    "\n"
    "class Volcano:\n"                   # 5
    "    def erupt(self, magma):\n"
    "        crater = magma.melt()\n"
    "        return crater\n"
    "\n"
    "    def cool(self, lava):\n"        # 10
    "        basalt = lava.harden()\n"
    "        return basalt\n"
)
DEFS = [
    D("Function", "feed_zebra", "feed_zebra", 1, 3),
    D("Class", "Volcano", "Volcano", 5, 12),
    D("Function", "erupt", "Volcano.erupt", 6, 8),
    D("Function", "cool", "Volcano.cool", 10, 12),
]


def one_chunk():
    chunks = chunk_file("v.py", SOURCE.encode(), "python", [])
    assert len(chunks) == 1  # small neighbours merged: the case this is about
    return chunks[0]


def words(query: str) -> QueryWords:
    return QueryWords(query, {}, 0)  # no frequencies: every word weighs the same


def test_units_are_the_innermost_definitions_of_a_chunk() -> None:
    chunk = one_chunk()
    assert [u.symbol for u in units(1, chunk, DEFS)] == ["feed_zebra", "Volcano.erupt",
                                                         "Volcano.cool"]
    single = units(1, chunk, DEFS[:1])  # one definition: the chunk stands for itself
    assert [(u.start_line, u.end_line) for u in single] == [(1, 12)]


def test_narrow_picks_the_definition_the_query_is_about() -> None:
    chunk = one_chunk()
    weights = RerankWeights()
    best = narrow(1, chunk, DEFS, words("harden the lava into basalt"), weights)
    assert (best.symbol, best.start_line, best.end_line) == ("Volcano.cool", 10, 12)
    whole = narrow(1, chunk, DEFS, words("quantum entanglement"), weights)
    assert (whole.start_line, whole.end_line) == (1, 12)  # nothing shared: the chunk


def test_a_small_chunk_stands_for_itself_unless_one_definition_clearly_wins() -> None:
    chunk = one_chunk()  # 12 lines, three small definitions
    small = RerankWeights(whole_lines=50, narrow_margin=3.0)
    # "magma" and "lava" are one word each of erupt and cool: no clear winner, the chunk
    ambiguous = query_units(1, chunk, DEFS, words("magma lava"), small)
    assert [(u.start_line, u.end_line) for u in ambiguous] == [(1, 12)]
    assert (narrow(1, chunk, DEFS, words("magma lava"), small).start_line,
            narrow(1, chunk, DEFS, words("magma lava"), small).end_line) == (1, 12)
    # cool shares all three words, nothing else shares any: narrowed as before
    clear = narrow(1, chunk, DEFS, words("harden the lava into basalt"), small)
    assert (clear.symbol, clear.start_line, clear.end_line) == ("Volcano.cool", 10, 12)
    # a chunk longer than whole_lines is always split into its definitions
    short = RerankWeights(whole_lines=11, narrow_margin=3.0)
    assert len(query_units(1, chunk, DEFS, words("magma lava"), short)) == 3
    # and with whole_lines 0 (the old behaviour) too
    assert len(query_units(1, chunk, DEFS, words("magma lava"), RerankWeights(whole_lines=0))) == 3


def test_rerank_lists_definitions_best_first_across_chunks() -> None:
    chunk = one_chunk()
    other = chunk_file("w.py", b"def erupt_geyser(water):\n    return water.boil()\n", "python",
                       [])[0]
    defs = {"v.py": DEFS, "w.py": [D("Function", "erupt_geyser", "erupt_geyser", 1, 2)]}
    ranked = rerank_definitions([2, 1], {1: chunk, 2: other}, lambda p: defs[p],
                               words("erupt the volcano magma"), RerankWeights())
    # the second chunk's erupt method beats the first chunk's geyser: its lines and name say more
    assert ranked[0].symbol == "Volcano.erupt"
    # a chunk of one definition stands for itself
    assert {(u.chunk_id, u.start_line, u.end_line) for u in ranked} == {
        (2, 1, 2), (1, 1, 3), (1, 6, 8), (1, 10, 12)
    }
    assert [u.score for u in ranked] == sorted((u.score for u in ranked), reverse=True)


def test_the_rerank_asks_for_each_files_definitions_once() -> None:
    # the searcher checks a file's version each time it is asked; the 60 chunks a rerank
    # reads share files, and asking again cost a query each
    volcano = one_chunk()
    other = chunk_file("w.py", b"def erupt_geyser(water):\n    return water.boil()\n", "python",
                       [])[0]
    defs = {"v.py": DEFS, "w.py": [D("Function", "erupt_geyser", "erupt_geyser", 1, 2)]}
    asked: list[str] = []

    def definitions(path: str) -> list[D]:
        asked.append(path)
        return defs[path]

    # two chunks of v.py (an overlapping one, as a chunk and a piece of it may both rank)
    chunks = {1: volcano, 2: other, 3: replace(volcano, start_line=5)}
    ranked = rerank_definitions(list(chunks), chunks, definitions,
                                words("erupt the volcano magma"), RerankWeights())
    assert ranked[0].symbol == "Volcano.erupt"
    assert sorted(asked) == ["v.py", "w.py"]


def test_a_chunk_kept_whole_is_named_by_each_definition_it_holds() -> None:
    # "erupt lava" is no clear win for one of the small chunk's definitions, so the chunk
    # stands for itself; it used to be named only by its first definition (feed_zebra) and
    # lost to a function that shares the words in a comment but not in its name
    chunk = one_chunk()
    comment = chunk_file("w.py", b"def stir_pot(pot):\n    # erupt lava\n    return pot\n",
                         "python", [])[0]
    defs = {"v.py": DEFS, "w.py": [D("Function", "stir_pot", "stir_pot", 1, 3)]}
    weights = RerankWeights(similarity=0.0, named_first=0.0, intent=0.0, subject=0.0)
    [whole] = query_units(1, chunk, DEFS, words("erupt lava"), weights)
    assert (whole.start_line, whole.end_line) == (1, 12)
    ranked = rerank_definitions([2, 1], {1: chunk, 2: comment}, lambda p: defs[p],
                                words("erupt lava"), weights)
    assert [(u.chunk_id, u.start_line, u.end_line) for u in ranked] == [(1, 1, 12), (2, 1, 3)]


def test_code_shaped_words() -> None:
    assert all(looks_like_code(w) for w in ("parse_config", "parseConfig", "HTTPServer",
                                            "os.path", "std::io"))
    assert not any(looks_like_code(w) for w in ("Return", "context", "the", "_private_"[1:2]))


def test_search_results_are_definitions_and_sentences_are_not_name_lookups(
    tmp_path: Path,
) -> None:
    (tmp_path / "v.py").write_text(SOURCE)
    (tmp_path / "context.py").write_text("def context(x):\n    return x\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        for mode in ("lexical", "hybrid"):  # hybrid without vectors: lexical + symbol, reranked
            top = idx.search("harden the lava into basalt", mode=mode)["results"][0]
            assert (top["path"], top["start_line"], top["end_line"]) == ("v.py", 10, 12)
            assert top["symbol"].endswith("Volcano.cool") and "basalt" in top["snippet"]
        # "context" is a plain word here, not a name to look up; alone, it is one
        answer = idx.search("return the context of the magma", mode="hybrid")
        assert all("symbol" not in r["sources"] for r in answer["results"])
        alone = idx.search("context", mode="hybrid")["results"][0]
        assert alone["path"] == "context.py" and "symbol" in alone["sources"]


def test_definitions_kept_between_searches_follow_file_changes(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text(SOURCE)
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        # "harden" is cool's alone (quench_basalt, added below, also speaks of lava and basalt:
        # with it, "harden the lava into basalt" has no clear winner in the small chunk)
        top = idx.search("harden", mode="lexical")["results"][0]
        assert (top["start_line"], top["end_line"]) == (10, 12)
        # two lines above everything: every definition moves down, a new one is added
        (tmp_path / "v.py").write_text("import os\n\n" + SOURCE
                                       + "\n\ndef quench_basalt(lava):\n    return lava.cool()\n")
        idx.update(jobs=1)
        top = idx.search("harden", mode="lexical")["results"][0]
        assert (top["start_line"], top["end_line"]) == (12, 14)
        new = idx.search("quench basalt", mode="hybrid")["results"][0]
        assert (new["start_line"], new["end_line"], new["symbol"].split(".")[-1]) == (
            17, 18, "quench_basalt")


def test_stems_join_the_forms_of_a_word_and_nothing_else() -> None:
    from knoxidx.retrieval.terms import stem

    groups = [("return", "returns", "returned", "returning"), ("copy", "copies"),
              ("create", "creates", "created", "creating"), ("parse", "parses", "parsing"),
              ("match", "matches"), ("debug", "debugging"), ("box", "boxes")]
    for group in groups:
        assert len({stem(w) for w in group}) == 1, group
    assert len({stem(group[0]) for group in groups}) == len(groups)
    # short words, digits and words ending like plurals but not plurals stay as they are
    assert [stem(w) for w in ("is", "gets", "utf8", "class", "status", "analysis")] == [
        "is", "get", "utf8", "class", "status", "analysis"]


def test_an_adverb_stems_as_the_word_it_is_made_of() -> None:
    """"Blockingly locks this RwLock ..." asks for `blocking_read`; "-ly" hid the word."""
    from knoxidx.retrieval.terms import stem

    pairs = [("blockingly", "blocking"), ("exactly", "exact"), ("recursively", "recursive"),
             ("asynchronously", "asynchronous"), ("initially", "initial"), ("firstly", "first")]
    for adverb, word in pairs:
        assert stem(adverb) == stem(word), adverb
    # words that only end like adverbs keep their ending
    for word, looks_like in (("apply", "app"), ("supply", "supp"), ("assembly", "assemb"),
                             ("family", "fami"), ("only", "on"), ("readonly", "readon"),
                             ("early", "ear"), ("anomaly", "anoma")):
        assert stem(word) != stem(looks_like), word


def test_stemmed_rerank_matches_a_doc_comments_inflections() -> None:
    source = (b"def new_copy(item):\n    return item.clone()\n\n"
              b"def make_entry(item):\n    return item.create()\n")
    defs = [D("Function", "new_copy", "new_copy", 1, 2),
            D("Function", "make_entry", "make_entry", 4, 5)]
    chunk = chunk_file("c.py", source, "python", [])[0]
    query = "Creates an entry for the items"
    plain = rerank_definitions([1], {1: chunk}, lambda p: defs, words(query),
                               RerankWeights(whole_lines=0))
    stemmed = rerank_definitions([1], {1: chunk}, lambda p: defs,
                                 QueryWords(query, {}, 0, stems=True),
                                 RerankWeights(whole_lines=0, stems=True))
    # without stems only "entry" meets make_entry; with them "creates" meets `create` and
    # "items" meets `item` (in both functions), so make_entry wins by more
    assert plain[0].symbol == stemmed[0].symbol == "make_entry"
    plain_gap = plain[0].score - plain[1].score
    stemmed_gap = stemmed[0].score - stemmed[1].score
    assert stemmed[0].score > plain[0].score and stemmed_gap > plain_gap


def test_similarity_lifts_the_chunk_whose_vector_is_closest() -> None:
    chunk = one_chunk()
    other = chunk_file("w.py", b"def erupt_geyser(water):\n    return water.boil()\n", "python",
                       [])[0]
    defs = {"v.py": DEFS, "w.py": [D("Function", "erupt_geyser", "erupt_geyser", 1, 2)]}
    args = ([2, 1], {1: chunk, 2: other}, lambda p: defs[p], words("erupt the volcano magma"))
    without = rerank_definitions(*args, RerankWeights(similarity=2.0, named_first=0.0))
    assert without[0].symbol == "Volcano.erupt"  # no cosines given: as before
    closer = rerank_definitions(*args, RerankWeights(similarity=2.0, named_first=0.0), similarity={2: 0.9, 1: 0.1})
    assert closer[0].chunk_id == 2
    # a chunk without a vector counts as the least similar one given
    floor = rerank_definitions(*args, RerankWeights(similarity=2.0, named_first=0.0), similarity={2: 0.9, 3: 0.1})
    assert [(u.chunk_id, u.start_line) for u in floor] == [
        (u.chunk_id, u.start_line) for u in closer]


def test_scope_words_tell_apart_the_same_method_of_sibling_classes() -> None:
    from knoxidx.retrieval.rerank import scope_words

    assert scope_words("time/chrono/MinguoChronology.java", "MinguoChronology.isLeapYear") == {
        "minguochronology", "minguo", "chronology"}
    assert scope_words("src/lib.rs", "Runtime::block_on") >= {"runtime", "lib"}
    # a file named after its directory is held by the directory's name, not its own
    assert scope_words("_examples/clone/main.go", "main") == {"clone"}
    assert scope_words("tokio/src/lib.rs", "spawn") == {"tokio"}
    source = b"def is_leap_year(year):\n    return year % 4 == 0\n"
    defs = [D("Function", "is_leap_year", "MinguoCalendar.is_leap_year", 1, 2)]
    minguo = chunk_file("minguo.py", source, "python", [])[0]
    thai = chunk_file("thai.py", source, "python", [])[0]
    query = QueryWords("Checks if the year is a leap year in the Minguo calendar", {}, 0)
    for weights, winner in ((RerankWeights(scope=0.0), 1), (RerankWeights(scope=1.0), 2)):
        ranked = rerank_definitions(
            [1, 2], {1: thai, 2: minguo},
            lambda p: defs if p == "minguo.py" else [D("Function", "is_leap_year",
                                                       "ThaiCalendar.is_leap_year", 1, 2)],
            query, weights)
        assert ranked[0].chunk_id == winner  # without scope the fused order decides


def test_by_default_the_vectors_cosine_breaks_a_tie_of_words() -> None:
    """Two copies of one function: the words cannot tell them apart, the fused order puts the
    first ahead, and by default the one whose chunk vector is closer to the query wins."""
    source = b"def cool_lava(lava):\n    return lava.harden()\n"
    first = chunk_file("a.py", source, "python", [])[0]
    second = chunk_file("b.py", source, "python", [])[0]
    defs = [D("Function", "cool_lava", "cool_lava", 1, 2)]
    args = ([1, 2], {1: first, 2: second}, lambda p: defs, words("cool the lava"))
    assert rerank_definitions(*args, RerankWeights(similarity=0.0),
                              similarity={1: 0.3, 2: 0.6})[0].chunk_id == 1
    assert rerank_definitions(*args, RerankWeights(), similarity={1: 0.3, 2: 0.6})[0].chunk_id == 2


def test_a_result_whose_best_line_is_a_doc_comment_names_the_method_it_documents(
    tmp_path: Path,
) -> None:
    """A Java class split at its members: a chunk is one method with its Javadoc above it.
    The result used to be named after the innermost definition around its best-matching line,
    a Javadoc line, which is the class: `Calendars` instead of `Calendars.leapDays`."""
    methods = []
    for name, what in [("leapDays", "the number of leap days in the given era of the calendar"),
                       ("monthLength", "how many days a month of the lunar calendar has"),
                       ("weekStart", "which weekday starts the week in the given locale")]:
        methods.append(
            "    /**\n"
            + f"     * Computes {what}.\n"
            + "".join(f"     * Line {i} of a long comment that says nothing more.\n"
                      for i in range(12))
            + "     */\n"
            + f"    public int {name}(int year) {{\n        return year % 7;\n    }}\n"
        )
    (tmp_path / "Calendars.java").write_text(
        "package cal;\n\npublic class Calendars {\n" + "\n".join(methods) + "}\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        top = idx.search("the month of the lunar calendar")["results"][0]
        assert (top["start_line"], top["end_line"]) == (23, 41)  # Javadoc and method
        assert (top["symbol"], top["kind"]) == ("cal.Calendars.monthLength", "Function")


def test_a_result_whose_best_line_documents_a_nested_function_names_that_function(
    tmp_path: Path,
) -> None:
    """An ESLint rule: `create(context)` holds a dozen helpers, each with its JSDoc; the
    chunks are cut at the helpers, so each holds one helper and the doc above it, inside
    `create`. The result was named after the innermost definition around its best-matching
    line, the JSDoc's, which is `create`; a comment line documents what follows it."""
    acts = ["a node and a token are separated by blank lines", "the token closes the list",
            "the line is indented by tabs", "a comment sits alone on its line",
            "the parenthesis opens a call", "the keyword starts a loop",
            "the arrow has a body block", "the string holds an escape",
            "the operator is a ternary", "the template has expressions",
            "the label is used", "the array is sparse"]
    helpers = []
    for number, act in enumerate(acts):
        body = "".join(f"            const step{i} = sourceCode.getTokenAfter(node, {i});\n"
                       for i in range(14))
        helpers.append("        /**\n"
                       f"         * Checks whether {act}.\n"
                       "         */\n"
                       f"        function helper{number}(node, token) {{\n{body}"
                       "            return step0 !== token;\n"
                       "        }\n")
    (tmp_path / "rule.js").write_text(
        "module.exports = {\n    create(context) {\n"
        "        const sourceCode = context.sourceCode;\n\n" + "\n".join(helpers)
        + "        return {};\n    }\n};\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        for number in (0, 7):
            top = idx.search(f"Checks whether {acts[number]}")["results"][0]
            assert (top["symbol"], top["kind"]) == (f"rule:create.helper{number}", "Function")



def test_a_result_whose_best_line_is_in_the_file_header_is_named_after_the_file(
    tmp_path: Path,
) -> None:
    """A chunk holding a module's docstring and imports, then a class and its constructor,
    found by words of the imports: it was named after a code definition below the best line
    (`Function HostKeys.__init__` in paramiko's hostkeys.py, the class here); it is the
    file's."""
    (tmp_path / "hostkeys.py").write_text(
        '"""Keys of the hosts this client has seen."""\n\n'
        "from base64 import encodebytes, decodebytes\n"
        "import binascii\n"
        "from collections.abc import MutableMapping\n"
        "from hashlib import sha1\n\n\n"
        "class HostKeys(MutableMapping):\n"
        '    """The known hosts."""\n\n'
        "    def __init__(self, filename=None):\n"
        "        self._entries = []\n"
        "        if filename is not None:\n"
        "            self.load(filename)\n\n"
        "    def load(self, filename):\n"
        "        return filename\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        top = idx.search("binascii sha1 encodebytes", mode="lexical")["results"][0]
        assert top["start_line"] == 1
        assert (top["symbol"], top["kind"]) == ("hostkeys.py", "File")
        # a line of the class below the header still names what it is in
        top = idx.search("the known hosts", mode="lexical")["results"][0]
        assert top["kind"] != "File"


HEADER = (
    "class ReadBuffer:\n"                                       # 1
    '    """A buffer that is filled and initialized bit by bit: new buffers start\n'
    '    uninitialized, and a reader fills them."""\n'
    "\n"
    "    def __init__(self, size):\n"                            # 5
    "        self.size = size\n"
)
HEADER_DEFS = [D("Class", "ReadBuffer", "ReadBuffer", 1, 6),
               D("Function", "__init__", "ReadBuffer.__init__", 5, 6)]
METHOD = "def uninit(size):\n    return ReadBuffer(size)\n"
METHOD_DEFS = [D("Function", "uninit", "uninit", 1, 2)]
STRUCT = "class ReadBuffer:\n    size: int\n    filled: int\n    initialized: int\n"
STRUCT_DEFS = [D("Class", "ReadBuffer", "ReadBuffer", 1, 4)]


def test_a_unit_that_only_declares_yields_to_a_function_when_the_scores_are_close() -> None:
    """A type's declaration whose doc sums up its methods outranked the method asked about
    (tokio's `ReadBuf` struct above `ReadBuf::uninit`); it now scores x0.8 when it holds no
    function, unless the question names a thing. A class with a method in it is not a
    declaration only."""
    struct = chunk_file("s.py", STRUCT.encode(), "python", [])[0]
    method = chunk_file("m.py", METHOD.encode(), "python", [])[0]
    header = chunk_file("h.py", HEADER.encode(), "python", [])[0]
    defs = {"s.py": STRUCT_DEFS, "m.py": METHOD_DEFS, "h.py": HEADER_DEFS}
    question = words("Creates a new buffer uninitialized")
    # the struct is ranked first by the sources (and shares the query's words); the function
    # second: the struct's lead is within what the prior takes back
    for prior, first in ((1.0, 1), (0.8, 2)):
        ranked = rerank_definitions([1, 2], {1: struct, 2: method}, lambda p: defs[p],
                                    question, RerankWeights(declaration_only=prior))
        assert ranked[0].chunk_id == first
    # the class with a method in it keeps its score
    plain = rerank_definitions([3, 2], {3: header, 2: method}, lambda p: defs[p], question,
                               RerankWeights(declaration_only=1.0))
    prior = rerank_definitions([3, 2], {3: header, 2: method}, lambda p: defs[p], question,
                               RerankWeights(declaration_only=0.8))
    assert [(u.chunk_id, u.score) for u in plain] == [(u.chunk_id, u.score) for u in prior]
    # a question that names a thing leaves the struct its score
    thing = words("The buffer that is uninitialized")
    ranked = [rerank_definitions([1, 2], {1: struct, 2: method}, lambda p: defs[p], thing,
                                 RerankWeights(declaration_only=w)) for w in (1.0, 0.8)]
    assert [(u.chunk_id, u.score) for u in ranked[0]] == [(u.chunk_id, u.score) for u in ranked[1]]


def test_a_question_that_begins_with_the_types_name_leaves_it_its_score() -> None:
    """Go's doc comments begin with the name of what they document ("ReadBuffer holds ..."):
    such a question about a type is about that type."""
    struct = chunk_file("s.py", STRUCT.encode(), "python", [])[0]
    method = chunk_file("m.py", METHOD.encode(), "python", [])[0]
    defs = {"s.py": STRUCT_DEFS, "m.py": METHOD_DEFS}
    chunks = {1: replace(struct, symbol="ReadBuffer"), 2: method}
    go_style = words("ReadBuffer holds a new buffer, uninitialized")
    ranked = [rerank_definitions([1, 2], chunks, lambda p: defs[p], go_style,
                                 RerankWeights(declaration_only=w)) for w in (1.0, 0.8)]
    assert [(u.chunk_id, u.score) for u in ranked[0]] == [(u.chunk_id, u.score) for u in ranked[1]]
    verb = words("Holds a new buffer, uninitialized")  # the same question, a verb first
    plain, prior = ({u.chunk_id: u.score for u in rerank_definitions(
        [1, 2], chunks, lambda p: defs[p], verb, RerankWeights(declaration_only=w))}
        for w in (1.0, 0.8))
    assert prior[1] == pytest.approx(0.8 * plain[1]) and prior[2] == plain[2]


def test_what_reads_as_a_question_about_a_thing() -> None:
    assert asks_for_declaration("A handle to the runtime's I/O driver")
    assert asks_for_declaration("the struct holding the read buffer")
    assert asks_for_declaration("which trait do readers implement?")
    assert not asks_for_declaration("Creates a new ReadBuf from an uninitialized buffer")
    assert not asks_for_declaration("parse the config file")
    assert not asks_for_declaration("")


def test_a_question_about_a_type_still_finds_the_type(tmp_path: Path) -> None:
    (tmp_path / "buffers.py").write_text(STRUCT + "\n\n" + METHOD)
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        top = idx.search("read buffer filled initialized")["results"][0]
        assert (top["symbol"], top["kind"]) == ("buffers.ReadBuffer", "Class")


def test_a_question_that_begins_with_a_definitions_name_is_about_it() -> None:
    """Go's doc comments begin with the name of what they document; so may a user's question.
    The name must be exact, case and all: a capitalised verb heading a sentence is not one."""
    chunk = one_chunk()
    defs = {"v.py": DEFS}

    def top(query: str, bonus: float) -> str:
        ranked = rerank_definitions([1], {1: chunk}, lambda p: defs[p], words(query),
                                    RerankWeights(named_first=bonus, whole_lines=0))
        return ranked[0].symbol

    assert top("erupt the lava and harden it into basalt", 0.0) == "Volcano.cool"  # more shared
    assert top("erupt the lava and harden it into basalt", 1.0) == "Volcano.erupt"
    assert top("Erupt the lava and harden it into basalt", 1.0) == "Volcano.cool"


def test_a_part_of_a_long_function_is_named_after_it_not_after_a_closure_below(
    tmp_path: Path,
) -> None:
    """A function too long for one chunk is split; a part whose best line is the function's
    own code is that function, even when a nested definition starts further down the part."""
    def lines(start: int) -> str:
        return "".join(f"    total_{i} = ledger.post(entry_{i}, account_{i})\n"
                       for i in range(start, start + 200))

    (tmp_path / "books.py").write_text(
        "def reconcile_ledger(ledger):\n"
        + lines(0)
        + "    harmonise_the_quarterly_accruals = ledger.accruals()\n"
        + "    def inner_helper(x):\n        return x\n"
        + lines(200)
        + "    return ledger\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        found = idx.search("harmonise_the_quarterly_accruals", mode="lexical")["results"]
        top = found[0]
        assert top["start_line"] > 1 and top["end_line"] < 404  # a part of the function
        assert top["symbol"].endswith("reconcile_ledger"), top


def test_a_unit_whose_declaration_is_closer_to_the_query_rises() -> None:
    chunk = one_chunk()
    args = ([1], {1: chunk}, lambda p: DEFS, words("erupt cool"))
    split = RerankWeights(whole_lines=0, named_first=0.0)  # every definition a unit
    plain = rerank_definitions(*args, split)
    assert [u.symbol for u in plain[:2]] == ["Volcano.erupt", "Volcano.cool"]  # a tie: by order

    def closeness(unit, held_in):
        assert held_in is chunk
        return {"Volcano.cool": 0.3}.get(unit.symbol, 0.0)

    closer = rerank_definitions(*args, split, declaration_closeness=closeness)
    assert [u.symbol for u in closer[:2]] == ["Volcano.cool", "Volcano.erupt"]
    cool = next(u for u in plain if u.symbol == "Volcano.cool")
    assert closer[0].score == pytest.approx(cool.score + split.declaration * 0.3)
    # weight 0: no such term
    off = rerank_definitions(*args, replace(split, declaration=0.0),
                             declaration_closeness=closeness)
    assert [u.symbol for u in off] == [u.symbol for u in plain]


def test_what_a_questions_opening_says_of_the_name_it_asks_for() -> None:
    checks = name_openings("Checks whether the path is ignored.")
    assert {"is", "has", "can"} <= checks
    assert "check" not in checks  # the opening's own word: the words count it already
    assert "new" in name_openings("Creates a reader over the buffer")
    assert "init" in name_openings("Constructs an empty set")
    assert "delete" in name_openings("Removes every entry of the map")
    assert "to" in name_openings("Returns a string representation of it")
    # an opening that names no kind of act implies no name, nor does a verb further on
    assert name_openings("Returns the size of the set") == frozenset()
    assert name_openings("The cache that checks whether entries expired") == frozenset()
    # a definition's act, and what it acts on: the rest of its name, else what holds it,
    # by the last word of its name (a `LinkedList` is a list: "Creates a new symbolic link"
    # is not its `new`), less the words that say how it is built
    assert act_and_object("pkg.Walker.isIgnored") == ("is", ("ignored",))
    assert act_and_object("NewReader") == ("new", ("reader",))
    assert act_and_object("java.time.Period.of") == ("of", ("period",))
    assert act_and_object("tokio::io::Reader::new") == ("new", ("reader",))
    assert act_and_object("LinkedList.new") == ("new", ("list",))
    assert act_and_object("chrono.ChronoLocalDateImpl.of") == ("of", ("date",))
    assert act_and_object("rules/no-loop:create") == ("create", ("loop",))


def test_a_unit_named_as_the_questions_opening_implies_rises() -> None:
    source = (
        "class Queue:\n"
        "    def drained(self, tasks):\n"
        "        return tasks.flush()\n"
        "\n"
        "    def has_manifest(self, tasks):\n"
        "        return tasks.flush()\n"
        "\n"
        "    def is_drained(self, tasks):\n"
        "        return not tasks.flush()\n"
    )
    [chunk] = chunk_file("q.py", source.encode(), "python", [])
    defs = [D("Class", "Queue", "Queue", 1, 9), D("Function", "drained", "Queue.drained", 2, 3),
            D("Function", "has_manifest", "Queue.has_manifest", 5, 6),
            D("Function", "is_drained", "Queue.is_drained", 8, 9)]
    split = RerankWeights(whole_lines=0, named_first=0.0)

    def ranked(query: str, weights: RerankWeights) -> list[str]:
        units = rerank_definitions([1], {1: chunk}, lambda p: defs, words(query), weights)
        return [u.symbol for u in units]

    question = "Checks whether the queue tasks were drained"
    assert ranked(question, replace(split, intent=0.0))[0] == "Queue.drained"  # a tie of words
    with_intent = ranked(question, split)
    assert with_intent[0] == "Queue.is_drained"
    # a predicate about something else does not rise: it goes on with no word of the question
    assert with_intent.index("Queue.has_manifest") > with_intent.index("Queue.drained")
    assert ranked("Flush the queue tasks until drained", split)[0] == "Queue.drained"


RULE_SOURCE = (
    "function create(context) {\n"                          # 1
    "    function checkForEmptyLine(token) {\n"             # 2
    "        if (token.before) {\n"
    "            context.report({\n"
    "                node: token,\n"
    "                fix(fixer) {\n"                        # 6
    "                    return fixer.insertTextBefore(token, '\\n');\n"
    "                }\n"                                   # 8
    "            });\n"
    "        }\n"
    "        if (token.after) {\n"
    "            context.report({\n"
    "                node: token,\n"
    "                fix(fixer) {\n"                        # 14
    "                    return fixer.insertTextAfter(token, '\\n');\n"
    "                }\n"                                   # 16
    "            });\n"
    "        }\n"
    "    }\n"                                               # 19
    "    function isInline(token) {\n"                      # 20
    "        return token.loc.start.line === token.loc.end.line;\n"
    "    }\n"                                               # 22
    "    return { Program: () => context.comments.forEach(checkForEmptyLine) };\n"
    "}\n"
)
RULE_DEFS = [
    D("Function", "create", "create", 1, 24),
    D("Function", "checkForEmptyLine", "create.checkForEmptyLine", 2, 19),
    D("Function", "fix", "create.checkForEmptyLine.fix", 6, 8),
    D("Function", "fix", "create.checkForEmptyLine.fix", 14, 16),
    D("Function", "isInline", "create.isInline", 20, 22),
]


def test_a_helper_holding_callbacks_stays_a_unit_beside_them() -> None:
    # ESLint's rules: `create` holds helpers, a helper holds `fix(fixer)` callbacks. The
    # helper used to give way to its callbacks, so a question about it could only be
    # answered by a three-line `fix`.
    chunks = chunk_file("rule.js", RULE_SOURCE.encode(), "javascript", [])
    assert len(chunks) == 1
    found = units(1, chunks[0], RULE_DEFS)
    assert [(u.symbol, u.start_line) for u in found] == [
        ("create.checkForEmptyLine", 2), ("create.checkForEmptyLine.fix", 6),
        ("create.checkForEmptyLine.fix", 14), ("create.isInline", 20)]
    best = narrow(1, chunks[0], RULE_DEFS, words("check for an empty line before or after the token"),
                  RerankWeights(whole_lines=0))
    assert (best.symbol, best.start_line, best.end_line) == ("create.checkForEmptyLine", 2, 19)
    # one function deep is unchanged: a method's inner function still replaces the method
    nested = [D("Class", "C", "C", 1, 24), D("Function", "m", "C.m", 2, 19),
              D("Function", "inner", "C.m.inner", 6, 8), D("Function", "n", "C.n", 20, 22)]
    assert [u.symbol for u in units(1, chunks[0], nested)] == ["C.m.inner", "C.n"]


def test_the_type_a_question_calls_this_tells_apart_same_named_methods() -> None:
    """"... a copy of this date with ... years subtracted": the same method of a date-time
    type shares every word of the target, and the words of its type as many as the target's
    (`scope`); Javadoc's "this date" names the receiver, so the date type's method wins."""
    from knoxidx.retrieval.namesakes import holder_is, query_subject

    assert query_subject("Compares this OffsetTime to another time.", True) == ("offset", "time")
    assert query_subject("Checks if this date-time is before", False) == ("date", "time")
    assert query_subject("Clear the content of this buffer cache.", False) == ("buffer", "cache")
    assert query_subject("Call this method once.", True) == ()
    assert holder_is("java.time.OffsetTime.compareTo", ("offset", "time"), False)
    assert not holder_is("java.time.OffsetDateTime.compareTo", ("offset", "time"), False)
    assert holder_is("java.time.chrono.ChronoLocalDateImpl.minusYears", ("date",), False)
    assert not holder_is("java.time.date.minusYears", ("date",), False)  # a package, no type

    def file_of(holder: str) -> tuple[bytes, list[D]]:
        source = (f"class {holder} {{\n"
                  "    public Temporal minusYears(long years) {\n"
                  "        return plusYears(-years);\n"
                  "    }\n"
                  "    public String toString() {\n"
                  "        return text;\n"
                  "    }\n"
                  "}\n").encode()
        return source, [D("Class", holder, holder, 1, 8),
                        D("Function", "minusYears", f"{holder}.minusYears", 2, 4),
                        D("Function", "toString", f"{holder}.toString", 5, 7)]

    files = {f"{holder}.java": file_of(holder)
             for holder in ("OffsetDateTime", "ChronoLocalDateImpl")}
    chunks = {i: chunk_file(path, source, "java", [])[0]
              for i, (path, (source, _)) in enumerate(files.items(), start=1)}
    query = words("Returns a copy of this date with the specified number of years subtracted.")
    each_method = RerankWeights(whole_lines=0)  # the methods are units, not the small chunks

    def ranked(order: list[int], weights: RerankWeights) -> list[str]:
        return [u.symbol for u in rerank_definitions(order, chunks, lambda p: files[p][1],
                                                     query, weights)]

    fused_order = ranked([1, 2], replace(each_method, subject=0.0))
    assert fused_order[:2] == ["OffsetDateTime.minusYears", "ChronoLocalDateImpl.minusYears"]
    subject_first = ranked([1, 2], each_method)
    # the date's method takes its sibling's place; the others keep theirs
    assert subject_first[:2] == ["ChronoLocalDateImpl.minusYears", "OffsetDateTime.minusYears"]
    assert sorted(subject_first[2:]) == sorted(fused_order[2:])
    # already first: nothing moves
    assert ranked([2, 1], each_method) == ranked([2, 1], replace(each_method, subject=0.0))


def test_the_type_a_question_names_tells_apart_same_named_methods() -> None:
    """"Gets the ID of the chronology - 'Minguo'": every chronology's `getId` shares the
    question's words, the first ranked keeps its doc; the question names the Minguo type by a
    word no other `getId`'s type has, so `MinguoChronology.getId` is put just above them."""
    from knoxidx.retrieval.namesakes import holder_type, query_name_words

    # identifiers stay whole: `ChronoField` names no "chrono" type
    assert query_name_words("fields in ChronoField, this year-month", False) == {
        "fields", "in", "chronofield", "this", "year", "month"}
    # a type holds a method; a function (ESLint's `create`) or a module does not; a holder
    # the file does not declare is a type (Go's receiver, declared in another file)
    kinds = {"create": "Function", "tests": "Module", "Chronology": "Interface"}
    assert holder_type("Chronology.getId", kinds) == "Chronology"
    assert holder_type("create.isInline", kinds) == ""
    assert holder_type("tests::ids", kinds) == ""
    assert holder_type("command.Close", kinds) == "command"

    def file_of(holder: str, doc: str) -> tuple[bytes, list[D]]:
        source = (f"class {holder} {{\n"
                  f"    /** {doc} */\n"
                  "    public String getId() {\n"
                  "        return ID;\n"
                  "    }\n"
                  "    public String toString() {\n"
                  "        return text;\n"
                  "    }\n"
                  "}\n").encode()
        return source, [D("Class", holder, holder, 1, 9),
                        D("Function", "getId", f"{holder}.getId", 2, 5),
                        D("Function", "toString", f"{holder}.toString", 6, 8)]

    files = {f"{holder}.java": file_of(holder, doc) for holder, doc in (
        ("IsoChronology", "Gets the ID of the chronology - 'ISO'. The ID identifies it."),
        ("MinguoChronology", ""))}
    chunks = {i: chunk_file(path, source, "java", [])[0]
              for i, (path, (source, _)) in enumerate(files.items(), start=1)}
    query = words("Gets the ID of the chronology - 'Minguo'. The ID identifies it.")
    each_method = RerankWeights(whole_lines=0)

    def ranked(order: list[int], weights: RerankWeights) -> list[str]:
        return [u.symbol for u in rerank_definitions(order, chunks, lambda p: files[p][1],
                                                     query, weights)]

    fused_order = ranked([1, 2], replace(each_method, holder_named=0.0))
    assert fused_order[:2] == ["IsoChronology.getId", "MinguoChronology.getId"]
    named_first = ranked([1, 2], each_method)
    assert named_first[:2] == ["MinguoChronology.getId", "IsoChronology.getId"]
    assert sorted(named_first[2:]) == sorted(fused_order[2:])
    # a word every rival's type has ("chronology") lifts none
    shared = words("Gets the ID of the chronology. The ID identifies it.")
    assert [u.symbol for u in rerank_definitions([1, 2], chunks, lambda p: files[p][1], shared,
                                                 each_method)][:2] == fused_order[:2]


def test_a_method_without_a_body_yields_to_one_that_has_one() -> None:
    """An interface's `boolean isTimeBased();` keeps its doc, the enum that implements it is
    the answer: a method declared without a body only says what its implementations do, and
    counts as a declaration (x ``declaration_only``) as a type's header does."""
    from knoxidx.retrieval.rerank import bodiless, declares_only

    interface = (b"interface TemporalField {\n"
                 b"    /** Checks if this field is time-based. */\n"
                 b"    boolean isTimeBased();\n"
                 b"}\n")
    enum = (b"enum ChronoField {\n"
            b"    public boolean isTimeBased() {\n"
            b"        return timeComponent(this.field);\n"
            b"    }\n"
            b"}\n")
    defs = {"TemporalField.java": [
                D("Interface", "TemporalField", "TemporalField", 1, 4, "interface TemporalField"),
                D("Function", "isTimeBased", "TemporalField.isTimeBased", 3, 3,
                  "boolean isTimeBased();", 0)],
            "ChronoField.java": [
                D("Class", "ChronoField", "ChronoField", 1, 5, "enum ChronoField"),
                D("Function", "isTimeBased", "ChronoField.isTimeBased", 2, 4,
                  "public boolean isTimeBased()", 0)]}
    [method] = [d for d in defs["TemporalField.java"] if d.kind == "Function"]
    assert bodiless(method, defs["TemporalField.java"])
    # Go's interface methods end with no ";", on one line in their interface
    go = [D("Interface", "ConfigStorer", "ConfigStorer", 1, 4, "ConfigStorer interface"),
          D("Function", "Config", "ConfigStorer.Config", 2, 2, "Config() (*Config, error)", 0)]
    assert bodiless(go[1], go)
    assert not any(bodiless(d, defs["ChronoField.java"]) for d in defs["ChronoField.java"])
    chunks = {1: chunk_file("TemporalField.java", interface, "java",
                            defs["TemporalField.java"])[0],
              2: chunk_file("ChronoField.java", enum, "java", defs["ChronoField.java"])[0]}
    [interface_unit] = units(1, chunks[1], defs["TemporalField.java"])
    assert declares_only(interface_unit, defs["TemporalField.java"])
    query = words("Checks if this field represents a component of a time.")
    weights = RerankWeights(similarity=0.0, holder_named=0.0, subject=0.0)

    def ranked(weights: RerankWeights) -> list[int]:
        return [u.chunk_id for u in rerank_definitions([1, 2], chunks, lambda p: defs[p],
                                                       query, weights)]

    assert ranked(replace(weights, declaration_only=1.0)) == [1, 2]  # the interface first
    assert ranked(weights) == [2, 1]


VALVE = (
    "/// Opens the valve so that the tank can fill.\n"  # 1
    "///\n"
    "/// ```\n"
    "/// let mut pump = Pump::new();\n"
    "/// pump.drain_sludge_tank();\n"                   # 5
    "/// ```\n"
    "pub fn open_valve(valve: &mut Valve) {\n"
    "    valve.open = true;\n"
    "}\n"                                                # 9
)
SLUDGE = (
    "pub fn empty_sludge(tank: &mut Tank) {\n"
    "    tank.level = 0;\n"
    "}\n"
)


def test_a_doc_comments_example_does_not_speak_for_the_definition() -> None:
    assert without_doc_examples(VALVE.split("\n")) == [
        "/// Opens the valve so that the tank can fill.", "///",
        "pub fn open_valve(valve: &mut Valve) {", "    valve.open = true;", "}", ""]
    # an example never closed ends where the comment does
    assert without_doc_examples(["/// ```", "/// drain();", "fn f() {}"]) == ["fn f() {}"]
    # the example calls something else: "drain the sludge tank" is what empty_sludge does
    [valve] = chunk_file("valve.rs", VALVE.encode(), "rust", [])
    [sludge] = chunk_file("sludge.rs", SLUDGE.encode(), "rust", [])
    defs = {"valve.rs": [D("Function", "open_valve", "open_valve", 1, 9)],
            "sludge.rs": [D("Function", "empty_sludge", "empty_sludge", 1, 3)]}
    weights = RerankWeights(similarity=0.0, named_first=0.0, intent=0.0, subject=0.0,
                            scope=0.0)
    ranked = rerank_definitions([1, 2], {1: valve, 2: sludge}, lambda p: defs[p],
                                words("drain the sludge tank"), weights)
    assert [u.chunk_id for u in ranked] == [2, 1]


def test_methods_lifted_past_one_rival_keep_their_order() -> None:
    """"... of this listener": two listener types' `local_addr` rise past a socket's; they
    used to land on one score, just above it, and lose their own order."""
    from knoxidx.retrieval.namesakes import favour_subject
    from knoxidx.retrieval.units import Unit

    def unit(line: int, symbol: str, score: float) -> Unit:
        return Unit(line, line, line + 2, symbol, "Function", score)

    best = {("a.rs", u.start_line, u.end_line): u for u in (
        unit(1, "TcpSocket.local_addr", 3.0), unit(20, "UnixListener.local_addr", 2.6),
        unit(10, "TcpListener.local_addr", 2.9), unit(30, "TcpListener.bind", 2.95))}
    lifted = favour_subject(best, ("listener",), False, 2.0)
    order = [u.symbol for u in sorted(lifted.values(), key=lambda u: -u.score)]
    assert order == ["TcpListener.local_addr", "UnixListener.local_addr",
                     "TcpSocket.local_addr", "TcpListener.bind"]


def test_a_chunk_kept_whole_is_named_after_the_definition_that_matched(tmp_path: Path) -> None:
    """Two small functions merged into one chunk, kept whole (neither clearly wins); the
    question's words are in `leap_year`'s name and its body, and most of them in one line of
    `add_days`'s docstring. The result was named after the definition around that line (or
    the chunk's first); it is named after `leap_year`, and lists what it holds."""
    (tmp_path / "cal.py").write_text(
        "def add_days(date, n):\n"
        '    """Move the date forward by n days (a leap year has one more)."""\n'
        "    return date + n\n"
        "\n\n"
        "def leap_year(year):\n"
        "    leap = year % 4 == 0\n"
        "    return leap\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        top = idx.search("leap year of a date")["results"][0]
        assert (top["start_line"], top["end_line"]) == (1, 8)  # the whole chunk
        assert (top["symbol"], top["kind"]) == ("cal.leap_year", "Function")
        assert top["definitions"] == ["cal.add_days", "cal.leap_year"]
        shown = CliRunner().invoke(main, ["search", "leap year of a date", str(tmp_path)])
        assert shown.exit_code == 0, shown.output
        assert "\ncal.py:1-8  Function cal.leap_year (+1 more)  " in shown.output
        # one definition's result lists none
        single = idx.search("leap year", mode="lexical")["results"]
        assert all(r["definitions"] == [] or len(r["definitions"]) > 1 for r in single)


def test_rerank_keeps_what_a_whole_chunk_holds_and_which_of_it_matched() -> None:
    chunk = one_chunk()
    weights = RerankWeights(similarity=0.0)
    [whole] = query_units(1, chunk, DEFS, words("erupt lava"), weights)
    assert whole.held == ("feed_zebra", "Volcano.erupt", "Volcano.cool")
    # erupt and cool share one word each: the first of them leads
    assert (whole.lead, whole.lead_kind) == ("Volcano.erupt", "Function")
    [ranked] = rerank_definitions([1], {1: chunk}, lambda p: DEFS, words("erupt lava"),
                                  weights)
    assert (ranked.held, ranked.lead) == (whole.held, whole.lead)


LISTENER_SOURCE = (
    "function create(context) {\n"                              # 1
    "    function getPrefix(node) {\n"                          # 2
    "        if (node.computed) {\n"
    "            return \"[\";\n"
    "        }\n"
    "        return \".\";\n"
    "    }\n"
    "    return {\n"                                            # 8
    "        MemberExpression(node) {\n"                        # 9
    "            if (node.optional) {\n"
    "                context.report({ node });\n"
    "            }\n"
    "        },\n"                                              # 13
    "        \"MemberExpression:exit\"(node) {\n"               # 14
    "            context.report({ node });\n"
    "        },\n"                                              # 16
    "    };\n"
    "}\n"
)
LISTENER_DEFS = [
    D("Function", "create", "create", 1, 18),
    D("Function", "getPrefix", "create.getPrefix", 2, 7),
    D("Function", "MemberExpression", "create.MemberExpression", 9, 13),
    D("Function", '"MemberExpression:exit"', 'create."MemberExpression:exit"', 14, 16),
]


STORE_SOURCE = (
    "export const createStore = (init) => {\n"                    # 1
    "  type Listener = (state: unknown) => void\n"                # 2
    "  const listeners: Set<Listener> = new Set()\n"
    "  const subscribe = (listener: Listener) => {\n"             # 4
    "    listeners.add(listener)\n"
    "    return () => listeners.delete(listener)\n"
    "  }\n"                                                        # 7
    "  return { subscribe }\n"
    "}\n"
)
STORE_DEFS = [
    D("Function", "createStore", "createStore", 1, 9),
    D("Type", "Listener", "createStore.Listener", 2, 2),
    D("Function", "subscribe", "createStore.subscribe", 4, 7),
]


def test_a_type_declared_inside_a_function_is_matched_by_its_name() -> None:
    """A capitalised name inside a lower-case function is a handler only when it is a function
    itself: zustand's `type TState` inside `createStoreImpl` is a type, named as types are."""
    chunks = {1: chunk_file("vanilla.ts", STORE_SOURCE.encode(), "typescript", [])[0]}
    ranked = rerank_definitions([1], chunks, lambda path: STORE_DEFS, words("listener"),
                                RerankWeights(whole_lines=0))
    # both hold the word; the type's name is it
    assert [u.symbol for u in ranked] == ["createStore.Listener", "createStore.subscribe"]
    assert ranked[0].score > ranked[1].score


def test_a_handler_named_after_the_node_it_visits_does_not_match_by_that_name() -> None:
    """ESLint's rules return listeners named after the AST node they are called on; a question
    about a helper names the node it takes ("... a given MemberExpression node") and matched
    the listener's name, which says nothing of what the listener does."""
    from knoxidx.retrieval.rerank import named_after_what_it_handles

    assert named_after_what_it_handles("rules/a.js", "create.MemberExpression")
    assert named_after_what_it_handles("rules/a.ts", 'create."Program:exit"')
    assert named_after_what_it_handles("a.js", 'create.[["Identifier", "PrivateIdentifier"]]')
    assert not named_after_what_it_handles("rules/a.js", "create.getPrefix")
    # a class, its members and a language whose functions are named with capitals are not
    assert not named_after_what_it_handles("XRRenderTarget.js", "XRRenderTarget")
    assert not named_after_what_it_handles("a.js", "Renderer.Render")
    assert not named_after_what_it_handles("reader.go", "reader.Read")
    # a type declared inside a function (zustand's `createStoreImpl`) is no handler
    assert named_after_what_it_handles("vanilla.ts", "createStoreImpl.SetState", "Function")
    assert not named_after_what_it_handles("vanilla.ts", "createStoreImpl.TState", "Type")

    chunks = {1: chunk_file("rule.js", LISTENER_SOURCE.encode(), "javascript", [])[0]}
    query = words("Get the prefix of a given MemberExpression node.")
    ranked = rerank_definitions([1], chunks, lambda path: LISTENER_DEFS, query,
                                RerankWeights(whole_lines=0))
    assert ranked[0].symbol == "create.getPrefix"
    # nor by its declaration (`MemberExpression(node)`), which the query's vector is close to
    # for the same reason
    ranked = rerank_definitions(
        [1], chunks, lambda path: LISTENER_DEFS, query, RerankWeights(whole_lines=0),
        declaration_closeness=lambda unit, _: 0.5 if "Member" in unit.symbol else 0.0)
    assert ranked[0].symbol == "create.getPrefix"


def test_a_unit_holding_an_identifier_the_question_writes_rises() -> None:
    # the vectors meet the prose ("flag", "decimal"); the name written as code is what the
    # question means, and only `new` holds it
    source = (b"def new(reader):\n    return Decoder(reader, single_precision=False)\n\n"
              b"def ignore_decimal(reader):\n    return reader.skip_digits()\n")
    chunk = chunk_file("de.py", source, "python", [])[0]
    defs = [D("Function", "new", "new", 1, 2), D("Function", "ignore_decimal", "ignore_decimal", 4, 5)]
    query = words("Exclude single_precision flag unless needed")
    close = {1: 0.0}
    kwargs = dict(similarity=close, declaration_closeness=lambda unit, chunk: (
        0.5 if unit.symbol == "ignore_decimal" else 0.0))
    weights = RerankWeights(whole_lines=0)
    assert rerank_definitions([1], {1: chunk}, lambda p: defs, query,
                              replace(weights, identifiers=0.0), **kwargs)[0].symbol == \
        "ignore_decimal"
    assert rerank_definitions([1], {1: chunk}, lambda p: defs, query, weights,
                              **kwargs)[0].symbol == "new"


def test_an_identifier_written_all_over_lifts_no_unit() -> None:
    # click's `show_default` is in 36 of 840 chunks: a change that begins using it in
    # `prompt_for_value` is not about the 36, and lifting them buried it
    source = (b"def prompt_for_value(ctx):\n    return prompt(ctx.default)\n\n"
              b"def get_help_record(ctx):\n    return ctx.show_default\n")
    chunk = chunk_file("core.py", source, "python", [])[0]
    defs = [D("Function", "prompt_for_value", "prompt_for_value", 1, 2),
            D("Function", "get_help_record", "get_help_record", 4, 5)]
    question = "Hide default value when show_default is False, prompt the user"
    common = QueryWords(question, {"show_default": 36}, 840)
    rare = QueryWords(question, {"show_default": 5}, 840)
    weights = RerankWeights(whole_lines=0, similarity=0.0)
    first = {name: rerank_definitions([1], {1: chunk}, lambda p: defs, q, weights)[0].symbol
             for name, q in (("common", common), ("rare", rare))}
    assert first == {"common": "prompt_for_value", "rare": "get_help_record"}
    # a share of 0 counts every identifier, however common
    assert rerank_definitions([1], {1: chunk}, lambda p: defs, common,
                              replace(weights, identifier_share=0.0))[0].symbol == \
        "get_help_record"
