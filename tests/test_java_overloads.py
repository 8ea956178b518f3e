"""A Java call means the overloads of its name that can take its arguments, as javac picks
them: by how many there are (varargs taking any number from their fixed ones on), and where
that leaves several, by the static types of arguments whose type is certain."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from knoxidx.languages.java.parameters import parameters
from knoxidx.parse.extract import extract
from tests.helpers import build

BASE = """\
package p;

public class Base {
    public void log(String message, Object... args) {}
    public void log(int level, String message, Throwable cause) {}
}
"""

LOGGER = """\
package p;

public class Logger extends Base {
    void emit(String message) {}
    void emit(String message, int level) {}
    void emit(int level, String message, int repeat) {}

    void run() {
        emit("a");
        emit("b", 2);
        this.emit(1, "c", 3);
        log(4, "d", null);
        log("e");
        log("f", 1, 2, 3, 4);
    }
}
"""


def _calls(root) -> set[tuple[int, str]]:
    """(line, signature of the target) of every Calls edge to a method."""
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        return {(e["line"], nodes[e["target"]]["signature"])
                for e in export.edges(idx.q)
                if e["type"] == "Calls" and nodes[e["target"]]["kind"] == "Function"}


def test_a_call_means_the_overloads_that_take_as_many_arguments(repo) -> None:
    root = repo({"p/Base.java": BASE, "p/Logger.java": LOGGER})
    build(root)
    calls = _calls(root)
    assert {s for line, s in calls if line == 9} == {"void emit(String message)"}
    assert {s for line, s in calls if line == 10} == {"void emit(String message, int level)"}
    assert {s for line, s in calls if line == 11} == {
        "void emit(int level, String message, int repeat)"}


def test_overloads_inherited_from_a_base_are_chosen_among_too(repo) -> None:
    # Logger declares no `log`: the base's two are the candidates, told apart by arity; and
    # varargs take their fixed arguments and any number more
    root = repo({"p/Base.java": BASE, "p/Logger.java": LOGGER})
    build(root)
    calls = _calls(root)
    three = "public void log(int level, String message, Throwable cause)"
    varargs = "public void log(String message, Object... args)"
    assert {s for line, s in calls if line == 12} == {three}
    assert {s for line, s in calls if line == 13} == {varargs}
    assert {s for line, s in calls if line == 14} == {varargs}


def test_a_call_records_how_many_arguments_it_passes() -> None:
    source = b"class A { void f() { g(); a.g(1, /* two */ 2, h(3)); } }"
    arities = {(r.path, r.arity) for r in extract("A.java", source, "java").refs
               if r.kind == "call"}
    assert arities == {(("g",), 0), (("a", "g"), 3), (("h",), 1)}


def test_parameters_read_from_a_signature() -> None:
    assert parameters("public void f()", "f") == (0, 0, ())
    assert parameters("void f(final int a, Map<K, V> m, int b[])", "f") == (
        3, 3, ("int", "Map", "int[]"))
    # varargs; a type variable of the method's or named like one is any type ("?")
    assert parameters('@A("x,y") static <Sym> T f(Sym a, T b, String... xs)', "f") == (
        2, -1, ("?", "?", "String..."))
    assert parameters("void f(Outer Outer.this, int a)", "f") == (1, 1, ("int",))
    # ... but an array of one is an array all the same: no collection is passed to it
    assert parameters("static <A> List<A> from(A[] array)", "from") == (1, 1, ("?[]",))
    assert parameters("static <T> void all(T... xs)", "all") == (0, -1, ("?...",))
    assert parameters("void f(int a,", "f") is None  # cut off: any number, any type


TREES = """\
package p;

public class Trees {
    enum Flag { SYNTAX }
    static class Node {}
    static class Leaf extends Node {}
    static class Other {}

    Leaf leaf;
    int count;

    void scan(Node node) {}
    void scan(Other other) {}
    void scan(int pos) {}
    void mark(Flag flag) {}
    void mark(String text) {}
    void take(Trees self) {}
    void take(Other other) {}

