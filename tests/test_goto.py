"""``knoxidx goto PATH:LINE``: what the code at a line refers to, from the stored facts and
edges of a real index, on every face."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from knoxidx.api.schemas import BY_TOOL
from knoxidx.core.errors import BadInputError, LineRangeError, SourceNotFoundError
from knoxidx.index import Index
from tests.agent.support import start_server
from tests.helpers import build, run_cli, write_tree

FILES = {
    "shop/__init__.py": "",
    "shop/models.py": (
        "class Cart:\n"                                    # 1
        "    def add(self, item):\n"                       # 2
        "        return item\n"                            # 3
        "\n"                                               # 4
        "    def total(self):\n"                           # 5
        "        return 0\n"                               # 6
    ),
    "shop/orders.py": (
        "import json\n"                                    # 1
        "from shop.models import Cart\n"                   # 2
        "\n"                                               # 3
        "\n"                                               # 4
        "def checkout(cart: Cart, item):\n"                # 5
        "    cart.add(item); cart.total()\n"               # 6
        "    return json.dumps(mystery(cart))\n"           # 7
        "\n"                                               # 8
        "\n"                                               # 9
        "def fresh():\n"                                   # 10
        "    return Cart()\n"                              # 11
    ),
    "web/app.ts": (
        "class Store {\n"                                  # 1
        "  constructor(public name: string) {}\n"          # 2
        "}\n"                                              # 3
        "export const main = () => new Store('x');\n"      # 4
    ),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("goto"), FILES)
    build(root)
    return root


def _targets(ref: dict) -> list[tuple[str, str]]:
    return [(d["qualified_name"], d["via"]) for d in ref["definitions"]]


def test_calls_through_a_receivers_type_go_to_the_method(repo: Path) -> None:
    with Index.open(repo) as idx:
        answer = idx.goto("shop/orders.py:6")
    assert answer["enclosing"]["qualified_name"] == "shop.orders.checkout"
    refs = answer["references"]
    assert [(r["written"], r["column"], r["kind"]) for r in refs] == [
        ("cart.add", 5, "call"), ("cart.total", 21, "call")]
    assert _targets(refs[0]) == [("shop.models.Cart.add", "Calls")]
    assert _targets(refs[1]) == [("shop.models.Cart.total", "Calls")]
    assert refs[0]["definitions"][0]["start_line"] == 2


def test_types_constructors_and_the_unresolved_say_what_they_are(repo: Path) -> None:
    with Index.open(repo) as idx:
        typed = idx.goto("shop/orders.py:5")["references"]
        made = idx.goto("shop/orders.py:11")["references"]
        line7 = {r["written"]: r for r in idx.goto("shop/orders.py:7")["references"]}
        ts = idx.goto("web/app.ts:4")["references"]
    assert [(r["name"], _targets(r)) for r in typed] == [("Cart", [("shop.models.Cart", "Uses")])]
    assert _targets(made[0]) == [("shop.models.Cart", "Calls")]
    assert line7["mystery"]["definitions"] == []
    assert line7["mystery"]["unresolved"] == "unknown: no definition of that name is in scope here"
    assert line7["json.dumps"]["unresolved"].startswith("not in the repository")
    assert line7["json.dumps"]["definitions"] == []
    new = next(r for r in ts if r["kind"] == "new")
    assert _targets(new) == [("web/app:Store.constructor", "Calls"), ("web/app:Store", "Calls")]


def test_imports_on_the_line_say_what_they_bind(repo: Path) -> None:
    with Index.open(repo) as idx:
        stdlib = idx.goto("shop/orders.py:1")["imports"]
        named = idx.goto("./shop/orders.py:2")["imports"]
        only = idx.goto("shop/orders.py:6", name="total")["references"]
    assert [(i["module"], i["name"]) for i in stdlib] == [("json", "")]
    assert [d["kind"] for d in stdlib[0]["definitions"]] == ["Module"]
    assert [(d["qualified_name"], d["via"]) for d in named[0]["definitions"]] == [
        ("shop/models.py", "Imports"), ("shop.models.Cart", "ImportsSymbol")]
    assert [r["written"] for r in only] == ["cart.total"]


def test_bad_places_are_refused(repo: Path) -> None:
    with Index.open(repo) as idx:
        with pytest.raises(BadInputError, match="not a place"):
            idx.goto("shop/orders.py")
        with pytest.raises(LineRangeError):
            idx.goto("shop/orders.py:0")
        with pytest.raises(LineRangeError, match="has 11 lines"):
            idx.goto("shop/orders.py:12")
        with pytest.raises(SourceNotFoundError):
            idx.goto("shop/none.py:1")
        assert idx.goto("shop/orders.py:3")["references"] == []
    code, _, err = run_cli("goto", "shop/none.py:1", str(repo))
    assert code == 2 and "no indexed file 'shop/none.py'" in err


def test_every_face_answers_the_same(repo: Path) -> None:
    operation = BY_TOOL["goto_definition"]
    with Index.open(repo) as idx:
        expected = json.loads(json.dumps(idx.goto("shop/orders.py:6")))
        got = operation.call(idx, operation.parse({"at": "shop/orders.py:6"}, from_text=False))
        assert json.loads(json.dumps(got)) == expected
    proc, url = start_server(repo)
    try:
        reply = httpx.get(url + "/goto", params={"at": "shop/orders.py:6"}, timeout=30)
        assert reply.status_code == 200 and reply.json() == expected
        reply = httpx.get(url + "/goto", params={"at": "shop/orders.py:99"}, timeout=30)
        assert reply.status_code == 400 and reply.json()["error"]["code"] == "bad_range"
        reply = httpx.get(url + "/goto", params={"at": "nope.py:1"}, timeout=30)
        assert reply.status_code == 404
    finally:
        assert proc.stop() == 0
    code, out, err = run_cli("goto", "shop/orders.py:6", str(repo))
    assert code == 0, err
    assert out.splitlines() == [
        "shop/orders.py:6 (in Function shop.orders.checkout)",
        "  cart.add  col 5  call  -> Function shop.models.Cart.add  shop/models.py:2  [inferred]",
        "  cart.total  col 21  call  -> Function shop.models.Cart.total  shop/models.py:5  "
        "[inferred]"]
