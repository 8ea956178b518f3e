"""The parse reads its source through a fixed window (``tree_parse._Window``): the trees are
tree-sitter's trees of the bytes themselves, node texts and query predicates read the right
file's bytes afterwards, and what py-tree-sitter keeps of the reads stays the same size
however many bytes are parsed."""

from __future__ import annotations

import os
import re
import threading
from typing import Any

import pytest
from tree_sitter import Query, QueryCursor

from knoxidx.parse import tree_parse
from knoxidx.parse.compiled_queries import compiled_query
from knoxidx.parse.tree_parse import PARSE_READ_CHUNK, parse_tree


def shape(tree: Any) -> list[tuple[str, int, int, bool]]:
    """Every node's type and byte range, in document order."""
    out = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        out.append((node.type, node.start_byte, node.end_byte, node.is_missing))
        stack.extend(reversed(node.children))
    return out


def assert_same_tree(parser: Any, source: bytes) -> None:
    assert shape(parse_tree(parser, source)) == shape(parser.parse(source)), source[-40:]


class RecordingParser:
    """A parser that records the objects its parses' reads return."""

    def __init__(self, parser: Any) -> None:
        self.parser = parser
        self.returned: list[object] = []

    def parse(self, read: Any, *args: Any, **kwargs: Any) -> Any:
        def recording(offset: int, point: Any) -> Any:
            data = read(offset, point)
            self.returned.append(data)
            return data

        return self.parser.parse(recording, *args, **kwargs)

    def reset(self) -> None:
        self.parser.reset()


@pytest.mark.parametrize("text", ["中", "x = 中", "ab = 中文", "中中中", "x = 中中", "x = 'é€𝄞'"])
def test_a_character_cut_by_the_last_reads_is_read_whole(text: str) -> None:
    # (a last read of the largest power of two left cut '中' at the end: an ERROR instead)
    assert_same_tree(compiled_query("python").parser, text.encode())


@pytest.mark.parametrize("char", ["é", "中", "𝄞"])
def test_characters_across_a_window_boundary_and_the_end(char: str) -> None:
    parser = compiled_query("python").parser
    for before in range(PARSE_READ_CHUNK - 6, PARSE_READ_CHUNK + 2):
        source = b"#" + b"a" * (before - 1) + f"\nx{char} = '{char * 3}'\n{char}".encode()
        for cut in range(4):
            assert_same_tree(parser, source[: len(source) - cut])


@pytest.mark.parametrize("language", ["python", "typescript", "go", "rust", "java"])
@pytest.mark.heavy
def test_sources_of_several_windows_parse_as_their_bytes(language: str) -> None:
    lines = {
        "python": "def f{n}(x):\n    return 'é{n}' + g(x)  # 中\n",
        "typescript": "function f{n}(x: number): string {{ return `é${{x}}{n}`; }} // 中\n",
        "go": "func f{n}(x int) string {{ return \"é{n}\" }} // 中\n",
        "rust": "fn f{n}(x: u8) -> &'static str {{ \"é{n}\" }} // 中\n",
        "java": "class C{n} {{ String f(int x) {{ return \"é{n}\"; }} }} // 中\n",
    }
    source = "".join(lines[language].format(n=n) for n in range(6000)).encode()
    assert len(source) > 3 * PARSE_READ_CHUNK
    parser = compiled_query(language).parser
    assert_same_tree(parser, source)
    assert_same_tree(parser, source + b"\xe4\xb8")  # a character cut off at the very end
    assert_same_tree(parser, source[:PARSE_READ_CHUNK * 2 + 1] + b"\xff\xfe" + source[-99:])


def test_the_reads_return_the_same_few_objects_whatever_is_parsed() -> None:
    # Each object a read returns is kept by py-tree-sitter 0.26 for as long as the process
    # lives: slices of the source kept every file parsed.
    parser = RecordingParser(compiled_query("python").parser)
    for n in range(40):
        parse_tree(parser, b"x = %d\n" % n * (n * 997 % 12_000))
    kept = {id(data) for data in parser.returned if len(data)}
    assert len(parser.returned) > 400
    assert len(kept) <= PARSE_READ_CHUNK.bit_length() + 2