    void run(Leaf given, long wide) {
        scan(new Leaf());
        scan(given);
        scan(leaf);
        scan(count);
        mark(Flag.SYNTAX);
        take(this);
        scan((Other) null);
        mark(null);
        scan(wide);
    }
}
"""


def test_overloads_of_one_arity_are_told_apart_by_certain_argument_types(repo) -> None:
    root = repo({"p/Trees.java": TREES})
    build(root)
    calls = _calls(root)

    def at(line: int) -> set[str]:
        return {s for n, s in calls if n == line}

    node, other, pos = "void scan(Node node)", "void scan(Other other)", "void scan(int pos)"
    assert at(21) == {node}  # new Leaf(): a subclass of Node
    assert at(22) == {node}  # a parameter declared Leaf
    assert at(23) == {node}  # a field declared Leaf
    assert at(24) == {pos}  # a field declared int
    assert at(25) == {"void mark(Flag flag)"}  # an enum's constant
    assert at(26) == {"void take(Trees self)"}  # this
    assert at(27) == {other}  # a cast
    # null fits every reference type; a long no parameter here: both left as they were, but
    # three overloads left untold apart are no edge (see the test of tied overloads)
    assert at(28) == {"void mark(Flag flag)", "void mark(String text)"}
    assert at(29) == set()


CALLS = """\
package p;

public class Calls {
    static class Node {}
    static class Other {}

    Node node() { return null; }
    static Other other() { return null; }

    void scan(Node node) {}
    void scan(Other other) {}

    void run() {
        scan(node());
        scan(Calls.other());
    }
}
"""


def test_a_call_passed_as_an_argument_is_typed_by_what_it_returns(repo) -> None:
    root = repo({"p/Calls.java": CALLS})
    build(root)
    calls = _calls(root)
    assert {s for n, s in calls if n == 14 and "scan" in s} == {"void scan(Node node)"}
    assert {s for n, s in calls if n == 15 and "scan" in s} == {"void scan(Other other)"}


SCANNER = """\
package p;

import java.util.List;

public class Scanner<R> {
    interface Tree {}
    interface Leaf extends Tree {}

    void scan(Tree tree) {}
    void scan(Iterable<? extends Tree> trees) {}
    void show(String text) {}
    void show(boolean flag) {}
    void keep(R value) {}
    void keep(List<R> values) {}

    void run(Leaf leaf, R value, int n) {
        scan(leaf);
        show("n = " + n);
        show(n > 1);
        keep(value);
    }
}
"""


def test_types_outside_the_index_and_operations_tell_overloads_apart(repo) -> None:
    # Leaf's every base is in the index: it is no Iterable; a class's type variable R is
    # any type (the List overload stays)
    root = repo({"p/Scanner.java": SCANNER})
    build(root)
    calls = _calls(root)
    assert {s for n, s in calls if n == 17} == {"void scan(Tree tree)"}
    assert {s for n, s in calls if n == 18} == {"void show(String text)"}
    assert {s for n, s in calls if n == 19} == {"void show(boolean flag)"}
    assert {s for n, s in calls if n == 20} == {"void keep(R value)", "void keep(List<R> values)"}


POSITIONS = """\
package p;

public class Positions {
    interface Position {}
    static class Key<T> {}
    static class Tree implements Position {
        int pos;
        Position pos() { return this; }
    }
    static final Key<Positions> KEY = new Key<>();

    void error(int pos, String key) {}
    void error(Position pos, String key) {}
    void put(Key<?> key, Object value) {}
    void put(Class<?> type, Object value) {}

    void run(Tree tree) {
        error(tree.pos, "a");
        error(tree.pos(), "b");
        put(KEY, this);
    }
}
"""


def test_a_field_and_a_method_of_one_name_type_a_read_and_a_call_apart(repo) -> None:
    root = repo({"p/Positions.java": POSITIONS})
    build(root)
    calls = _calls(root)
    assert {s for n, s in calls if n == 18 and "error" in s} == {"void error(int pos, String key)"}
    assert {s for n, s in calls if n == 19 and "error" in s} == {
        "void error(Position pos, String key)"}
    # a field declared `Key<Positions>` (initialised `new Key<>()`) is a Key, no Class
    assert {s for n, s in calls if n == 20 and "put" in s} == {
        "void put(Key<?> key, Object value)"}


CHECKS = """\
package p;

