"""Signatures as data: each function's parameters, return type, type parameters and decorators
as extraction reads them (hand-checked per language), as the stores keep and answer them, and
the ``--returns`` / ``--param-type`` filters through the library, the CLI, HTTP and MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from knoxidx.parse import signatures
from knoxidx.parse.extract import extract
from tests.agent.support import start_server
from tests.helpers import Backend, run_cli, write_tree

P, PO, KO, VAR, VARKW, SELF, RECV, OPT = (
    "positional", "positional-only", "keyword-only", "variadic", "variadic-keyword", "self",
    "receiver", "optional")

PYTHON = '''\
@app.route("/x",
           methods=["GET"])
@other
def f(a, b: int = 3, /, c=4, *args: str, d, e: "X" = None, **kw: Any) -> Optional[Request]:
    pass
class C:
    def m(self, x: Dict[str,
                       int]) -> None: pass
    @staticmethod
    def s(x, *, y=2): pass
    @classmethod
    def k(cls, *, y): pass
def g[T](x: T, *, y) -> T: pass
'''
TYPESCRIPT = '''\
class A {
  @Get("x") m<T extends X>(this: A, a: number, b?: string, c = 3, ...r: T[]): Promise<T> {
    return x }
  constructor(private readonly x: Req, public y?: number) {}
  static create = <T,>(v: T): A => new A()
}
function f({a, b}: O, [c]: L = [], d: D = {} as D): void {}
const g = async <T,>(x: T): Promise<T> => x
const h = y => y
interface I { s(a: A): B; }
export function k(x: Request | null): x is Foo { return true }
'''
JAVASCRIPT = '''\
class A { @d m(a, b = 1, ...c) {} static k = (z) => z }
function f({x}, [y] = [], z) {}
exports.g = function(q) {}
'''
RUST = '''\
/// doc
#[inline]
#[cfg(test)]
pub fn f<'a, T: Clone>(&mut self, a: &'a mut Request, (x, y): (i32, i32), mut z: Vec<T>)
    -> Result<T, E> where T: X { }
fn g(self: Box<Self>, _: u8) {}
'''
GO = '''\
package p
func (s *Server) Handle(w http.ResponseWriter, r *http.Request, a, b int, rest ...string) (int, error) {
	return 0, nil
}
func G[T any, U comparable](x T) (n int, err error) { return }
type I interface { M(int) error }
'''
JAVA = '''\
class A {
  @Override @SuppressWarnings("x")
  public <T extends Y> List<T> m(final int a, @NonNull String... rest) throws E { return null; }
  A(int x) {}
  void r(A this, int[] q) {}
  int c(byte b[], int[] d [ ])[] { return null; }
}
'''

EXPECTED: dict[str, dict[str, tuple]] = {
    "python": {
        "f": ((("a", None, None, PO), ("b", "int", "3", PO), ("c", None, "4", P),
               ("args", "str", None, VAR), ("d", None, None, KO), ("e", '"X"', "None", KO),
               ("kw", "Any", None, VARKW)),
              "Optional[Request]", (), ('app.route("/x", methods=["GET"])', "other")),
        # a method's first parameter is its self, but a static method's
        "m": ((("self", None, None, SELF), ("x", "Dict[str, int]", None, P)), "None", (), ()),
        "s": ((("x", None, None, P), ("y", None, "2", KO)), None, (), ("staticmethod",)),
        "k": ((("cls", None, None, SELF), ("y", None, None, KO)), None, (), ("classmethod",)),
        "g": ((("x", "T", None, P), ("y", None, None, KO)), "T", ("T",), ()),
    },
    "typescript": {
        "m": ((("this", "A", None, RECV), ("a", "number", None, P), ("b", "string", None, OPT),
               ("c", None, "3", P), ("r", "T[]", None, VAR)),
              "Promise<T>", ("T extends X",), ('Get("x")',)),
        "constructor": ((("x", "Req", None, P), ("y", "number", None, OPT)), None, (), ()),
        # a class field whose value is a function (found by bench.signatures on zod)
        "create": ((("v", "T", None, P),), "A", ("T",), ()),
        "f": ((("{a, b}", "O", None, P), ("[c]", "L", "[]", P), ("d", "D", "{} as D", P)),
              "void", (), ()),
        "g": ((("x", "T", None, P),), "Promise<T>", ("T",), ()),
        "h": ((("y", None, None, P),), None, (), ()),
        "s": ((("a", "A", None, P),), "B", (), ()),
        "k": ((("x", "Request | null", None, P),), "x is Foo", (), ()),
    },
    "javascript": {
        "m": ((("a", None, None, P), ("b", None, "1", P), ("c", None, None, VAR)), None, (),
              ("d",)),
        "k": ((("z", None, None, P),), None, (), ()),
        "f": ((("{x}", None, None, P), ("[y]", None, "[]", P), ("z", None, None, P)), None,
              (), ()),
        "g": ((("q", None, None, P),), None, (), ()),
    },
    "rust": {
        "f": ((("self", "&mut self", None, SELF), ("a", "&'a mut Request", None, P),
               ("(x, y)", "(i32, i32)", None, P), ("z", "Vec<T>", None, P)),
              "Result<T, E>", ("'a", "T: Clone"), ("inline", "cfg(test)")),
        "g": ((("self", "Box<Self>", None, SELF), ("_", "u8", None, P)), None, (), ()),
    },
    "go": {
        "Handle": ((("s", "*Server", None, RECV), ("w", "http.ResponseWriter", None, P),
                    ("r", "*http.Request", None, P), ("a", "int", None, P),
                    ("b", "int", None, P), ("rest", "string", None, VAR)),
                   "(int, error)", (), ()),
        "G": ((("x", "T", None, P),), "(n int, err error)", ("T any", "U comparable"), ()),
        "M": (((None, "int", None, P),), "error", (), ()),
    },
    "java": {
        "m": ((("a", "int", None, P), ("rest", "String", None, VAR)), "List<T>",
              ("T extends Y",), ("Override", 'SuppressWarnings("x")')),
        "A": ((("x", "int", None, P),), None, (), ()),
        "r": ((("this", "A", None, RECV), ("q", "int[]", None, P)), "void", (), ()),
        # C-style array dimensions after a name are the type's (javac's types, found by
        # bench.signatures on the JDK's sources)
        "c": ((("b", "byte[]", None, P), ("d", "int[][ ]", None, P)), "int[]", (), ()),
    },
}


def signatures_of(source: str, language: str, path: str) -> dict[str, Any]:
    facts = extract(path, source.encode(), language)
    return {d.name: d.signature_data for d in facts.defs if d.kind == "Function"}


@pytest.mark.parametrize(("source", "language", "path"), [
    (PYTHON, "python", "a.py"), (TYPESCRIPT, "typescript", "a.ts"),
    (JAVASCRIPT, "javascript", "a.js"), (RUST, "rust", "a.rs"), (GO, "go", "a.go"),
    (JAVA, "java", "A.java"),
])
def test_signatures_by_hand(source: str, language: str, path: str) -> None:
    assert signatures_of(source, language, path) == EXPECTED[language]


def test_other_kinds_and_macros_have_none() -> None:
    facts = extract("a.rs", b"struct S { x: i32 }\nmacro_rules! m { () => {} }\n", "rust")
    assert [(d.kind, d.signature_data) for d in facts.defs] == [
        ("Class", ()), ("Variable", ()), ("Function", ())]


def test_rust_attributes_and_docs_are_found_wherever_they_end() -> None:
    # whatever ends just before the item: a comment line ending in `;` or `}`, an attribute
    # on the item's own line, a block comment, a no-break space
    source = ("fn plain() {}\n#[inline]\n// note;\nfn after_note() {}\n"
              "#[test] fn same_line() {}\n/// doc }\n#[cfg(x)]\nfn documented() {}\n"
              "#[must_use] /* why */ fn block() {}\n#[cold]\u00a0fn spaced() {}\n"
              "fn last() {}\n")
    facts = extract("a.rs", source.encode(), "rust")
    assert {d.name: (d.signature_data[3], d.doc) for d in facts.defs} == {
        "plain": ((), ""), "after_note": (("inline",), "note;"), "same_line": (("test",), ""),
        "documented": (("cfg(x)",), "doc }"), "block": (("must_use",), "why"),
        "spaced": ((), ""), "last": ((), "")}  # (the grammar reads no attribute there)


def test_a_repeated_signature_is_stored_as_the_first() -> None:
    data = ((("a", "List<Request>", None, P),), "Map<String, int>", (), ())
    first = signatures.stored_signature(data)
    again = signatures.stored_signature(tuple(list(data)))  # equal, not the same object
    assert again == first == (
        '[[["a","List<Request>",null,"positional"]],"Map<String, int>",[],[]]',
        " Map String int ", " List Request ")


GENERIC_TYPES = {
    "typescript": ("a.ts", "export class Box<T extends object = {}> {}\n"
                   "interface Pair<K, /* key */ V> { k: K }\ntype Fn<A> = (a: A) => A;\n"
                   "class Plain {}\n",
                   {"Box": (("T extends object = {}",),), "Pair": (("K", "V"),),
                    "Fn": (("A",),), "Plain": ()}),
    "java": ("A.java", "class Box<T extends Comparable<T>> {}\ninterface Pair<K, V> {}\n"
             "class Plain {}\n",
             {"Box": (("T extends Comparable<T>",),), "Pair": (("K", "V"),), "Plain": ()}),
    "rust": ("a.rs", "struct Wrapper<'a, T: Clone> { x: &'a T }\nenum E<T> { A(T) }\n"
             "trait Tr<T> {}\ntype Alias<T> = Vec<T>;\nstruct Plain;\n",
             {"Wrapper": (("'a", "T: Clone"),), "E": (("T",),), "Tr": (("T",),),
              "Alias": (("T",),), "Plain": ()}),
    "go": ("a.go", "package a\ntype List[T any] struct{ items []T }\n"
           "type Num[N int | float64] interface{}\ntype Plain struct{}\n",
           {"List": (("T any",),), "Num": (("N int | float64",),), "Plain": ()}),
    "python": ("a.py", "class C[T, *Ts]:\n    pass\n\nclass D:\n    pass\n",
               {"C": (("T", "*Ts"),), "D": ()}),
}


@pytest.mark.parametrize("language", sorted(GENERIC_TYPES))
def test_generic_types_have_their_type_parameters(language: str) -> None:
    path, source, expected = GENERIC_TYPES[language]
    facts = extract(path, source.encode(), language)
    assert {d.name: d.signature_data for d in facts.defs
            if d.kind in ("Class", "Interface", "Type")} == expected


def test_a_comment_inside_an_annotation_is_no_part_of_the_type() -> None:
    # found by bench.signatures on zod: the compiler's type starts after the comment
    source = "function f(a: // why\n  number): // because\n  string { return '' }\n"
    assert signatures_of(source, "typescript", "a.ts")["f"][:2] == (
        (("a", "number", None, P),), "string")


def test_a_long_default_is_cut() -> None:
    source = "def f(a=" + "[" + "1, " * 300 + "]):\n    pass\n"
    (param,) = signatures_of(source, "python", "a.py")["f"][0]
    assert len(param[2]) == signatures.MAX_WRITTEN and param[2].endswith("…")


@pytest.mark.parametrize(("written", "query", "matches"), [
    ("Request", "Request", True),
    ("Optional[Request]", "Request", True),
    ("Request | None", "Request", True),
    ("&'a mut Request", "Request", True),
    ("*http.Request", "Request", True),
    ("*http.Request", "http.Request", True),
    ("List<Request>", "Request", True),
    ("std::io::Result<()>", "io.Result", True),
    ("RequestContext", "Request", False),  # a whole name, not a part of one
    ("MyRequest", "Request", False),
    ("http.Request", "Other.Request", False),
    ('"Request"', "Request", True),  # a forward reference as a string
])
def test_the_type_matching_rule(written: str, query: str, matches: bool) -> None:
    assert signatures.key_matches(signatures.search_key([written]),
                                  signatures.type_query(query)) is matches


@pytest.mark.parametrize("bad", ["", "List<x>", "a b", "*", "Request%", "x" * 201])
def test_a_bad_type_query_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a type name"):
        signatures.type_query(bad)


SERVICE = {
    "svc.py": "class Request: pass\n\n"
              "def handle(req: Optional[Request], n: int = 1) -> Response:\n    return None\n\n"
              "def make(name: str) -> Request:\n    return Request()\n\n"
              "class S:\n    def own(self: Request) -> None:\n        pass\n",
}


def test_stored_answered_filtered_and_updated(tmp_path: Path, backend: Backend) -> None:
    root = write_tree(tmp_path / "repo", SERVICE)
    backend.build(root)
    with backend.open(root) as idx:
        (handle,) = idx.find_symbols("handle")["symbols"]
        assert handle["parameters"] == [
            {"name": "req", "type": "Optional[Request]", "default": None, "kind": "positional"},
            {"name": "n", "type": "int", "default": "1", "kind": "positional"}]
        assert handle["returns"] == "Response"
        assert handle["type_parameters"] == [] and handle["decorators"] == []
        assert "parameters" not in idx.find_symbols("Request", kind="Class")["symbols"][0]
        names = lambda **kw: sorted(s["name"] for s in idx.find_symbols("*", **kw)["symbols"])  # noqa: E731
        # a self is no parameter: `own` takes no Request
        assert names(param_type="Request") == ["handle"]
        assert names(returns="Request") == ["make"]
        assert names(returns="Request", param_type="str") == ["make"]
        assert names(returns="Response", param_type="str") == []
        assert idx.find_symbols("handle", param_type="int")["total"] == 1
        # by a qualified-name suffix (filtered in Python, by the same rule)
        assert idx.find_symbols("S.own", returns="None")["total"] == 1
        assert idx.find_symbols("S.own", param_type="Request")["total"] == 0
    (root / "svc.py").write_text(SERVICE["svc.py"].replace("name: str", "name: Request"))
    with backend.open(root) as idx:
        idx.update()
        assert sorted(s["name"] for s in idx.find_symbols("*", param_type="Request")["symbols"]
                      ) == ["handle", "make"]


def test_a_generic_types_type_parameters_are_stored_and_answered(
        tmp_path: Path, backend: Backend) -> None:
    """A generic class has ``type_parameters`` and none of a function's keys; one without
    generics has neither; the type filters still find functions only."""
    root = write_tree(tmp_path / "repo", {
        "box.py": "class Box[T]:\n    def get(self) -> T:\n        pass\n\n"
                  "class Plain:\n    pass\n"})
    backend.build(root)
    with backend.open(root) as idx:
        (box,) = idx.find_symbols("Box")["symbols"]
        (plain,) = idx.find_symbols("Plain")["symbols"]
        assert box["type_parameters"] == ["T"]
        assert not {"parameters", "returns", "decorators"} & set(box)
        assert "type_parameters" not in plain
        assert [s["name"] for s in idx.find_symbols("*", returns="T")["symbols"]] == ["get"]
        assert idx.describe("Box")["type_parameters"] == ["T"]


def test_cli_http_and_validation(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", SERVICE)
    code, _, err = run_cli("index", "--graph-only", str(root))
    assert code == 0, err
    code, out, err = run_cli("symbols", "*", str(root), "--param-type", "Request")
    assert code == 0, err
    assert out.splitlines() == ["Function  svc.handle  svc.py:3"]
    code, out, err = run_cli("symbols", "*", str(root), "--returns", "Request", "--json")
    assert code == 0, err
    assert [s["name"] for s in json.loads(out)["symbols"]] == ["make"]
    code, _, err = run_cli("symbols", "*", str(root), "--returns", "List[Request]")
    assert code == 2 and "not a type name" in err
    proc, url = start_server(root)
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            found = client.get("/symbols", params={"q": "*", "param_type": "Request"}).json()
            assert [s["name"] for s in found["symbols"]] == ["handle"]
            assert found["symbols"][0]["parameters"][0]["type"] == "Optional[Request]"
            found = client.get("/symbols", params={"q": "*", "returns": "Request"}).json()
            assert [s["name"] for s in found["symbols"]] == ["make"]
            refused = client.get("/symbols", params={"q": "*", "returns": "a b"})
            assert refused.status_code == 400 and "not a type name" in refused.text
    finally:
        assert proc.stop() == 0


def test_an_index_of_schema_7_is_rebuilt(tmp_path: Path) -> None:
    import sqlite3

    root = write_tree(tmp_path / "repo", SERVICE)
    code, _, err = run_cli("index", "--graph-only", str(root))
    assert code == 0, err
    with sqlite3.connect(root / ".knoxidx" / "index.db") as conn:  # as complexity's left it
        conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    code, out, err = run_cli("index", "--graph-only", str(root))
    assert code == 0, err
    assert "index schema 7 is not this knoxidx's (8): rebuilding" in out + err
    code, out, _ = run_cli("symbols", "*", str(root), "--returns", "Request")
    assert "svc.make" in out


def test_a_long_type_or_signature_is_read_but_not_remembered() -> None:
    """The caches of type names and stored signatures are bounded in the size of an entry as
    well as in count: a type or a default value kilobytes long is read each time it is met."""
    long_type = "Map<" + ", ".join(f"T{i}" for i in range(100)) + ">"
    assert signatures.type_names(long_type) == ["Map", *(f"T{i}" for i in range(100))]
    assert signatures.type_names("List<Request>") == ["List", "Request"]
    assert long_type not in signatures._TYPE_NAMES and "List<Request>" in signatures._TYPE_NAMES
    blob = ((("data", "bytes", "b'" + "x" * 5000 + "'", P),), "None", (), ())
    text, returns, params = signatures.stored_signature(blob)
    assert json.loads(text)[0][0][2] == "b'" + "x" * 5000 + "'"
    assert (returns, params) == (" None ", " bytes ")
    assert blob not in signatures._STORED
    short = ((("a", "int", None, P),), "str", (), ())
    assert signatures.stored_signature(short) == signatures.stored_signature(short)
    assert short in signatures._STORED
