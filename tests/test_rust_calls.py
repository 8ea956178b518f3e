"""Rust calls resolved from what the code says, not guessed by name: a method inside an
``impl Trait for Type`` block knows ``self`` and ``Self`` as well as one in ``impl Type``, and
a method called on a value whose type is not known stays unresolved rather than going to the
one same-named method in the crate."""

from __future__ import annotations

from knoxidx.graph import export, resolve
from knoxidx.index import Index
from tests.helpers import build, resolve_every_file
from tests.test_references import refs, sites

STATE = """
use std::fmt;

pub struct State(usize);
pub struct Snapshot(usize);

impl State {
    pub fn new() -> State { State(0) }
    pub fn load(&self) -> Snapshot { Snapshot(self.0) }
}

impl Snapshot {
    pub fn is_idle(&self) -> bool { self.0 == 0 }
}

impl fmt::Debug for State {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        let snapshot = self.load();
        snapshot.is_idle();
        Ok(())
    }
}

impl Default for State {
    fn default() -> Self {
        Self::new()
    }
}
"""
# another type of the same name in another module of the crate, with a method of the same name
IDLE = """
pub struct State(usize);

impl State {
    pub fn load(&self) -> usize { self.0 }
    pub fn new() -> State { State(1) }
}
"""


def _callees(idx: Index, name: str) -> set[tuple[str, str]]:
    return {(c["qualified_name"], c["confidence"]) for c in idx.callees(name)["callees"]}


def test_self_is_the_implementing_type_not_any_type_of_its_name(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": "mod state;\nmod idle;\n",
                 "src/state.rs": STATE, "src/idle.rs": IDLE})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::state::State::fmt") == {
            ("p::state::State::load", "inferred"), ("p::state::Snapshot::is_idle", "inferred")}
        assert _callees(idx, "p::state::State::default") == {("p::state::State::new", "exact")}


BUFFER = """
pub struct ParseBuffer(usize);

impl ParseBuffer {
    pub fn peek2(&self) -> bool {
        // a helper local to the method: no method of ParseBuffer
        fn peek2(buffer: &ParseBuffer) -> bool { buffer.0 > 1 }
        peek2(self)
    }
}

pub fn parse(input: &ParseBuffer) -> bool {
    input.peek2()
}

mod tests {
    pub struct Probe;

    impl Probe {
        pub fn check(&self) -> bool { true }
    }

    fn run(probe: &Probe) -> bool {
        probe.check()
    }
}
"""


def test_a_function_inside_a_method_is_no_method_and_an_inline_module_s_impl_is(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": BUFFER})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::parse") == {("p::ParseBuffer::peek2", "inferred")}
        assert _callees(idx, "p::tests::run") == {("p::tests::Probe::check", "inferred")}


WATCH = """
pub struct Receiver(usize);

impl Receiver {
    pub fn changed(&self) -> bool { self.0 > 0 }
}

pub fn zeroed() -> bool {
    // std's MaybeUninit, not the crate's one `assume_init` nor its one `changed`
    let raw = std::mem::MaybeUninit::<u8>::zeroed();
    raw.changed()
}

pub fn known(rx: &Receiver) -> bool {
    rx.changed()
}
"""


def test_a_method_of_a_value_of_unknown_type_stays_unresolved_not_guessed(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": WATCH})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::zeroed") == set()
        assert _callees(idx, "p::known") == {("p::Receiver::changed", "inferred")}


TASK_MOD = """
pub fn shutdown() {}
pub fn poll() {}
"""
TASK_LIB = """
mod raw;

pub struct RawTask;

impl RawTask {
    pub fn shutdown(&self) {}
}

pub struct Task { raw: RawTask }

impl Task {
    pub fn stop(self) {
        let raw = self.raw;
        raw.shutdown();
    }

    pub fn typed(self) {
        let raw: RawTask = self.raw;
        raw.shutdown();
    }
}

pub fn drain(queue: Vec<RawTask>) {
    for raw in queue {
        raw.poll();
    }
    raw::poll();
}
"""


def test_a_local_named_like_a_module_is_a_value_not_the_module(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": TASK_LIB,
                 "src/raw.rs": TASK_MOD})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::Task::stop") == set()  # the type of `raw` is not known
        assert _callees(idx, "p::Task::typed") == {("p::RawTask::shutdown", "inferred")}
        assert _callees(idx, "p::drain") == {("p::raw::poll", "exact")}


LINKED = """
pub trait Link {
    fn from_raw(ptr: usize) -> Self;
}

pub struct Task(usize);

impl Task {
    pub fn from_raw(ptr: usize) -> Task { Task(ptr) }
}

impl Link for Task {
    fn from_raw(ptr: usize) -> Task {
        Task::from_raw(ptr)
    }
}

pub fn wrap(ptr: usize) -> Task {
    Task::from_raw(ptr)
}
"""


def test_an_inherent_method_is_found_before_a_trait_impl_s_method_of_the_same_name(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": LINKED})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::wrap") == {("p::Task::from_raw", "exact")}
        # (by line) the trait impl's from_raw (13) calls the inherent one (9), not itself
        edges = idx.store.conn.execute(
            "SELECT s.start_line, t.start_line, e.confidence FROM edges e"
            " JOIN nodes s ON s.id = e.source JOIN nodes t ON t.id = e.target"
            " WHERE e.type = 'Calls' AND t.name = 'from_raw'").fetchall()
        assert sorted(edges) == [(13, 9, "exact"), (18, 9, "exact")]


