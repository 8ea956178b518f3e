"""Rust: the module tree from file paths (``src/a/b.rs`` is ``crate::a::b``), ``use`` paths
with ``crate``/``self``/``super``, methods from ``impl`` blocks, ``impl Trait for Type``. The
family's hooks module; what its hooks read is in the modules beside it: `use` trees and `mod`
items (``imports``), signatures, the module tree the rules walk (``module_tree``), impls and
trait impls (``impls``), declared and bound types (``bound_types``, ``payloads``), macros
(``item_macros``, ``macro_scope``), crates, and calls into what the index does not hold
(``outside``)."""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import RECEIVER_ARGUMENT, Binding, NamePath, RefKind
from knoxidx.core.symbols import (
    DEFINITION_TAG,
    Symbol,
)
from knoxidx.languages.common import preceding_comment
from knoxidx.languages.rust.bound_types import collection_type, element_type
from knoxidx.languages.rust.bound_types import declared_binding_type as declared_binding_type
from knoxidx.languages.rust.bound_types import element_binding as element_binding
from knoxidx.languages.rust.bound_types import (
    type_parameter_bindings as type_parameter_bindings,
)
from knoxidx.languages.rust.crates import crate_of
from knoxidx.languages.rust.impls import (
    crate_trait_impls,
    crate_traits,
    impl_table,
    in_trait_impl,
    receiver_types,
    twin_lines,
)
from knoxidx.languages.rust.imports import decode_import as decode_import
from knoxidx.languages.rust.item_macros import unwrap_item_macros as unwrap_item_macros
from knoxidx.languages.rust.macro_scope import (
    is_macro_export,
)
from knoxidx.languages.rust.module_tree import ModuleTree
from knoxidx.languages.rust.outside import outside_call
from knoxidx.languages.rust.payloads import payload_declarations as payload_declarations
from knoxidx.languages.rust.payloads import payload_types
from knoxidx.languages.rust.signatures import ATTRIBUTES, COMMENTS
from knoxidx.languages.rust.signatures import signature_of as signature_of
from knoxidx.parse import signatures as sig
from knoxidx.parse.definitions import DEF_KINDS, node_text
from knoxidx.parse.file_index import (
    CLASS,
    INTERFACE,
    FileIndex,
)
from knoxidx.parse.name_paths import name_path, type_path

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolverView

FAMILY = "rust"
# A `let` hides functions and constants (the value namespace), not the struct a literal
# names (the type namespace).
LOCAL_SHADOWS = frozenset({RefKind.VALUE, RefKind.CALL})
# a local at the head of `x.m()` is a value, not the module of that name (see extract)
LOCAL_HEADS_ARE_VALUES = True
# declarations whose type is read from the node, not matched (see go.py)
TYPE_AFTER_NAMES: frozenset[str] = frozenset()
# Which of a local's bindings reaches a use (see binding_sites): each `let` declares a local
# scoped to its block, a `for`'s pattern to the loop, a closure's parameters to the closure,
# an `if let`'s or `while let`'s to the statement, a `match` arm's pattern to the arm
BINDING_BLOCKS: frozenset[str] = frozenset({
    "block", "for_expression", "closure_expression", "if_expression", "while_expression",
    "match_arm"})
