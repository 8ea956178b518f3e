"""A Java local declared again in another block (`Tree x` in one branch, `Sym x` in the
other) is read as the declaration that reaches the read: its type picks among overloads
(`log.emit(x)`), and its type arguments type what a member of a type parameter holds
(`List<Sym> l`: `l.head` is a Sym), not the first declaration of its name."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

FILES = {
    "p/Tree.java": "package p;\n\npublic class Tree {\n    public boolean hasTag(int t) { return true; }\n}\n",
    "p/Sym.java": "package p;\n\npublic class Sym {\n    public boolean hasTag(int t) { return true; }\n}\n",
    "p/List.java": "package p;\n\npublic class List<A> {\n    public A head;\n}\n",
    "p/Log.java": """\
package p;

public class Log {
    public void emit(Tree t) {}
    public void emit(Sym s) {}
}
""",
    "p/User.java": """\
package p;

class User {
    void run(Log log, boolean c) {
        if (c) {
            Tree x = null;
            log.emit(x);
            List<Tree> l = null;
            l.head.hasTag(1);
        } else {
            Sym x = null;
            log.emit(x);
            List<Sym> l = null;
            l.head.hasTag(2);
        }
    }
}
""",
}


def test_a_local_declared_again_is_read_as_the_declaration_reaching_the_read(repo) -> None:
    root = repo(FILES)
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["signature"].split("{")[0].strip()
                  if nodes[e["target"]]["name"] == "emit" else nodes[e["target"]]["path"])
                 for e in export.edges(idx.q)
                 if e["type"] == "Calls" and e["path"] == "p/User.java"}
    assert calls == {(7, "public void emit(Tree t)"), (9, "p/Tree.java"),
                     (12, "public void emit(Sym s)"), (14, "p/Sym.java")}