# tokio's way: the API declared inside `cfg_*! { }` calls (a macro_rules that repeats its items
# under a `#[cfg]`), a re-export among them, and a struct inside `pin_project! { }`
MACRO_LIB = """\
macro_rules! cfg_rt { ($($item:item)*) => { $( #[cfg(feature = "rt")] $item )* } }

mod task;

cfg_rt! {
    pub use task::spawn;
    cfg_rt! {
        pub fn nested() -> u8 { 1 }
    }
}

pin_project! {
    pub struct Reader<R> {
        #[pin]
        inner: R,
    }
}

impl<R> Reader<R> {
    cfg_rt! {
        pub fn get_ref(&self) -> &R { &self.inner }
    }
    pub fn is_ready(&self) -> bool {
        self.get_ref();
        true
    }
}

bitflags! { pub struct Flags: u32 { const A = 1; } }

pub fn run() {
    spawn();
    crate::spawn();
    nested();
}
"""
MACRO_TASK = """\
cfg_rt! {
    pub fn spawn() {}
}
"""


def test_items_inside_a_macro_call_are_extracted_where_they_stand(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": MACRO_LIB,
                 "src/task.rs": MACRO_TASK})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::run") == {("p::task::spawn", "exact"), ("p::nested", "exact")}
        assert _callees(idx, "p::Reader::is_ready") == {("p::Reader::get_ref", "inferred")}
        lines = dict(idx.store.conn.execute(
            "SELECT qualified_name, start_line FROM nodes").fetchall())
        # every line where it is written; the body that is no item list stays tokens
        assert lines["p::nested"] == 8 and lines["p::Reader"] == 13
        assert lines["p::Reader::get_ref"] == 21 and "p::Flags" not in lines


def test_an_integration_test_names_its_crate_without_a_use(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n',
                 "src/lib.rs": "pub mod task;\npub fn parse_str() {}\n",
                 "src/task.rs": "pub fn yield_now() {}\n",
                 "tests/it.rs": "fn it() {\n    p::parse_str();\n    p::task::yield_now();\n"
                                "    q::parse_str();\n}\n"})
    build(root)
    with Index.open(root) as idx:
        # `q` is no crate of the workspace: left unresolved
        assert _callees(idx, "p::tests::it::it") == {("p::parse_str", "exact"),
                                                      ("p::task::yield_now", "exact")}


def test_an_impl_s_method_is_no_name_of_its_module(repo) -> None:
    clock = ("pub fn pause() {}\n"
             "pub struct Clock;\n"
             "impl Clock {\n    pub fn pause(&self) {}\n}\n"
             "impl Drop for Clock {\n    fn drop(&mut self) {}\n}\n"
             "pub fn stop(c: Clock) {\n    drop(c);\n}\n")
    root = repo({"Cargo.toml": '[package]\nname = "p"\n',
                 "src/lib.rs": "pub mod clock;\npub fn run() {\n    clock::pause();\n}\n",
                 "src/clock.rs": clock})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::run") == {("p::clock::pause", "exact")}
        assert _callees(idx, "p::clock::stop") == set()  # the prelude's `drop`


WRAPPED = """\
pub struct Mutex<T>(T);
impl<T> Mutex<T> {
    pub fn lock(&self) -> &T { &self.0 }
}
#[derive(Clone)]
pub struct Lit;
impl Lit {
    pub fn span(&self) {}
}
impl Clone for Lit {
    fn clone(&self) -> Lit { Lit }
}
pub struct ExprLit {
    lit: Option<Lit>,
    boxed: Box<Lit>,
    guarded: Mutex<Lit>,
}
impl ExprLit {
    pub fn touch(&self, other: Option<Lit>) {
        self.lit.clone();
        other.clone();
        self.boxed.span();
        self.guarded.lock();
    }
}
"""


def test_a_value_in_an_option_shows_the_option_s_methods_not_its_content_s(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": WRAPPED})
    build(root)
    with Index.open(root) as idx:
        # `Option<Lit>`'s clone is Option's (std); a Box derefs to its Lit; the crate's own
        # Mutex is a type of its own, not the Lit inside
        assert _callees(idx, "p::ExprLit::touch") == {("p::Lit::span", "inferred"),
                                                       ("p::Mutex::lock", "inferred")}


def test_an_impl_for_a_reference_is_the_referenced_type_s(repo) -> None:
    fields = ("pub struct Fields;\n"
              "impl Fields {\n    pub fn iter(&self) -> u8 { 0 }\n}\n"
              "impl<'a> IntoIterator for &'a Fields {\n"
              "    type Item = u8;\n    type IntoIter = std::option::IntoIter<u8>;\n"
              "    fn into_iter(self) -> Self::IntoIter {\n        Some(self.iter()).into_iter()\n"
              "    }\n}\n")
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": fields})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::Fields::into_iter") == {("p::Fields::iter", "inferred")}


BOXED = """\
pub struct Expr;
impl Expr {
    pub fn span(&self) {}
}
impl Clone for Expr {
    fn clone(&self) -> Expr { Expr }
}
pub struct Binary {
    left: Box<Expr>,
    right: std::sync::Arc<Expr>,
}
impl Binary {
    pub fn touch(&self) {
        self.left.span();
        self.left.clone();
        self.right.clone();
    }
}
"""


