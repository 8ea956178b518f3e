"""A Java lambda's parameter holds what the called method passes it: an element of the
receiver for a collection's or a stream's own method (`ts.forEach(t -> ..)`,
`xs.stream().filter(x -> ..)`), the type argument of the functional interface the called
method declares at that argument (`Predicate<Tree>`, `Function<A, B>` of a `List<Tree>`),
or of the one a local or a method's result is declared of. javac lost ~60 calls without:
`tree.directives.forEach(t -> t.accept(this))`."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from knoxidx.languages.java.hooks import RULES
from tests.helpers import build

FILES = {
    "p/Tree.java": """\
package p;

public class Tree {
    public boolean hasTag(int t) { return true; }
    public String name() { return ""; }
}
""",
    "p/Seq.java": """\
package p;

import java.util.function.Function;

public class Seq<A> {
    public <B> Seq<B> map(Function<A, B> mapper) { return null; }
}
""",
    # a second class of each method's name: no unique-name guess stands in for the types
    "p/Other.java": """\
package p;

class Other {
    public boolean hasTag(int t) { return false; }
    public String name() { return ""; }
}
""",
    "p/User.java": """\
package p;

import java.util.List;
import java.util.Comparator;
import java.util.function.BiFunction;
import java.util.function.Predicate;

class User {
    List<Tree> trees;

    void run(List<Tree> ts, Seq<Tree> seq) {
        ts.forEach(t -> t.hasTag(1));
        trees.stream()
            .filter(t -> t.hasTag(2))
            .count();
        List<Tree> local = ts;
        local.forEach(x -> x.hasTag(3));
        each(t -> t.hasTag(4));
        both((a, b) -> a.hasTag(5) && b.hasTag(6));
        seq.map(t -> t.name());
        Predicate<Tree> p = t -> t.hasTag(7);
    }

    Comparator<Tree> order() {
        return (a, b) -> a.name().compareTo(b.name());
    }

    static void each(Predicate<Tree> p) {}
    static void both(BiFunction<Other, Tree, Boolean> f) {}
}
""",
}


def test_a_lambdas_parameter_holds_what_the_called_method_passes_it(repo) -> None:
    root = repo(FILES)
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["path"], e["line"], nodes[e["target"]]["path"], nodes[e["target"]]["name"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"}
    user = {(line, path, name) for site, line, path, name in calls if site == "p/User.java"}
    tree = "p/Tree.java"
    assert user >= {(12, tree, "hasTag"), (14, tree, "hasTag"), (17, tree, "hasTag"),
                    (18, tree, "hasTag"), (19, "p/Other.java", "hasTag"), (19, tree, "hasTag"),
                    (20, tree, "name"), (21, tree, "hasTag"), (25, tree, "name")}
    assert (19, tree, "hasTag") in user and (19, "p/Other.java", "hasTag") in user
    wrong = {(line, name) for line, path, name in user
             if path == "p/Other.java" and line != 19}
    assert not wrong


def test_what_a_functional_interface_passes_each_lambda_parameter() -> None:
    assert RULES.callback_parameter("Function<? super Tree, ? extends R>") == "Tree"
    assert RULES.callback_parameter("BiFunction<A, Tree, R>", 1) == "Tree"
    assert RULES.callback_parameter("java.util.Comparator<Tree>", 1) == "Tree"
    assert RULES.callback_parameter("Supplier<Tree>") == ""
    assert RULES.callback_parameter("Runnable") == ""
    assert RULES.element_type("private final List<JCTree> trees = List.nil();") == "JCTree"
    assert RULES.element_type("Stream<? extends Symbol>") == "Symbol"
    assert RULES.element_type("Map<K, V>") == ""


VISITOR = """\
package p;

import java.util.function.Function;

class Type {}

class Types<S> {
    static class Seq { Seq map(Function<Type, Type> f) { return this; } }

    Type visit(Type t, S s) { return t; }
    Seq visit(Seq ts, S s) { return ts.map(t -> visit(t, s)); }
}
"""


def test_a_lambda_parameter_argument_picks_the_overload_of_its_type(repo) -> None:
    root = repo({"p/Types.java": VISITOR})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["signature"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"
                 and nodes[e["target"]]["name"] == "visit"}
    assert calls == {(11, "Type visit(Type t, S s)")}