public class Checks {
    static void check(boolean cond, Object value) {}
    static void check(boolean cond, String message) {}

    void run(Object given) {
        check(true, "message");
        check(false, given);
    }
}
"""


def test_of_the_overloads_an_argument_fits_the_most_specific_is_called(repo) -> None:
    # a string literal fits Object and String: javac calls the String one
    root = repo({"p/Checks.java": CHECKS})
    build(root)
    calls = _calls(root)
    assert {s for n, s in calls if n == 8} == {"static void check(boolean cond, String message)"}
    assert {s for n, s in calls if n == 9} == {"static void check(boolean cond, Object value)"}


LIST_SCANNER = """\
package p;

import java.util.List;

public class Scanner {
    public void scan(Tree tree) {}
    public void scan(List<Tree> trees) {}
}
"""

FILTER = """\
package p;

import java.util.List;

class Tree {}

class Filter extends Scanner {
    List<Tree> children;
    Tree root;

    @Override
    public void scan(Tree tree) {
        scan(children);
        scan(root);
        super.scan(tree);
    }
}
"""


def test_a_classs_method_hides_no_inherited_overload_of_other_parameters(repo) -> None:
    # `scan(Tree)` declared beside the base's `scan(List)`: a list passed is the base's
    # (javac's TreeScanner subclasses lost ~80 calls to their own overload)
    root = repo({"p/Scanner.java": LIST_SCANNER, "p/Filter.java": FILTER})
    build(root)
    calls = _calls(root)
    assert {s for line, s in calls if line == 13} == {"public void scan(List<Tree> trees)"}
    assert {s for line, s in calls if line == 14} == {"@Override public void scan(Tree tree)"}
    assert {s for line, s in calls if line == 15} == {"public void scan(Tree tree)"}
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        own = {e["line"] for e in export.edges(idx.q) if e["type"] == "Calls"
               and nodes[e["target"]]["path"] == "p/Filter.java"}
    assert own == {14}  # the override itself, not the base's it overrides


TREE = """\
package p;

public abstract class Tree {
    public abstract void accept(Visitor v);

    @DefinedBy(Api.COMPILER_TREE)
    public abstract <R,D> R accept(TreeVisitor<R,D> v, D d);

    public static abstract class Visitor {
        void run(Tree tree) { tree.accept(this); }
    }
}
"""


def test_an_abstract_methods_signature_is_its_header_past_the_annotations_lines(repo) -> None:
    # (read as its first line, `@DefinedBy(..)`, it took any number of arguments)
    defs = extract("p/Tree.java", TREE.encode(), "java").defs
    assert [d.signature for d in defs if d.name == "accept"] == [
        "public abstract void accept(Visitor v);",
        "public abstract <R,D> R accept(TreeVisitor<R,D> v, D d);"]
    root = repo({"p/Tree.java": TREE})
    build(root)
    assert {s for line, s in _calls(root) if line == 10} == {
        "public abstract void accept(Visitor v);"}


NODE = """\
package p;

public class Node implements Cloneable {
    public Leaf left;

    public static class Leaf extends Node {}
}
"""

DIFFER = """\
package p;

public class Differ {
    public boolean scan(Node tree, Node other) { return true; }
    private boolean scan(Iterable<? extends Node> xs, Iterable<? extends Node> ys) { return true; }

    void visit(Node tree, Node that) {
        scan(tree.left, that.left);
    }
}
"""


def test_a_class_whose_base_outside_the_index_is_a_known_jdk_type_is_no_other(repo) -> None:
    # (`implements Cloneable` made a Leaf a possible Iterable: both overloads took the call)
    root = repo({"p/Node.java": NODE, "p/Differ.java": DIFFER})
    build(root)
    assert {s for line, s in _calls(root) if line == 8} == {
        "public boolean scan(Node tree, Node other)"}


CONTEXT = """\
package p;

public class Context {
    public static class Key<T> {}
    public <T> T get(Key<T> key) { return null; }
    public <T> T get(Class<T> clazz) { return null; }
}
"""

ARRAYS = """\
package p;

public class Arrays {
    public static <T> T[] grow(T[] array, int size) { return array; }
    public static byte[] grow(byte[] array, int size) { return array; }
    public static int[] grow(int[] array, int size) { return array; }
}
"""

USER = """\
package p;