def test_a_box_s_own_trait_methods_are_the_box_s_not_the_boxed_type_s(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": BOXED})
    build(root)
    with Index.open(root) as idx:
        # `span` derefs to Expr's; `clone` is Box's and Arc's (an Arc's clone is no Expr clone)
        assert _callees(idx, "p::Binary::touch") == {("p::Expr::span", "inferred")}


def test_a_path_attribute_names_the_module_s_file(repo) -> None:
    # syn's way: lib.rs declares `mod gen { #[path = "../gen_helper.rs"] mod helper; }`
    lib = ("mod gen {\n    pub mod fold;\n    #[path = \"../gen_helper.rs\"]\n"
           "    mod helper;\n}\n")
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": lib,
                 "src/gen_helper.rs": "pub mod fold {\n    pub fn tokens_helper() {}\n}\n",
                 "src/gen/fold.rs": "use crate::gen::helper::fold::*;\n"
                                    "pub fn fold_item() {\n    tokens_helper();\n}\n"})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::gen::fold::fold_item") == {
            ("p::gen_helper::fold::tokens_helper", "exact")}


VISIT = """
pub trait Node {
    fn span(&self) -> usize;
}

pub trait Visit<'ast>: Node {
    fn visit_expr(&mut self, expr: usize) {}
    fn visit_ident(&mut self, ident: usize) {}
}

pub trait Fold {
    fn fold_expr(&mut self, expr: usize) -> usize { expr }
}

// a type named like a type parameter: no parameter `T` below means it
pub struct T;

impl T {
    pub fn visit_expr(&self) {}
}

pub fn visit_bin<'ast, V>(v: &mut V, left: usize)
where
    V: Visit<'ast> + ?Sized,
{
    v.visit_expr(left);
    v.span();
}

pub fn visit_both<V: Visit<'static> + Fold + Send>(v: &mut V) {
    v.visit_ident(1);
    v.fold_expr(2);
}

pub fn by_impl(v: &mut impl Fold, w: Box<dyn Visit<'static> + Send>, u: &dyn Fold) {
    v.fold_expr(1);
    w.visit_ident(2);
    u.fold_expr(3);
}

pub fn unbounded<T>(t: T) {
    t.visit_expr();
}

pub struct Walker<F> { folder: F }

impl<F: Fold> Walker<F> {
    pub fn walk(&mut self, f: &mut F) {
        let run = |x: usize| f.fold_expr(x);
        run(1);
    }
}
"""


def test_a_value_of_a_bounded_type_parameter_has_the_bounds_methods(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": VISIT})
    build(root)
    with Index.open(root) as idx:
        # the `where` clause's bound, and its supertrait's method
        assert _callees(idx, "p::visit_bin") == {
            ("p::Visit::visit_expr", "inferred"), ("p::Node::span", "inferred")}
        # every bound of `<V: A + B + Send>`
        assert _callees(idx, "p::visit_both") == {
            ("p::Visit::visit_ident", "inferred"), ("p::Fold::fold_expr", "inferred")}
        # `impl Fold`, `Box<dyn Visit + Send>`, `&dyn Fold`
        assert _callees(idx, "p::by_impl") == {
            ("p::Fold::fold_expr", "inferred"), ("p::Visit::visit_ident", "inferred")}
        # a parameter with no bound has no methods here, not those of a type named like it
        assert _callees(idx, "p::unbounded") == set()
        # the impl's type parameter, read in a closure of its method
        assert ("p::Fold::fold_expr", "inferred") in _callees(idx, "p::Walker::walk")


DESCRIBE = """
pub trait Describe {
    fn describe(&self) -> String;

    fn headline(&self) -> String {
        self.describe()
    }

    fn footer(&self) -> String {
        String::new()
    }
}

pub struct Shelf;
pub struct Other;

impl Describe for Shelf {
    fn describe(&self) -> String { String::new() }

    fn footer(&self) -> String { String::from("shelf") }
}

impl Other {
    pub fn make() -> Other { Other }
}

pub fn report(shelf: &Shelf, other: &Other) {
    shelf.headline();
    shelf.footer();
    other.headline();
}
"""


def test_a_trait_s_default_method_is_a_method_of_its_implementing_types(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": DESCRIBE})
    build(root)
    with Index.open(root) as idx:
        # the default `headline`; the impl's own `footer` wins over the trait's default;
        # `Other` implements no Describe: its `headline` is not the trait's
        assert _callees(idx, "p::report") == {
            ("p::Describe::headline", "inferred"), ("p::Shelf::footer", "inferred")}


SHELF = """
pub struct Book;

impl Book {
    pub fn label(&self) -> String { String::new() }
}

pub struct Shelf { books: Vec<Book> }

impl Shelf {
    pub fn books(&self) -> Vec<&Book> { self.books.iter().collect() }

    pub fn each(&self) -> impl Iterator<Item = &Book> + '_ { self.books.iter() }

    pub fn fields(&self) {
        for book in self.books.iter() {
            book.label();
        }
    }
}

pub fn returned(shelf: &Shelf) {
    for a in shelf.books() {
        a.label();
    }
}

pub fn sliced(slice: &[Book]) {
    for b in slice {
        b.label();
    }
}

pub fn owned(mut owned: Vec<Book>) {
    for c in owned.iter_mut() {
        c.label();
    }
}

pub fn iterated(shelf: &Shelf) {
    for d in shelf.each() {
        d.label();
    }
}

pub struct Pair<T>(T);

impl<T> Pair<T> {
    pub fn into_value(self) -> T { self.0 }
}

pub struct Pairs<'a> { shelf: &'a Shelf }

impl<'a> Iterator for Pairs<'a> {
    type Item = Pair<&'a Book>;

    fn next(&mut self) -> Option<Self::Item> { None }
}

impl Shelf {
    pub fn pairs(&self) -> Pairs<'_> { Pairs { shelf: self } }
}

pub fn paired(shelf: &Shelf) {
    for pair in shelf.pairs() {
        pair.into_value();
    }
}

pub fn tuples(pairs: Vec<(Book, Book)>) {
    for pair in pairs {
        pair.label();
    }
}
"""


def test_a_loop_variable_is_an_element_of_the_collection_it_walks(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": SHELF})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::Shelf::fields") == {("p::Book::label", "inferred")}
        label = ("p::Book::label", "inferred")
        assert _callees(idx, "p::returned") == {("p::Shelf::books", "inferred"), label}
        assert _callees(idx, "p::sliced") == {label}
        assert _callees(idx, "p::owned") == {label}
        assert _callees(idx, "p::iterated") == {("p::Shelf::each", "inferred"), label}
        # the crate's own iterator: the `Item` of its `impl Iterator`
        assert _callees(idx, "p::paired") == {
            ("p::Shelf::pairs", "inferred"), ("p::Pair::into_value", "inferred")}
        # a tuple's elements: no one type
        assert _callees(idx, "p::tuples") == set()



CONFIG_LIB = """
mod config;

pub struct Config;

impl Config {
    pub fn load() -> Config { Config }
}

pub fn start() {
    let config = Config::load();
    config::check();
}
"""


def test_a_path_of_items_is_not_hidden_by_a_local_of_its_first_name(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": CONFIG_LIB,
                 "src/config.rs": "pub fn check() {}\n"})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::start") == {
            ("p::Config::load", "exact"), ("p::config::check", "exact")}