# (a later declaration is another local: none reaches an earlier use, in a loop or not)
LOOPS: frozenset[str] = frozenset()
UNTYPED_REBINDS = False
PLACES_EVERY_LOCAL = False
SQUARE_TYPE_ARGS = False  # type arguments in angle brackets (see name_paths.type_path)
# (``unwrap_item_macros``, imported above, is extraction's hook: the items in `cfg_rt! { }`)
# A value declared with one of these is of that type, not of the one inside: they have no
# `Deref` (`x.clone()` on an `Option<Lit>` is Option's clone, `x.lock()` on a `Mutex<T>` the
# Mutex's, tokio's own where it has one). `Box`, `Arc`, `Rc` and references deref to the
# type inside, so `Arc<Mutex<T>>` is a Mutex too. (Any path may lead to an Option or a
# Result: `io::Result<T>`.) A function's return type still reads through an Option and a
# Result, for `f()?` (OPAQUE_RESULTS), not through the cells and locks.
_DEREFS_TO = r"(?:&\s*(?:'\w+\s+)?(?:mut\s+)?|(?:(?:std|alloc)::\w+::)?(?:Box|Arc|Rc)\s*<\s*)*"
_CELLS = r"(?:(?:std|core)::\w+::)?(?:Cell|RefCell|Mutex|RwLock)\s*<"
OPAQUE_WRAPPERS = re.compile(_DEREFS_TO + r"(?:(?:\w+::)*(?:Option|Result)\s*<|" + _CELLS + ")")
OPAQUE_RESULTS = re.compile(r"(?:" + _DEREFS_TO + r"(?:\w+::)*(?:Option|Result)\s*<\s*)*"
                            + _DEREFS_TO + _CELLS)


def elements_binding(node: Any, source: bytes) -> NamePath:
    """What a local declared an `Option<T>` or a collection of T holds (`let w: Option<Waker>`):
    the type of its element, read as a declared type is; () for other types."""
    element = element_type(node_text(source, node))
    if not element:
        return ()
    opaque = OPAQUE_WRAPPERS.match(element)
    if opaque is None:
        return type_path(element)
    # the last wrapper the match opens: an `Option<Arc<Mutex<T>>>` holds a Mutex
    return type_path(element[:opaque.end()].rstrip().removesuffix("<").rpartition("<")[2])


def classify(sub: str, name: str, node: Any, source: bytes) -> str | None:
    return DEF_KINDS.get(sub)


def doc_comment(node: Any, source: bytes) -> str:
    return preceding_comment(node, source)


def is_exported(node: Any, name: str, nested: bool, source: bytes) -> bool | None:
    if node.type == "macro_definition":  # `#[macro_export]`: at the crate's root, by path
        return is_macro_export([node_text(source, a) for a in sig.preceding(
            node, ATTRIBUTES, COMMENTS, source)])
    return any(c.type == "visibility_modifier" for c in node.children)


def package_name(raw: str) -> str:
    return raw


_NO_RECEIVER: tuple[int, tuple[str, ...]] = (-1, ())
_RECEIVER_FORMS = frozenset({"identifier", "field_expression", "call_expression", "self"})


def call_arguments(arguments: Any, source: bytes) -> tuple[int, tuple[str, ...]]:
    """A path call's first argument as the receiver a trait's method called by its path
    takes (`FoldHelper::lift(node.attrs, f)`, `Shape::area(&mut s)`, `Debug::fmt(Lite(x),
    f)`): its name path, "."-joined after RECEIVER_ARGUMENT, `&`/`&mut` left off. No arity: Rust has
    no overloads, and `self` counts as a parameter as the call passes it."""
    # (the cheap tests first: most calls stop there)
    first = arguments.named_child(0) if arguments.named_child_count else None
    while first is not None and first.type == "reference_expression":
        first = first.child_by_field_name("value")
    if first is None or first.type not in _RECEIVER_FORMS:
        return _NO_RECEIVER
    call = arguments.parent
    function = call.child_by_field_name("function") if call is not None else None
    qualifier = function.child_by_field_name("path") if function is not None else None
    # a type's or a trait's path (`Debug::fmt`, `io::Read::read`), not a module's
    # (`mpsc::channel(8)`): each receiver keeps a call's outcome apart in resolution
    if qualifier is None or not node_text(source, qualifier).rpartition("::")[2][:1].isupper():
        return _NO_RECEIVER
    written = name_path(node_text(source, first) + ".m")[:-1]
    if not written or written[0] == "?":
        return _NO_RECEIVER
    return -1, (RECEIVER_ARGUMENT + ".".join(written),)


# ---- resolution ----------------------------------------------------------------------------


