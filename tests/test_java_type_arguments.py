"""A Java member declared of a type parameter of its class (`A head` in `List<A>`) holds the
type argument the value it is read on is declared with (`List<Tree> l`: `l.head` is a Tree),
through locals, parameters, fields and what methods return, and where none is written, read
inside the class, the parameter's bound (`T extends Tree`). javac lost ~280 calls without:
`args.head.hasTag(..)`, `env.info.scope.enter(..)`."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from knoxidx.languages.java.parameters import written_type
from knoxidx.parse.name_paths import type_arguments
from tests.helpers import build


def _calls_to(root, path: str, name: str) -> set[tuple[int, str]]:
    """(line, the target's file) of the Calls edges from ``path`` to methods named ``name``."""
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["path"])
                for e in export.edges(idx.q) if e["type"] == "Calls"
                and e["path"] == path and nodes[e["target"]]["name"] == name}


FILES = {
    "p/List.java": """\
package p;

public class List<A> {
    public A head;
    public List<A> tail;
    public A get(int i) { return head; }
}
""",
    "p/Env.java": """\
package p;

public class Env<A> {
    public A info;
    public Env<A> outer;
}
""",
    "p/Tree.java": """\
package p;

public class Tree {
    public boolean hasTag(int t) { return true; }
    public Scope scope;
}
""",
    "p/Scope.java": """\
package p;

public class Scope {
    public void enter(Tree t) {}
}
""",
    "p/Delegate.java": """\
package p;

public class Delegate<T extends Tree> {
    protected T other;
    boolean tagged() { return other.hasTag(1); }
}
""",
    # a second class of each method's name: no unique-name guess stands in for the types
    "p/Other.java": """\
package p;

class Other {
    public boolean hasTag(int t) { return false; }
    public void enter(Tree t) {}
    public Tree get(int i) { return null; }
}
""",
    "p/User.java": """\
package p;

class User {
    List<Tree> trees;
    Env<Tree> env;

    void run(List<Tree> args, Env<Tree> penv) {
        args.head.hasTag(1);
        for (List<Tree> l = args; l != null; l = l.tail) {
            l.head.hasTag(2);
        }
        trees.head.hasTag(3);
        trees.tail.head.hasTag(4);
        env.info.scope.enter(null);
        penv.outer.info.hasTag(5);
        args.get(0).hasTag(6);
    }
}
""",
}