def test_a_trait_object_or_impl_trait_type_is_a_use_of_the_trait(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": VISIT})
    build(root)
    answer = refs(root, "p::Fold")
    # `v: &mut impl Fold`, `u: &dyn Fold` (and `Box<dyn Visit>` of Visit)
    assert "src/lib.rs:35" in sites(answer, "UsedBy")
    assert "src/lib.rs:35" in sites(refs(root, "p::Visit"), "UsedBy")


LIST = """
pub trait Link {
    fn from_raw(ptr: usize) -> Self;
    fn pointers(target: usize) -> usize;
}

// a type named like the parameter: the path below is the bound's function, not this one's
pub struct L;

impl L {
    pub fn from_raw(ptr: usize) -> L { L }
}

pub struct List<L> { head: usize, marker: Option<L> }

impl<L: Link> List<L> {
    pub fn pop(&mut self) -> L {
        L::pointers(self.head);
        L::from_raw(self.head)
    }
}

pub fn make<T: Link>(ptr: usize) -> T {
    T::from_raw(ptr)
}
"""


def test_a_path_through_a_bounded_type_parameter_is_the_bound_s_function(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": LIST})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::List::pop") == {
            ("p::Link::pointers", "inferred"), ("p::Link::from_raw", "inferred")}
        assert _callees(idx, "p::make") == {("p::Link::from_raw", "inferred")}


SHELF_LIB = """
mod other;

pub trait Describe {
    fn describe(&self) -> String;

    fn headline(&self) -> String {
        self.describe()
    }
}

pub struct Shelf;

pub fn report(shelf: &Shelf) {
    shelf.headline();
}
"""
TRAIT_IMPL = """
use crate::{Describe, Shelf};

impl Describe for Shelf {
    fn describe(&self) -> String { String::new() }
}
"""
INHERENT_IMPL = """
use crate::Shelf;

impl Shelf {
    pub fn describe(&self) -> String { String::new() }
}
"""


def test_an_update_follows_a_trait_impl_written_in_another_file(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": SHELF_LIB,
                 "src/other.rs": TRAIT_IMPL})
    build(root)
    headline = {("p::Describe::headline", "inferred")}
    with Index.open(root) as idx:
        assert _callees(idx, "p::report") == headline
    (root / "src" / "other.rs").write_text(INHERENT_IMPL)  # Shelf implements no Describe now
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::report") == set()
    (root / "src" / "other.rs").write_text(TRAIT_IMPL)
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::report") == headline


def _local_prints(count: int) -> str:
    """``count`` functions, each declaring its own `Print` with a std and a crate trait impl,
    as syn's generated Debug impls do (tests/debug/gen.rs: 79 of them in one file)."""
    return "pub trait Describe {\n    fn headline(&self) {}\n}\n" + "".join(f"""
pub fn show{i}(x: u8) {{
    struct Print(u8);
    impl Describe for Print {{}}
    impl std::fmt::Debug for Print {{
        fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {{ Ok(()) }}
    }}
    Print(x).headline();
}}
""" for i in range(count))