def resident_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.slow
def test_parsing_distinct_large_sources_holds_no_more_memory() -> None:
    # 40 parses of distinct 500 kB sources kept about 22 MiB when reads returned slices
    parser = compiled_query("python").parser
    body = "".join(f"def f{n}(x):\n    return g(x, {n}) + 'é'\n\n" for n in range(13_000))
    size = 500_000

    def source(n: int) -> bytes:
        return (f"# {n}\n" + body).encode()[:size]

    for n in range(5):  # the allocator's own high-water mark first
        parse_tree(parser, source(n))
    before = resident_mib()
    count = 40
    for n in range(count):
        parse_tree(parser, source(n))
    grown = resident_mib() - before
    assert grown < count * size / 2**20 / 4, grown


def test_node_texts_and_predicates_read_their_own_trees_bytes() -> None:
    compiled = compiled_query("python")
    parser = compiled.parser
    language = parser.language
    query = Query(language, '((identifier) @name (#eq? @name "target"))')
    matching = Query(language, '((identifier) @name (#match? @name "^t[a-z]+t$"))')
    sources = [
        b"target = 1\nother = target\n" + b"pad = 0\n" * 20_000 + b"target()\n",
        b"# " + b"x" * 70_000 + b"\nnothing = here\ntarget = 2\n",
    ]
    trees = [parse_tree(parser, source) for source in sources]
    # a third parse in between reuses the window the first two were read through
    parse_tree(parser, b"tent = 3\n" * 9_000)
    expected = [[m.start() for m in re.finditer(rb"\btarget\b", source)] for source in sources]
    assert [len(starts) for starts in expected] == [3, 1]
    for _ in range(2):
        for tree, source, starts in zip(trees, sources, expected, strict=True):
            found = QueryCursor(query).captures(tree.root_node).get("name", [])
            assert sorted(node.start_byte for node in found) == starts
            assert all(node.text == b"target" for node in found)
            texts = [n.text for n in QueryCursor(matching).captures(tree.root_node)["name"]]
            assert set(texts) == {b"target"}
            assert tree.root_node.text == source


def test_parses_on_several_threads_each_read_their_own_source() -> None:
    languages = ["python", "go", "rust", "java"]
    sources = {
        language: b"".join(b"// %d\n" % n if language != "python" else b"# %d\n" % n
                           for n in range(30_000)) + ("x中" * 5).encode()
        for language in languages
    }
    parsers = {language: compiled_query(language).parser for language in languages}
    # (one parser per thread: a py-tree-sitter Parser is not for two threads at once)
    from tree_sitter import Parser
    expected = {language: shape(parsers[language].parse(sources[language]))
                for language in languages}
    failures: list[str] = []

    def work(language: str) -> None:
        parser = Parser(parsers[language].language)
        for _ in range(5):
            if shape(parse_tree(parser, sources[language])) != expected[language]:
                failures.append(language)

    threads = [threading.Thread(target=work, args=(language,)) for language in languages]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_a_parse_started_inside_another_gets_a_window_of_its_own() -> None:
    # (a signal handler, say, runs between a read and the next)
    outer = b"def f(x):\n    return x\n" * 5_000
    inner = b"y = [1, 2, 3]\n" * 6_000
    python = compiled_query("python")
    from tree_sitter import Parser
    inner_parser = Parser(python.parser.language)
    inner_trees: list[Any] = []

    class Interrupted(RecordingParser):
        def parse(self, read: Any, *args: Any, **kwargs: Any) -> Any:
            def interrupted(offset: int, point: Any) -> Any:
                data = read(offset, point)
                if len(inner_trees) < 3:
                    inner_trees.append(parse_tree(inner_parser, inner))
                return data

            return self.parser.parse(interrupted, *args, **kwargs)

    tree = parse_tree(Interrupted(python.parser), outer)
    assert shape(tree) == shape(python.parser.parse(outer))
    assert all(shape(t) == shape(inner_parser.parse(inner)) for t in inner_trees)
    assert len(tree_parse._free_windows) >= 2
