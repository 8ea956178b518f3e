"""Rust values declared through std's wrappers: `Box`, `Arc`, `Rc` and references deref to the
type inside, the cells and locks (`Mutex<T>`, `RefCell<T>`) and `Option`/`Result` do not (their
methods are theirs, std's), and what `lock()`, `borrow()` or `unwrap()` hands back is the value
they hold; a parameter named like a module keeps its type; and a chain of std's methods whose
results are std's types (the `Debug` builders) is a call outside the crate, not an unknown one."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

CRATE = '[package]\nname = "p"\n'

WRAPPED = """
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

pub struct Inner;

impl Inner {
    pub fn touch(&self) {}
    // named like the Mutex's own method: a `Mutex<Inner>`'s lock is not this one
    pub fn lock(&self) {}
}

pub fn locked() {
    let shared: Arc<Mutex<Inner>> = Arc::new(Mutex::new(Inner));
    shared.lock();
    shared.lock().unwrap().touch();
}

pub fn borrowed(cell: &Rc<RefCell<Inner>>) {
    cell.borrow().touch();
    cell.borrow_mut().touch();
}

pub fn boxed() {
    let b: Box<Inner> = Box::new(Inner);
    b.touch();
    b.lock();
}

pub fn held(w: Option<Inner>, r: Result<Inner, ()>) {
    w.unwrap().touch();
    r.expect("inner").touch();
}

pub fn made() -> Arc<Mutex<Inner>> { Arc::new(Mutex::new(Inner)) }

pub fn returned() {
    let m = made();
    m.lock();
    m.lock().unwrap().touch();
}
"""


def _callees(idx: Index, name: str) -> list[tuple[str, str]]:
    return sorted((c["qualified_name"], c["confidence"]) for c in idx.callees(name)["callees"])


def _reasons(idx: Index) -> dict[tuple[str, int], str]:
    rows = idx.store.conn.execute("select name, line, reason from unresolved").fetchall()
    return {(name, line): reason for name, line, reason in rows}


def test_a_lock_or_cell_is_its_own_type_and_lends_the_value_it_holds(repo) -> None:
    root = repo({"Cargo.toml": CRATE, "src/lib.rs": WRAPPED})
    build(root)
    touch = ("p::Inner::touch", "inferred")
    with Index.open(root) as idx:
        # the Mutex's lock (std's), not Inner's; what the guard derefs to is the Inner
        assert _callees(idx, "p::locked") == [touch]
        assert _callees(idx, "p::borrowed") == [touch, touch]
        # a Box derefs to what it holds: Inner's own methods
        assert _callees(idx, "p::boxed") == [("p::Inner::lock", "inferred"), touch]
        # an Option or a Result declared so: what unwrap() and expect(..) hand back
        assert _callees(idx, "p::held") == [touch, touch]
        # a function returning an `Arc<Mutex<T>>` returns a Mutex, which lends the T
        assert _callees(idx, "p::returned") == [touch, ("p::made", "exact")]
        reasons = _reasons(idx)
    assert reasons[("shared.lock", 16)] == reasons[("cell.borrow", 21)] == "external"
    assert reasons[("shared.lock().unwrap", 17)] == "external"
    # a local bound to its result keeps the wrapper, as one declared so does
    assert reasons[("m.lock", 40)] == reasons[("m.lock().unwrap", 41)] == "external"


MODULE_NAMED = """
use std::fmt;

pub mod state {
    pub struct State;
    impl State {
        pub fn load(&self) {}
    }
}

// the parameter `state` is a value; the `state` of its type the module
pub fn run(state: &state::State) {
    state.load();
}

pub struct S;

impl fmt::Debug for S {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.write_str("S")
    }
}

pub struct Lite(u8);

impl fmt::Debug for Lite {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        // a function `fmt` nested in this one: no head of a type's path
        struct Print;
        impl fmt::Debug for Print {
            fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("Print")
            }
        }
        formatter.write_str("Lite")
    }
}
"""


def test_a_parameter_named_like_a_module_keeps_its_type(repo) -> None:
    root = repo({"Cargo.toml": CRATE, "src/lib.rs": MODULE_NAMED})
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::run") == [("p::state::State::load", "inferred")]
        reasons = _reasons(idx)
    assert reasons[("fmt.write_str", 20)] == "external"
    assert reasons[("formatter.write_str", 32)] == reasons[("formatter.write_str", 35)] \
        == "external"


BUILDERS = """
use std::fmt;

pub struct S { a: u8 }
pub struct T(u8);

pub trait Described {
    fn described(&mut self) -> &mut Self;
}

impl fmt::Debug for S {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        let mut formatter = formatter.debug_struct("S");
        formatter.field("a", &self.a);
        formatter.finish()
    }
}

impl fmt::Debug for T {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_tuple("T").field(&self.0).finish()
    }
}

pub fn described(f: &mut fmt::Formatter) {
    // a method of one of the crate's traits, which it may implement for std's builder
    f.debug_list().described();
}
"""


def test_a_chain_of_std_builders_is_outside_the_crate(repo) -> None:
    root = repo({"Cargo.toml": CRATE, "src/lib.rs": BUILDERS})
    build(root)
    with Index.open(root) as idx:
        reasons = _reasons(idx)
    assert reasons[("formatter.field", 14)] == reasons[("formatter.finish", 15)] == "external"
    assert reasons[("f.debug_tuple().field", 21)] == "external"
    assert reasons[("f.debug_tuple().field().finish", 21)] == "external"
    assert reasons[("f.debug_list().described", 27)] == "unknown"