def test_same_named_local_types_read_each_trait_impl_once(repo, monkeypatch) -> None:
    """Each `Print` asks every impl of a `Print` for its trait: the trait of each is
    resolved once, not once per type that asks."""
    count = 12
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": _local_prints(count)})
    build(root)
    with Index.open(root) as idx:
        for i in range(count):
            assert _callees(idx, f"p::show{i}") == {
                (f"p::show{i}::Print", "exact"), ("p::Describe::headline", "inferred")}
    debug = ("std", "fmt", "Debug")
    resolved: list[tuple[str, ...]] = []
    original = resolve.Resolver.resolve_path

    def counting(self, fi, path, scope, want_type=False):  # type: ignore[no-untyped-def]
        resolved.append(path)
        return original(self, fi, path, scope, want_type)

    monkeypatch.setattr(resolve.Resolver, "resolve_path", counting)
    resolve_every_file(root)
    # once for its Implements edge, once as a base: not once per `Print` more
    assert resolved.count(debug) <= 2 * count


CHANNEL = """
pub struct Sender;
pub struct Receiver;
pub struct Wrapped;

impl Sender {
    pub fn send(&self) {}
    pub fn recv(&self) {}
}

impl Receiver {
    pub fn recv(&self) {}
}

impl Wrapped {
    pub fn recv(&self) {}
}

pub fn channel<T>() -> (Sender, Receiver) { (Sender, Receiver) }

pub fn wrap(rx: Receiver) -> Wrapped { Wrapped }

pub fn pair() {
    let (tx, mut rx) = channel::<u8>();
    tx.send();
    rx.recv();
}

pub fn skipped() {
    let (_, rx) = channel::<u8>();
    rx.recv();
}

pub fn shadowed() {
    let (tx, rx) = channel::<u8>();
    let rx = wrap(rx);
    rx.recv();
}
"""


