"""The Rust recall sample's call-site listing (shapes, macro bodies left out) and its scoring."""

from __future__ import annotations

from pathlib import Path

from bench.rust_recall import call_sites, defined_functions, is_found, to_rejudge

SOURCE = """\
mod m { pub fn f() {} }
cfg_rt! { pub fn hidden() {} }
struct T;
impl T {
    fn new() -> T { T }
    fn m(&self) { self.helper(); }
    fn helper(&self) {}
}
fn main() {
    m::f();
    let t = T::new();
    t.m();
    hidden();
    println!("{}", f());
    std::mem::drop(t);
    (|| 1)();
}
"""


def test_call_sites_by_shape(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text(SOURCE)
    defined = defined_functions(tmp_path)
    assert {"f", "hidden", "new", "m", "helper", "main"} <= defined  # `hidden` from the macro body
    listed = call_sites(tmp_path, defined)
    assert listed == call_sites(tmp_path, defined)  # in one order every time: a repeatable draw
    sites = {(s["name"], s["shape"]) for s in listed}
    # `drop` is no crate fn; `f()` inside println!'s tokens is not parsed; a closure is no name
    assert sites == {("helper", "self."), ("f", "path"), ("new", "path"), ("m", "method"),
                     ("hidden", "bare")}


def test_found_and_to_rejudge() -> None:
    edges = {"src/a.rs:3": {"src/b.rs:10"}}
    assert is_found({"site": "src/a.rs:3", "callee_at": "src/b.rs:10"}, edges)
    assert not is_found({"site": "src/a.rs:3", "callee_at": "src/b.rs:11"}, edges)
    assert to_rejudge({"site": "src/a.rs:3", "callee_at": "src/b.rs:0"}, edges)
    assert not to_rejudge({"site": "src/a.rs:3", "callee_at": "src/c.rs:0"}, edges)