class _Rules(ModuleTree):
    self_names = frozenset({"self"})
    self_type_names = frozenset({"Self"})
    self_binds_anywhere = True
    out_of_line_methods = True
    results_yield_to_rebindings = True  # `let (tx, rx) = channel(); let tx = Arc::new(tx);`
    bindings_block_scoped = True
    declared_types_name_items = True
    # `f()` is read as the T of the `Option<T>`/`Result<T, E>` it returns (for `f()?`), so
    # its `unwrap()` and `expect(..)` are of that type too, where the crate writes none
    same_type_methods = frozenset({
        "clone", "unwrap", "expect", "unwrap_or", "unwrap_or_else", "unwrap_or_default"})
    same_type_fields = frozenset({"await"})
    called_locals_hold_elements = True
    outside_receivers_hold_elements = True
    async_results_awaited = True
    # std's methods that hand back one of an `Option`'s or a collection's elements (in an
    # `Option`, read through as `f()?` is): `if let Some(tx) = self.tx.take()`, `v.last()`;
    # what an `Option` or a `Result` declared so holds (`w.unwrap()`); and what a cell or a
    # lock holds, through the guard that derefs to it (`m.lock().unwrap()`, `c.borrow()`):
    # the element of the receiver's declared type (see bound_types.element_type)
    element_results = frozenset("""
        take as_ref as_mut as_deref as_deref_mut cloned copied first last first_mut last_mut
        get get_mut pop pop_front pop_back front back front_mut back_mut peek next
        unwrap expect unwrap_or unwrap_or_else unwrap_or_default
        lock try_lock read write try_read try_write borrow borrow_mut try_borrow
        try_borrow_mut into_inner
    """.split())
    # an `impl` block's method is no name of its module: a bare `drop(x)` is the prelude's,
    # not the file's `impl Drop`, and `time::pause` the module's fn, not `Clock::pause`
    methods_outside_module_scope = True
    # `x.m()` on a value of unknown type is left unresolved, not sent to the crate's one `m`:
    # a third of tokio's and syn's Calls edges were such guesses, often std's methods
    guess_members = False
    builtin_method_names = frozenset("""
        clone to_string to_owned into from as_ref as_mut unwrap expect unwrap_or
        unwrap_or_else unwrap_or_default map map_err and_then ok_or ok_or_else ok err
        is_some is_none is_ok is_err iter iter_mut into_iter collect push pop insert
        remove get get_mut len is_empty contains extend clear take replace borrow
        borrow_mut lock read write send recv poll next fmt eq ne cmp partial_cmp hash
        default new with_capacity as_str as_bytes to_vec drop deref deref_mut filter
        filter_map fold for_each any all find position rev zip enumerate chain skip
        step_by chars bytes split trim starts_with ends_with parse format write_str
        write_fmt spawn await
    """.split())
    separator = "::"
    module_joiner = "::"
    special_heads = frozenset({"crate", "$crate", "super", "Self", "self"})

    def element_type(self, declared: str) -> str:
        return element_type(declared)

    def outside_call(self, r: ResolverView, fi: FileIndex, scope: int, path: NamePath,
                     site: int) -> bool:
        return outside_call(r, fi, scope, path, site)

    def payload_types(self, r: ResolverView, fi: FileIndex, binding: Binding, depth: int
                      ) -> list[Symbol]:
        return payload_types(r, fi, binding, depth)

    def iterator_items(self, r: ResolverView, fi: FileIndex, scope: int, declared: str
                       ) -> list[Symbol]:
        """The crate's iterator types' items: `type Item = Pair<&T, &P>` in the `impl Iterator
        for Pairs` of the type `declared` names (`for el in punctuated.pairs()`)."""
        path = type_path(collection_type(declared))
        if not path:
            return []
        found, _ = r.resolve_path(fi, path, scope, want_type=True)
        out: list[Symbol] = []
        for symbol in found[:4]:
            if symbol[0] != DEFINITION_TAG:
                continue
            tfi = r.index(symbol[1])
            if tfi is None or tfi.facts.defs[symbol[2]].kind != CLASS:
                continue
            for p, i, name in r.methods_of(FAMILY, tfi.facts.defs[symbol[2]].name):
                if name != "Item" or not self._impl_of(r, tfi, symbol[2], p, i):
                    continue
                ifi = r.index(p)
                assert ifi is not None  # _impl_of read it
                impls, _, around = impl_table(r, ifi)
                item = ifi.facts.defs[i]
                if around[i] >= 0 and impls[around[i]].trait_path[-1:] == ("Iterator",) \
                        and item.type_hint:
                    items, _ = r.resolve_path(ifi, item.type_hint, item.parent, want_type=True)
                    out.extend(t for t in items if t[0] == DEFINITION_TAG)
        return out

    def wrapper_method(self, declared: str, name: str) -> bool:
        """`Box<T>`, `Arc<T>` and `Rc<T>` deref to T, but the traits they implement themselves
        (`Clone`, `Hash`, `PartialEq`, `Debug`, quote's `ToTokens`...) are theirs: an `Arc`'s
        clone is a new reference, not T's clone."""
        return name in _WRAPPER_OWN_METHODS and _DEREF_WRAPPER.search(declared) is not None

    def owner_matches(self, r: ResolverView, fi: FileIndex, index: int, path: str, method: int
                     ) -> bool:
        """Whether ``method`` is what the type at ``index`` calls by that name: a method of
        one of its impls, and of a trait impl only where no inherent impl has the name (Rust
        looks inherent methods up first: `Task::from_raw` in `impl Link for Task` is Task's
        own, not the trait's)."""
        if not self._impl_of(r, fi, index, path, method):
            return False
        if not in_trait_impl(r, path, method):
            return True
        declaring = r.index(path)
        assert declaring is not None  # in_trait_impl read it
        d = declaring.facts.defs[method]
        owner, name = d.owner, d.name
        return not any(
            m == name and (p, i) != (path, method) and not in_trait_impl(r, p, i)
            and self._impl_of(r, fi, index, p, i)
            for p, i, m in r.methods_of(FAMILY, owner))

    def _impl_of(self, r: ResolverView, fi: FileIndex, index: int, path: str, method: int) -> bool:
        """Whether the `impl` block of ``method`` is one of the type at ``index``: its type
        name read where the impl is (tokio has three `State`s, each with its own `load`)."""
        if crate_of(path, r.layout) != crate_of(fi.path, r.layout):
            return False
        types = r.memo(("rust-impl-type", path, method), self._impl_types, r, path, method)
        # a type name that resolves to nothing here (a macro-made type): the same file only
        return (DEFINITION_TAG, fi.path, index) in types if types else path == fi.path

    def _impl_types(self, r: ResolverView, path: str, method: int) -> list[Symbol]:
        mfi = r.index(path)
        if mfi is None:
            return []
        d = mfi.facts.defs[method]
        found, _ = r.resolve_path(mfi, (d.owner,), d.parent)
        return [s for s in found if s[0] == DEFINITION_TAG]

    def receiver_methods(self, r: ResolverView, fi: FileIndex, scope: int, receiver: NamePath,
                         site: int, declared: list[Symbol]) -> list[Symbol]:
        """`FoldHelper::lift(node.attrs, f)` runs the `lift` of the trait's impl for the type
        of node.attrs (a `Vec`), not the trait's body-less declaration: of the crate's impls
        of the trait ``declared``'s methods belong to, that of the receiver's type, matched
        as an `x.method()` is (a type no crate item names by its name alone). [] where the
        type is not known or its impl leaves the method to the trait's default."""
        trait: Symbol | None = None
        name = ""
        for target in declared:
            dfi = r.index(target[1])
            if dfi is None:
                return []
            parent = dfi.facts.defs[target[2]].parent
            if parent < 0 or dfi.facts.defs[parent].kind != INTERFACE \
                    or trait not in (None, (DEFINITION_TAG, target[1], parent)):
                return []
            trait = (DEFINITION_TAG, target[1], parent)
            name = dfi.facts.defs[target[2]].name
        out: list[Symbol] = []
        for type_name, type_symbol in receiver_types(r, fi, scope, receiver, site):
            tfi = r.index(type_symbol[1]) if type_symbol is not None else None
            for path, method, method_name in r.methods_of(FAMILY, type_name):
                if method_name != name or (DEFINITION_TAG, path, method) in out:
                    continue
                mfi = r.index(path)
                if mfi is None or crate_of(path, r.layout) != crate_of(fi.path, r.layout):
                    continue
                impls, _, around = impl_table(r, mfi)
                inner = around[method]
                if inner < 0 or not impls[inner].trait_path:
                    continue
                where = mfi.facts.defs[method].parent
                traits = r.memo(("rust-impl-traits", path, where, impls[inner].trait_path),
                                crate_traits, r, mfi, impls[inner].trait_path, where)
                if trait not in traits:
                    continue
                if tfi is not None and type_symbol is not None:
                    if not self._impl_of(r, tfi, type_symbol[2], path, method):
                        continue
                elif r.memo(("rust-impl-type", path, method), self._impl_types, r, path,
                            method):
                    continue  # an impl for a crate type of that name, not the receiver's
                out.append((DEFINITION_TAG, path, method))
        return out

    def caller_twins(self, r: ResolverView, fi: FileIndex, scope: int, targets: list[Symbol]
                     ) -> list[Symbol]:
        """A type written twice in one file under opposite `cfg`s (tokio's `Clock` in
        `cfg_test_util! { }` and `cfg_not_test_util! { }`), each with its impl, has each
        method twice: called from elsewhere, both are flagged alternatives, but a caller in
        that file after one twin's declaration (and before the next) is in its `cfg` block
        and runs its impl's method. The blocks are read from the declarations' order: what
        follows a twin, up to the next, is its block, as its impl is; the last block is
        known to reach its impl's last method only."""
        if scope < 0 or any(t[1] != fi.path for t in targets):
            return targets
        defs = fi.facts.defs
        owner = defs[targets[0][2]].owner
        if not owner or any(defs[t[2]].owner != owner or defs[t[2]].qualname
                            != defs[targets[0][2]].qualname for t in targets):
            return targets
        twins = r.memo(("rust-twins", fi.path, owner), twin_lines, fi, owner)
        if len(twins) < 2:
            return targets
        line = defs[scope].start_line
        block = bisect.bisect_right(twins, line)
        kept = [t for t in targets
                if block and bisect.bisect_right(twins, defs[t[2]].start_line) == block]
        if block == len(twins) and all(defs[t[2]].start_line < line for t in kept):
            return targets  # past the last twin's methods: maybe no longer in its block
        return kept or targets

    def extra_bases(self, r: ResolverView, fi: FileIndex, index: int) -> list[Symbol]:
        """The traits a type implements lend it their default methods (`shelf.headline()`
        where `impl Describe for MemoryShelf` leaves `headline` to the trait): the trait impls
        in the type's own file, and those around a method of the type elsewhere in the crate
        (an impl of only default methods in another file is not found). The type's own
        methods come first (``class_member`` asks the bases last)."""
        d = fi.facts.defs[index]
        if d.kind != CLASS:  # a struct or an enum (a trait's supertraits are its bases)
            return []
        # the places once per name and file: tests/debug/gen.rs declares 79 local structs
        # `Print`, each with its `impl Debug for Print`, and each asked of all 79 impls
        places = r.memo(("rust-trait-impls", fi.path, d.name), crate_trait_impls, r, fi,
                        d.name)
        me = (DEFINITION_TAG, fi.path, index)
        out: list[Symbol] = []
        for path, inner, scope, traits in places:
            ifi = r.index(path)
            if ifi is not None and me in r.resolve_path(ifi, ifi.facts.impls[inner].type_path,
                                                        scope, want_type=True)[0]:
                out.extend(traits)
        return out



_DEREF_WRAPPER = re.compile(r":\s*(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)*(?:(?:std|alloc)::\w+::)?"
                            r"(?:Box|Arc|Rc)\s*<")
_WRAPPER_OWN_METHODS = frozenset("""
    clone clone_from hash eq ne cmp partial_cmp lt le gt ge fmt default drop as_ref as_mut
    borrow borrow_mut to_tokens to_token_stream into_token_stream
""".split())


RULES = _Rules()
