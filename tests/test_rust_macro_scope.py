"""A crate's own `macro_rules!` macro called below the module defining it (`tri!` of serde
json's lib.rs, called in de.rs with no `use`) is a call of that definition, found again when
the defining file changes."""

from __future__ import annotations

from knoxidx.index import Index
from tests.helpers import build

TRI = "macro_rules! tri {\n    ($e:expr) => { $e };\n}\n"


def _callees(idx: Index, name: str) -> list[str]:
    return [c["qualified_name"] for c in idx.callees(name)["callees"]]


def test_a_macro_of_a_module_above_is_called_by_its_bare_name(repo) -> None:
    root = repo({
        "Cargo.toml": '[package]\nname = "p"\n',
        "src/lib.rs": TRI + "pub mod de;\n",
        "src/de.rs": "pub fn parse() -> u8 { tri!(1) }\npub mod inner;\n",
        "src/de/inner.rs": "pub fn deep() -> u8 { tri!(2) }\n",
        # a module that is no descendant of the defining one's sees no macro of it
        "src/other/lib.rs": "pub fn apart() -> u8 { tri!(3) }\n",
        "src/other/Cargo.toml": '[package]\nname = "other"\n',
    })
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::de::parse") == _callees(idx, "p::de::inner::deep") == ["p::tri"]
        assert _callees(idx, "other::apart") == []
    (root / "src/lib.rs").write_text("pub mod de;\n")  # the macro goes away
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::de::parse") == []
        reasons = dict(idx.store.conn.execute(
            "select f.path, u.reason from unresolved u join files f on f.id = u.file_id"
            " where u.name = 'tri'").fetchall())
    assert reasons["src/de.rs"] == "unknown"
    (root / "src/lib.rs").write_text(TRI + "pub mod de;\n")  # and comes back
    build(root)
    with Index.open(root) as idx:
        assert _callees(idx, "p::de::parse") == ["p::tri"]
