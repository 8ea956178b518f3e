"""A Java method reference names the method after `::` (`this::register`, `Item::describe`),
its class qualifier a reference as in any path; `Item::new`, which names no method, the class."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

ITEM = """\
package p;

public class Item {
    public String describe() { return ""; }
}
"""

SHELF = """\
package p;

import java.util.List;
import java.util.function.Supplier;

public class Shelf {
    void register(Item item) {}

    void all(List<Item> items) {
        items.forEach(this::register);
        items.stream().map(Item::describe);
        Supplier<Item> make = Item::new;
    }
}
"""


def test_a_method_reference_names_the_method(repo) -> None:
    root = repo({"p/Item.java": ITEM, "p/Shelf.java": SHELF})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        references = {(e["line"], nodes[e["target"]]["name"], e["confidence"])
                      for e in export.edges(idx.q)
                      if e["type"] == "References" and e["line"] in (10, 11, 12)}
    assert references == {
        (10, "register", "inferred"),
        (11, "describe", "exact"),
        (11, "Item", "exact"),  # the qualifier, as `Status.ACTIVE`'s
        (12, "Item", "exact"),
    }