def test_a_tuple_let_binds_each_name_to_its_place_in_the_call_s_result(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": CHANNEL})
    build(root)
    channel = ("p::channel", "exact")
    with Index.open(root) as idx:
        assert _callees(idx, "p::pair") == {
            channel, ("p::Sender::send", "inferred"), ("p::Receiver::recv", "inferred")}
        # `_` holds the first place: rx is the second
        assert _callees(idx, "p::skipped") == {channel, ("p::Receiver::recv", "inferred")}
        # a later `let` of the name wraps the element: what it binds is rx's type
        assert _callees(idx, "p::shadowed") == {
            channel, ("p::wrap", "exact"), ("p::Wrapped::recv", "inferred")}


SHADOWED = """
#[derive(Clone)]
pub struct Handle;

pub struct Timer;

impl Handle {
    pub fn timer(&self) -> Timer { Timer }
    pub fn enter(&self) {}
}

impl Timer {
    pub fn enter(&self) {}
}

pub fn run(rt: &Handle) {
    rt.enter();
    {
        let rt = rt.timer();
        rt.enter();
    }
    let rt = rt.clone();
    rt.enter();
}
"""


def test_a_let_shadowing_a_name_holds_its_own_value_where_it_is_in_scope(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": SHADOWED})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        enters = {(e["line"], nodes[e["target"]]["start_line"]) for e in export.edges(idx.q)
                  if e["type"] == "Calls" and nodes[e["target"]]["name"] == "enter"}
    lines = [line.strip() for line in SHADOWED.splitlines()]  # (its first line is empty)
    handle_enter, timer_enter = [i + 1 for i, s in enumerate(lines) if "fn enter" in s]
    reads = [i + 1 for i, s in enumerate(lines) if s == "rt.enter();"]
    # the parameter, the block's Timer, then the clone of the Handle (a derive's clone)
    assert enters == {(reads[0], handle_enter), (reads[1], timer_enter),
                      (reads[2], handle_enter)}


TRAIT_PATHS = """
pub trait Shape {
    fn area(&self) -> u32;
    fn describe(&self) -> u32 { 0 }
}

pub trait Lift {
    fn lift(self) -> Self;
}

pub struct Square;
pub struct Circle;

pub struct Holder {
    items: Vec<u32>,
    square: Square,
}

impl Square {
    pub fn area(&self) -> u32 { 9 }
}

impl Shape for Square {
    fn area(&self) -> u32 { 1 }
}

impl Shape for Circle {
    fn area(&self) -> u32 { 2 }
    fn describe(&self) -> u32 { 3 }
}

impl<T> Lift for Vec<T> {
    fn lift(self) -> Self { self }
}

pub fn squares(s: Square, h: Holder) {
    Shape::area(&s);
    Shape::describe(&s);
    Shape::area(&h.square);
    Lift::lift(h.items);
}

pub fn circles(c: &mut Circle) {
    Shape::area(c);
    Shape::describe(&mut *c);
    Shape::describe(c);
}

pub fn unknown(x: u32) {
    Shape::area(&x);
}
"""


def test_a_trait_method_called_by_its_path_runs_the_impl_for_the_first_argument(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": TRAIT_PATHS})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        calls = {(e["line"], nodes[e["target"]]["start_line"], e["confidence"])
                 for e in export.edges(idx.q) if e["type"] == "Calls"
                 and nodes[e["source"]]["name"] in ("squares", "circles", "unknown")}
    lines = [line.strip() for line in TRAIT_PATHS.splitlines()]  # (its first line is empty)

    def at(text: str, nth: int = 0) -> int:
        return [i + 1 for i, s in enumerate(lines) if s.startswith(text)][nth]

    trait_area, trait_describe = at("fn area(&self) -> u32;"), at("fn describe(&self) -> u32 {")
    square_area, circle_area = at("fn area(&self) -> u32 { 1 }"), at("fn area(&self) -> u32 { 2 }")
    circle_describe, vec_lift = at("fn describe(&self) -> u32 { 3 }"), at("fn lift(self) -> Self {")
    assert calls == {
        # the trait's impl for Square, not Square's own `area` (an `s.area()` would be that)
        (at("Shape::area(&s);"), square_area, "inferred"),
        # Square's impl leaves describe to the trait's default
        (at("Shape::describe(&s);"), trait_describe, "exact"),
        (at("Shape::area(&h.square);"), square_area, "inferred"),
        # a type no crate item is (std's Vec), by its name
        (at("Lift::lift(h.items);"), vec_lift, "inferred"),
        (at("Shape::area(c);"), circle_area, "inferred"),
        # a receiver not read as a name path (`&mut *c`): the trait's method, as before
        (at("Shape::describe(&mut *c);"), trait_describe, "exact"),
        (at("Shape::describe(c);"), circle_describe, "inferred"),
        # a type without an impl of the crate's: the trait's declaration, as before
        (at("Shape::area(&x);"), trait_area, "exact"),
    }


ARC_OF_A_CALL = """
use std::sync::Arc;

pub struct Semaphore;
pub struct Sender;

impl Semaphore {
    pub fn new() -> Semaphore { Semaphore }
    pub fn acquire(&self) {}
}

impl Clone for Sender {
    fn clone(&self) -> Sender { Sender }
}

pub fn channel() -> (Sender, u8) { (Sender, 0) }

pub fn shared() {
    let sem = Arc::new(Semaphore::new());
    sem.acquire();
    let other = sem.clone();
    other.acquire();
}

pub fn cloned_in_a_chain(held: Arc<Semaphore>) {
    held.clone().acquire();
}

pub fn rewrapped() {
    let (tx, _rx) = channel();
    let tx = Arc::new(tx);
    tx.clone();
}
"""


def test_a_let_of_an_arc_of_a_call_holds_the_call_s_value(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": ARC_OF_A_CALL})
    build(root)
    with Index.open(root) as idx:
        # an Arc derefs to the Semaphore it holds, and so does its clone
        assert _callees(idx, "p::shared") == {
            ("p::Semaphore::new", "exact"), ("p::Semaphore::acquire", "inferred")}
        # a clone the crate does not write, inside a chain: the receiver's type
        assert _callees(idx, "p::cloned_in_a_chain") == {("p::Semaphore::acquire", "inferred")}
        # `Arc::new(tx)` of a name: the Arc's clone, not the Sender's
        assert _callees(idx, "p::rewrapped") == {("p::channel", "exact")}


UNWRAPPED = """
pub struct Conn;
pub struct Error;

impl Conn {
    pub fn open() -> Result<Conn, Error> { Ok(Conn) }
    pub fn maybe() -> Option<Conn> { None }
    pub async fn connect() -> Conn { Conn }
    pub async fn try_connect() -> Result<Conn, Error> { Ok(Conn) }
    pub fn ping(&self) {}
}

pub fn unwrapped() {
    let d = Conn::open().unwrap();
    d.ping();
    let e = Conn::maybe().unwrap_or_else(|| Conn);
    e.ping();
}

pub fn expected_in_a_chain() {
    Conn::maybe().expect("a connection").ping();
}

pub async fn awaited_in_a_chain() {
    Conn::connect().await.ping();
}

pub async fn awaited_then_unwrapped() {
    let t = Conn::try_connect().await.unwrap();
    t.ping();
}

pub async fn awaited_then_tried() -> Result<(), Error> {
    let c = Conn::try_connect().await?;
    c.ping();
    Ok(())
}

pub fn held_option(w: Option<Conn>) {
    // an `Option` value declared so is the Option, whose unwrap() hands back what it holds
    w.unwrap().ping();
}
"""


def test_an_unwrapped_or_awaited_result_is_the_value_it_holds(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": UNWRAPPED})
    build(root)
    ping = ("p::Conn::ping", "inferred")
    with Index.open(root) as idx:
        assert _callees(idx, "p::unwrapped") == {
            ("p::Conn::open", "exact"), ("p::Conn::maybe", "exact"), ping}
        assert _callees(idx, "p::expected_in_a_chain") == {("p::Conn::maybe", "exact"), ping}
        assert _callees(idx, "p::awaited_in_a_chain") == {("p::Conn::connect", "exact"), ping}
        assert _callees(idx, "p::awaited_then_unwrapped") == {
            ("p::Conn::try_connect", "exact"), ping}
        assert _callees(idx, "p::awaited_then_tried") == {
            ("p::Conn::try_connect", "exact"), ping}
        assert _callees(idx, "p::held_option") == {ping}


FUTURE = """
pub struct Lock;
pub struct Guard;

impl Guard {
    pub fn map(self) {}
    pub fn touch(&self) {}
}

impl Lock {
    pub async fn write(&self) -> Guard { Guard }
}

pub async fn run(lock: Lock) {
    // the future's `map` (futures' FutureExt), not the Guard's: it is not awaited
    lock.write().map();
    lock.write().await.touch();
}
"""


def test_an_async_call_not_awaited_is_a_future_not_its_result(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": FUTURE})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::run") == {("p::Lock::write", "inferred"),
                                           ("p::Guard::touch", "inferred")}


QUALIFIED_RESULT = """
pub struct Conn;
pub struct Error;
pub mod io {
    pub type Result<T> = std::result::Result<T, super::Error>;
}

impl Conn {
    pub fn open() -> io::Result<Conn> { Ok(Conn) }
    pub fn std_open() -> std::io::Result<Conn> { Ok(Conn) }
    pub fn ping(&self) {}
}

pub fn tried() -> io::Result<()> {
    let c = Conn::open()?;
    c.ping();
    Conn::std_open()?.ping();
    Ok(())
}

pub fn held(r: io::Result<Conn>) {
    // the Result itself: it has no `ping`
    r.ping();
}
"""


def test_a_result_named_by_its_module_path_holds_its_first_type_argument(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": QUALIFIED_RESULT})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::tried") == {
            ("p::Conn::open", "exact"), ("p::Conn::std_open", "exact"), ("p::Conn::ping", "inferred")}
        assert _callees(idx, "p::held") == set()


PATTERNS = """
pub struct Waker;
pub struct Conn;
pub struct Other;

impl Waker {
    pub fn wake(&self) {}
}

impl Conn {
    pub fn wake(&self) {}
    pub fn ping(&self) {}
}

impl Other {
    pub fn ping(&self) {}
}

pub fn waker() -> Option<Waker> { None }
pub fn connect() -> Result<Conn, ()> { Ok(Conn) }
pub fn failed() -> Result<Other, Conn> { Ok(Other) }

pub struct Slot {
    waker: Option<Waker>,
}

pub fn if_let() {
    if let Some(w) = waker() { w.wake(); }
}

pub fn while_let() {
    while let Some(w) = waker() { w.wake(); }
}

pub fn let_else() {
    let Ok(c) = connect() else { return };
    c.ping();
}

pub fn arms() {
    match connect() {
        Ok(c) => c.ping(),
        Err(_) => {}
    }
    match failed() {
        // the error is no value of the call's `Ok` type
        Err(e) => e.ping(),
        Ok(_) => {}
    }
}

pub fn param(w: Option<Waker>) {
    if let Some(w) = w { w.wake(); }
}

pub fn declared() {
    let w: Option<Waker> = None;
    if let Some(w) = w { w.wake(); }
}

pub fn called() {
    let w = waker();
    match w { Some(w) => w.wake(), None => {} }
}

impl Slot {
    pub fn field(&self) {
        if let Some(w) = &self.waker { w.wake(); }
    }
    pub fn taken(&mut self) {
        if let Some(w) = self.waker.take() { w.wake(); }
    }
}

pub fn scoped(c: Conn) {
    // the pattern's w is the if's own: the parameter's c after it
    if let Some(c) = waker() { c.wake(); }
    c.ping();
}
"""


def test_a_pattern_binding_holds_what_the_option_or_result_holds(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": PATTERNS})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::if_let") == {("p::waker", "exact"), ("p::Waker::wake", "inferred")}
        assert _callees(idx, "p::while_let") == {
            ("p::waker", "exact"), ("p::Waker::wake", "inferred")}
        assert _callees(idx, "p::let_else") == {
            ("p::connect", "exact"), ("p::Conn::ping", "inferred")}
        assert _callees(idx, "p::arms") == {
            ("p::connect", "exact"), ("p::failed", "exact"), ("p::Conn::ping", "inferred")}
        for reader in ("param", "declared", "Slot::field", "Slot::taken"):
            assert ("p::Waker::wake", "inferred") in _callees(idx, f"p::{reader}"), reader
        assert _callees(idx, "p::called") == {
            ("p::waker", "exact"), ("p::Waker::wake", "inferred")}
        assert _callees(idx, "p::scoped") == {
            ("p::waker", "exact"), ("p::Waker::wake", "inferred"), ("p::Conn::ping", "inferred")}


CFG_TWINS = """
macro_rules! cfg_test_util { ($($i:item)*) => { $( #[cfg(test)] $i )* } }
macro_rules! cfg_not_test_util { ($($i:item)*) => { $( #[cfg(not(test))] $i )* } }

cfg_not_test_util! {
    pub struct Clock {}
    impl Clock {
        pub fn now(&self) -> u64 { 0 }
    }
    fn clock() -> Option<Clock> { None }
    pub fn now() -> u64 {
        if let Some(clock) = clock() { clock.now() } else { 0 }
    }
}

cfg_test_util! {
    pub struct Clock { base: u64 }
    fn clock() -> Option<Clock> { None }
    pub fn now() -> u64 {
        if let Some(clock) = clock() { clock.now() } else { 1 }
    }
    impl Clock {
        pub fn now(&self) -> u64 { self.base }
    }
}

pub fn elsewhere(c: Clock) -> u64 {
    c.now()
}
"""


def test_a_caller_in_one_cfg_block_runs_its_own_twin(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": CFG_TWINS})
    build(root)
    with Index.open(root) as idx:
        rows = idx.store.conn.execute(
            "SELECT s.start_line, t.start_line, e.confidence FROM edges e "
            "JOIN nodes s ON s.id = e.source JOIN nodes t ON t.id = e.target "
            "WHERE e.type = 'Calls' AND t.name = 'now' AND t.kind = 'Function' "
            "AND t.qualified_name = 'p::Clock::now'").fetchall()
    # (by line: the callers' first lines, the twins' methods')
    assert sorted(map(tuple, rows)) == [
        (11, 8, "inferred"),  # in cfg_not_test_util's block: its Clock's
        (19, 23, "inferred"),  # in cfg_test_util's
        (27, 8, "name"), (27, 23, "name"),  # outside both: either, flagged
    ]


FN_LOCAL = """
pub struct Sender;

impl Sender {
    pub fn send(&self) {}
}

pub fn outer() {
    struct Actor { tx: Sender }
    impl Actor {
        fn handle(&self) {}
        fn run(&self) {
            self.handle();
            self.tx.send();
        }
    }
}
"""


def test_self_in_an_impl_inside_a_function_is_the_function_s_type(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": FN_LOCAL})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::outer::Actor::run") == {
            ("p::outer::Actor::handle", "inferred"), ("p::Sender::send", "inferred")}


PAYLOADS = """
pub struct Waker;
pub struct Tokens;

impl Waker {
    pub fn wake(&self) {}
    pub fn clone(&self) -> Waker { Waker }
}

pub enum Ty {
    Verbatim(Tokens),
    Named(Waker),
}

pub struct Slot {
    default: Option<Waker>,
}

impl Slot {
    pub fn read(&self, ty: Ty) {
        if let Some(default) = &self.default {
            default.wake();
            // the variant's payload, of a type the index does not read: not the Waker above
            if let Ty::Verbatim(default) = ty {
                default.clone();
            }
        }
    }

    pub fn arm(&self, waker: Waker, ty: Ty) {
        match ty {
            Ty::Verbatim(waker) => waker.clone(),
            Ty::Named(_) => waker.clone(),
        };
    }
}
"""


def test_a_variant_s_payload_is_not_what_the_name_holds_around_it(repo) -> None:
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": PAYLOADS})
    build(root)
    with Index.open(root) as idx:
        rows = idx.store.conn.execute(
            "SELECT e.line, t.qualified_name FROM edges e JOIN nodes t ON t.id = e.target"
            " WHERE e.type = 'Calls'").fetchall()
    assert sorted(map(tuple, rows)) == [(22, "p::Waker::wake"), (33, "p::Waker::clone")]


OUTSIDE = """
#[macro_use]
mod macros;

use std::fmt;
use std::sync::Arc;

pub struct Reader { scratch: Vec<u8> }

pub trait Grow { fn grow(&mut self); }

impl Grow for Vec<u8> { fn grow(&mut self) {} }

pub fn make() -> Reader { Reader { scratch: Vec::new() } }

impl Reader {
    pub fn run(&mut self, buf: &mut Vec<u8>, fmt: &mut fmt::Formatter<'_>) -> Option<u8> {
        assert_eq!(1, 1);
        matches!(1, 1);
        buf.push(1);
        buf.grow();
        self.scratch.clear();
        fmt.write_str("x");
        let made = make();
        made.unheard_of();
        let mut v = Vec::new();
        std::mem::swap(&mut v, buf);
        itoa::Buffer::new();
        [1].iter().for_each(|&(hidden, _)| hidden.go());
        u64::try_from(1usize);
        drop(v);
        Some(1)
    }
}

pub fn fresh<T: Default>() -> T { T::default() }

pub struct Mutex<T>(T);

impl<T> Mutex<T> { pub fn lock(&self) {} }

pub fn locked() {
    let shared: Arc<Mutex<usize>> = Arc::new(Mutex(0));
    shared.lock();
}
"""


def test_calls_of_std_and_of_types_outside_the_crate_are_external_not_unknown(repo) -> None:
    # (a macro of a file no `mod` declares: a `#[macro_use] mod macros;` would bring it)
    root = repo({"Cargo.toml": '[package]\nname = "p"\n', "src/lib.rs": OUTSIDE,
                 "src/macros.rs": "", "src/unused.rs":
                 "macro_rules! matches { ($a:expr, $b:expr) => { true } }\n"})
    build(root)
    with Index.open(root) as idx:
        reasons = dict(idx.store.conn.execute("select name, reason from unresolved").fetchall())
    # std's macros and the prelude's functions and variants
    assert reasons["assert_eq"] == reasons["drop"] == reasons["Some"] == "external"
    assert reasons["matches"] == "unknown"  # the crate's own macro of a std macro's name
    # a method of a value declared of a prelude type, a field's, a parameter's of a type an
    # import names (the parameter named like the module)
    assert reasons["buf.push"] == reasons["self.scratch.clear"] == "external"
    assert reasons["fmt.write_str"] == "external"
    assert reasons["buf.grow"] == "unknown"  # a method of the crate's trait for Vec
    # the prelude's and primitive types' functions, a bound's, paths through std or a crate
    assert reasons["Vec.new"] == reasons["u64.try_from"] == reasons["T.default"] == "external"
    assert reasons["std.mem.swap"] == reasons["itoa.Buffer.new"] == "external"
    assert reasons["made.unheard_of"] == "unknown"  # a local of the crate's type
    assert reasons["hidden.go"] == "unknown"  # a local bound where the index does not see
    # an Arc lends what it holds its methods, the crate's Mutex's here (not the usize inside)
    assert reasons.get("shared.lock") != "external"