class User {
    Node[] nodes;
    byte[] buf;

    void run(Context context) {
        context.get(Node.class);
        nodes = Arrays.grow(nodes, 4);
        buf = Arrays.grow(buf, 4);
    }
}
"""


def test_a_class_literal_and_an_array_tell_overloads_apart(repo) -> None:
    # (neither was typed: each call took every overload of its arity)
    root = repo({"p/Context.java": CONTEXT, "p/Arrays.java": ARRAYS, "p/Node.java": NODE,
                 "p/User.java": USER})
    build(root)
    calls = _calls(root)
    assert {s for line, s in calls if line == 8} == {
        "public <T> T get(Class<T> clazz)"}
    assert {s for line, s in calls if line == 9} == {
        "public static <T> T[] grow(T[] array, int size)"}
    assert {s for line, s in calls if line == 10} == {
        "public static byte[] grow(byte[] array, int size)"}


KIDS_HOLDER = """\
package p;

import java.util.List;

public interface Holder extends Tree {
    List<? extends Tree> getKids();
}
"""

KIDS_SCANNER = """\
package p;

public class Scanner {
    public void scan(Tree tree, int p) {}
    public void scan(Iterable<? extends Tree> trees, int p) {}

    void visit(Holder node) {
        scan(node.getKids(), 1);
    }
}
"""


def test_a_type_outside_the_index_is_read_where_the_value_is_declared(repo) -> None:
    # (`List`, looked up in the calling file that imports none, was any class at all)
    root = repo({"p/Tree.java": "package p;\n\npublic interface Tree {}\n",
                 "p/Holder.java": KIDS_HOLDER, "p/Scanner.java": KIDS_SCANNER})
    build(root)
    assert {s for line, s in _calls(root) if line == 8 and "scan" in s} == {
        "public void scan(Iterable<? extends Tree> trees, int p)"}


TRANSLATOR = """\
package p;

public class Translator {
    public <T extends Node> T translate(T tree) { return tree; }
    public <T extends Node> Seq<T> translate(Seq<T> trees) { return trees; }
}
"""

LOWER = """\
package p;

public class Lower extends Translator {
    Seq<Node> defs;

    public <T extends Node> T translate(T tree) { return tree; }

    <T extends Node> void run(T tree) {
        defs = translate(defs);
        keep(tree);
    }

    void keep(Node node) {}
    void keep(Seq<Node> nodes) {}
}
"""


def test_a_methods_type_variable_is_read_as_its_bound(repo) -> None:
    # (`T translate(T tree)` took a Seq, hiding the inherited `translate(Seq<T>)`; a `T tree`
    # argument fitted both keeps)
    root = repo({"p/Node.java": NODE, "p/Seq.java": "package p;\n\npublic class Seq<A> {}\n",
                 "p/Translator.java": TRANSLATOR, "p/Lower.java": LOWER})
    build(root)
    calls = _calls(root)
    assert {s for line, s in calls if line == 9} == {
        "public <T extends Node> Seq<T> translate(Seq<T> trees)"}
    assert {s for line, s in calls if line == 10} == {"void keep(Node node)"}


DURATION = """\
package p;

public class Duration {
    private Duration plus(long seconds, long nanos) { return this; }
    public Duration plus(long amount, Node unit) { return this; }

    Duration plusMillis(long millis) {
        return plus(millis / 1000, -millis);
    }
}
"""


def test_an_arithmetic_result_is_a_number_of_no_class(repo) -> None:
    # (`millis / 1000` was of no known type: both overloads took the call)
    root = repo({"p/Node.java": NODE, "p/Duration.java": DURATION})
    build(root)
    assert {s for line, s in _calls(root) if line == 8} == {
        "private Duration plus(long seconds, long nanos)"}


PARSER = """\
package p;

interface Filter {}

enum Kind implements Filter { ARROW, COMMA }

class Parser {
    boolean peek(Filter k) { return true; }
    boolean peek(int lookahead, Filter k) { return true; }
    boolean peek(Filter... kinds) { return true; }
    boolean peek(int lookahead, Filter... kinds) { return true; }