def test_a_member_of_a_type_parameter_holds_the_values_type_argument(repo) -> None:
    root = repo(FILES)
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["path"], e["line"], nodes[e["target"]]["name"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"}
        to_other = [e for e in export.edges(idx.q)
                    if e["type"] == "Calls" and nodes[e["target"]]["path"] == "p/Other.java"]
    assert not to_other
    user = {(line, name) for path, line, name in calls if path == "p/User.java"}
    assert user >= {(8, "hasTag"), (10, "hasTag"), (12, "hasTag"), (13, "hasTag"),
                    (14, "enter"), (15, "hasTag"), (16, "get"), (16, "hasTag")}
    assert ("p/Delegate.java", 5, "hasTag") in calls  # the bound, read in its class


def test_type_arguments_and_a_fields_written_type_are_read_from_the_text() -> None:
    assert type_arguments("Map<K, List<V>>") == ("K", "List<V>")
    assert type_arguments("List<? extends JCTree>") == ("JCTree",)
    assert type_arguments("List<? super T>") == ("",)
    assert type_arguments("Tree") == ()
    assert written_type("protected final List<JCExpression> args;", "args") == \
        "List<JCExpression>"
    assert written_type("@DefinedBy(Api.X) Map<K, V> m = null;", "m") == "Map<K, V>"
    assert written_type("int a = f(b, c);", "z") == ""


BUF = """\
package p;

public class Buf<A> {
    public A head;
    public A first() { return head; }
}
"""

MAKER = """\
package p;

class Tree {}
class Decl extends Tree {}
class Expr extends Tree {}

class Maker {
    void ident(Decl d) {}
    void ident(Expr e) {}
    private final Buf<Decl> params = new Buf<>();
    void run(Buf<Expr> args) {
        ident(args.head);
        ident(args.first());
        ident(params.head);
        ident(this.params.first());
    }
}
"""


def test_an_argument_of_a_type_parameter_picks_the_overload_of_its_type_argument(repo) -> None:
    root = repo({"p/Buf.java": BUF, "p/Maker.java": MAKER})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["signature"], e["confidence"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"
                 and nodes[e["target"]]["name"] == "ident"}
    assert calls == {
        (12, "void ident(Expr e)", "exact"),
        (13, "void ident(Expr e)", "exact"),
        (14, "void ident(Decl d)", "exact"),
        (15, "void ident(Decl d)", "exact"),
    }


CONTEXTS = {
    "p/Tree.java": """\
package p;

public class Tree {
    public boolean hasTag(int t) { return true; }
}
""",
    "p/Other.java": """\
package p;

class Other {
    public boolean hasTag(int t) { return false; }
}
""",
    "p/Context.java": """\
package p;

public abstract class Context<T extends Tree> {
    final T tree;
    Context(T tree) { this.tree = tree; }
}
""",
    "p/User.java": """\
package p;

class User {
    Context<?> current;

    void run(Context<?> local, Context<? extends Tree> bounded) {
        local.tree.hasTag(1);
        current.tree.hasTag(2);
        bounded.tree.hasTag(3);
    }
}
""",
}


def test_a_member_of_a_type_parameter_read_through_a_wildcard_holds_its_bound(repo) -> None:
    calls = _calls_to(repo(CONTEXTS), "p/User.java", "hasTag")
    assert calls == {(7, "p/Tree.java"), (8, "p/Tree.java"), (9, "p/Tree.java")}


FORMATTERS = {
    "p/Formatter.java": """\
package p;

public class Formatter {
    public String format(int d) { return ""; }
}
""",
    "p/Other.java": """\
package p;

class Other {
    public String format(int d) { return ""; }
}
""",
    "p/Forwarding.java": """\
package p;

public class Forwarding<D, F> {
    protected F formatter;
    public F get() { return formatter; }
}
""",
    "p/Rich.java": """\
package p;

class Rich extends Forwarding<Integer, Formatter> {
    String run() {
        formatter.format(1);
        this.formatter.format(2);
        return get().format(3);
    }
}
""",
}


def test_a_subclass_reads_a_bases_member_of_a_type_parameter_as_its_extends_argument(
        repo) -> None:
    calls = _calls_to(repo(FORMATTERS), "p/Rich.java", "format")
    assert calls == {(5, "p/Formatter.java"), (6, "p/Formatter.java"), (7, "p/Formatter.java")}


ENTRIES = {
    "p/Scope.java": """\
package p;

public class Scope {
    public boolean isEmpty() { return true; }
}
""",
    "p/Other.java": """\
package p;

class Other {
    public boolean isEmpty() { return false; }
}
""",
    "p/Symtab.java": """\
package p;

import java.util.HashMap;
import java.util.Map;

class Symtab {
    private final Map<String, Scope> scopes = new HashMap<>();
    Map<String, Scope> scopes() { return scopes; }

    void run(Map<Integer, Scope> map) {
        for (Map.Entry<Integer, Scope> e : map.entrySet()) {
            e.getValue().isEmpty();
        }
        scopes.get("a").isEmpty();
        scopes().get("b").isEmpty();
        map.getOrDefault(1, null).isEmpty();
    }
}
""",
}


def test_a_jdk_maps_and_entrys_methods_return_their_type_arguments(repo) -> None:
    calls = _calls_to(repo(ENTRIES), "p/Symtab.java", "isEmpty")
    assert calls == {(12, "p/Scope.java"), (14, "p/Scope.java"), (15, "p/Scope.java"),
                     (16, "p/Scope.java")}


NODES = {
    "p/Graph.java": """\
package p;

public class Graph {
    public static abstract class AbstractNode<D, N extends AbstractNode<D, N>> {
        public final D data;
        AbstractNode(D data) { this.data = data; }
    }
    public static abstract class TarjanNode<D, N extends TarjanNode<D, N>>
            extends AbstractNode<D, N> {
        TarjanNode(D data) { super(data); }
    }
}
""",
    "p/Buffer.java": """\
package p;

public class Buffer<A> {
    public int length() { return 0; }
}
""",
    "p/Other.java": """\
package p;

class Other {
    public int length() { return 1; }
}
""",
    "p/Infer.java": """\
package p;

class Infer {
    class Node extends Graph.TarjanNode<Buffer<String>, Node> {
        Node() { super(null); }
    }

    int run(Node n) {
        return n.data.length();
    }
}
""",
}


def test_a_bases_member_of_a_type_parameter_read_on_a_subclass_holds_its_argument(repo) -> None:
    calls = _calls_to(repo(NODES), "p/Infer.java", "length")
    assert calls == {(9, "p/Buffer.java")}