    void run(int ahead, Filter[] all, Kind k) {
        peek(ahead, Kind.COMMA);
        peek(k);
        peek(ahead, all);
        peek(k, k);
    }
}
"""


def test_a_fixed_arity_overload_is_called_before_a_varargs_one(repo) -> None:
    root = repo({"p/Parser.java": PARSER})
    build(root)
    assert _calls(root) == {
        (14, "boolean peek(int lookahead, Filter k)"),
        (15, "boolean peek(Filter k)"),
        # an array in the varargs' place (a parameter of an array type is not typed): both
        (16, "boolean peek(int lookahead, Filter k)"),
        (16, "boolean peek(int lookahead, Filter... kinds)"),
        (17, "boolean peek(Filter... kinds)"),  # only the varargs one takes two
    }


ASSERT = """\
package p;

import java.util.function.Supplier;

class Message {}

class Assert {
    static void check(boolean cond, Object value) {}
    static void check(boolean cond, String msg) {}
    static void check(boolean cond, Supplier<String> msg) {}
    static void note(Message m) {}
    static void note(Runnable r) {}

    void run(Object owner) {
        check(true, () -> "lazy");
        check(false, owner::toString);
        note(() -> {});
    }
}
"""


def test_a_lambda_or_a_method_reference_is_passed_to_a_functional_interface_only(repo) -> None:
    root = repo({"p/Assert.java": ASSERT})
    build(root)
    assert _calls(root) == {
        (15, "static void check(boolean cond, Supplier<String> msg)"),
        (16, "static void check(boolean cond, Supplier<String> msg)"),
        (17, "static void note(Runnable r)"),
    }


LISTS = """\
package p;

import java.util.Set;

class Lists {
    static <A> Lists from(A[] array) { return null; }
    static <A> Lists from(Iterable<? extends A> coll) { return null; }

    void run(Set<String> names) {
        from(names);
    }
}
"""


def test_a_collection_is_not_passed_to_an_array_of_a_type_variable(repo) -> None:
    root = repo({"p/Lists.java": LISTS})
    build(root)
    assert _calls(root) == {(10, "static <A> Lists from(Iterable<? extends A> coll)")}


NULL_CHECKS = """\
package p;

import java.util.Collection;
import javax.tools.JavaFileManager.Location;

class Checks {
    static <T> T nullCheck(T o) { return o; }
    static <T> Collection<T> nullCheck(Collection<T> it) { return it; }

    void run(Location location, Collection<String> names) {
        nullCheck(location);
        nullCheck(names);
    }
}
"""


def test_a_jdk_type_of_another_name_is_none_of_the_jdks_collections(repo) -> None:
    root = repo({"p/Checks.java": NULL_CHECKS})
    build(root)
    assert _calls(root) == {
        (11, "static <T> T nullCheck(T o)"),
        (12, "static <T> Collection<T> nullCheck(Collection<T> it)"),
    }


WRAPPER = """\
package p;

import javax.tools.FileObject;
import javax.tools.JavaFileManager;

class Wrapper {
    Object wrap(FileObject f) { return f; }
    Object wrap(Iterable<?> fs) { return fs; }
    Object wrap(Runnable r) { return r; }
    Object unwrap(FileObject f) { return f; }
    Object unwrap(Iterable<?> fs) { return fs; }

    Object run(JavaFileManager m) {
        wrap(m.getFileForInput(null, "a", "b"));
        return unwrap(m.getFileForInput(null, "a", "b"));
    }
}
"""


def test_three_overloads_the_arguments_cannot_tell_apart_are_no_edge(repo) -> None:
    # (two are named at the name level: one of them is right; of three, two are wrong)
    root = repo({"p/Wrapper.java": WRAPPER})
    build(root)
    calls = _calls(root)
    assert not {s for line, s in calls if line == 14}
    assert {s for line, s in calls if line == 15} == {
        "Object unwrap(FileObject f)", "Object unwrap(Iterable<?> fs)"}
    with Index.open(root) as idx:
        unresolved = idx.q.conn.execute(
            "SELECT name, reason FROM unresolved WHERE line = 14 AND name = 'wrap'").fetchall()
    assert [tuple(r) for r in unresolved] == [("wrap", "ambiguous")]
