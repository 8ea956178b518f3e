"""Rust: the module tree from file paths (``src/a/b.rs`` is ``crate::a::b``), ``use`` paths
with ``crate``/``self``/``super``, methods from ``impl`` blocks, ``impl Trait for Type``."""

from __future__ import annotations

import bisect
import posixpath
import re
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import RECEIVER_ARGUMENT, Binding, Import, NamePath, RefKind
from knoxidx.core.symbols import (
    DEFINITION_TAG,
    EXTERNAL_TAG,
    FILE_TAG,
    INSTANCE_TAG,
    MODULE_TAG,
    Symbol,
)
from knoxidx.languages.common import ReexportingRules, preceding_comment
from knoxidx.languages.rust.bound_types import collection_type, element_type
from knoxidx.languages.rust.bound_types import declared_binding_type as declared_binding_type
from knoxidx.languages.rust.bound_types import element_binding as element_binding
from knoxidx.languages.rust.bound_types import (
    type_parameter_bindings as type_parameter_bindings,
)
from knoxidx.languages.rust.crates import PATH_MODULE, crate_of, module_path
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
    MACRO_USE,
    enclosing_macro,
    exported_macros,
    is_macro_export,
)
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
    from knoxidx.core.facts import FileFacts
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


class _Rules(ReexportingRules):
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

    def module_keys(self, path: str, facts: FileFacts, layout: Any) -> list[str]:
        return [module_path(path, layout)]

    def qualified_prefix(self, path: str, keys: list[str]) -> str:
        return keys[0] if keys else ""

    def _current(self, r: ResolverView, fi: FileIndex, scope: int = -1) -> str:
        """The module path at ``scope`` of the file: the file's module, then the inline
        `mod name { }` blocks around the scope (`super::` in `mod tests` is the file's)."""
        base = module_path(fi.path, r.layout)
        defs = fi.facts.defs
        inline: list[str] = []
        s = scope
        while s >= 0:
            d = defs[s]
            if d.kind == "Module":
                inline.append(d.name)
            s = d.parent
        return "::".join([base, *reversed(inline)]) if inline else base

    def _module(self, r: ResolverView, key: str) -> list[Symbol]:
        if r.module_paths(FAMILY, key):
            return [(MODULE_TAG, FAMILY, key)]
        # an inline `mod name { }` inside the parent module's file
        parent, _, name = key.rpartition("::")
        if parent:
            for path in r.module_paths(FAMILY, parent):
                pfi = r.index(path)
                if pfi is None:
                    continue
                hit = r.child(pfi, -1, name)
                if hit and pfi.facts.defs[hit[-1]].kind == "Module":
                    return [(DEFINITION_TAG, path, hit[-1])]
        return []

    def special_head(self, r: ResolverView, fi: FileIndex, head: str, scope: int
                    ) -> list[Symbol] | None:
        if head in ("crate", "$crate"):  # (a macro's body names its own crate `$crate`)
            return [(MODULE_TAG, FAMILY, crate_of(fi.path, r.layout)[1])]
        if head == "super":
            parent = self._current(r, fi, scope).rpartition("::")[0]
            return self._module(r, parent) if parent else []
        if head == "Self":
            owner = self._owner_type(r, fi, scope)
            return owner
        if head == "self" and not self._in_method(fi, scope):
            current = self._current(r, fi, scope)
            return self._module(r, current) or [(MODULE_TAG, FAMILY, current)]
        if head == "self":
            return [(INSTANCE_TAG, s[1], s[2]) for s in self._owner_type(r, fi, scope)]
        return None

    def _in_method(self, fi: FileIndex, scope: int) -> bool:
        defs = fi.facts.defs
        s = scope
        while s >= 0:
            d = defs[s]
            if d.owner or (d.parent >= 0 and defs[d.parent].kind == "Interface"):
                return True
            s = d.parent
        return False

    def _owner_type(self, r: ResolverView, fi: FileIndex, scope: int) -> list[Symbol]:
        defs = fi.facts.defs
        s = scope
        while s >= 0:
            d = defs[s]
            if d.owner:  # read where the impl is: a type declared in a function or a `mod`
                found, _ = r.resolve_path(fi, (d.owner,), d.parent)
                return [x for x in found if x[0] == DEFINITION_TAG]
            if d.parent >= 0 and defs[d.parent].kind == "Interface":
                return [(DEFINITION_TAG, fi.path, d.parent)]
            s = d.parent
        return []

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

    def resolve_module(self, r: ResolverView, fi: FileIndex, spec: str, scope: int = -1
                      ) -> list[Symbol]:
        if spec.startswith(PATH_MODULE):
            return self._path_module(r, fi, spec[len(PATH_MODULE):], scope)
        parts = spec.split("::") if spec else []
        if not parts:
            return []
        head = parts[0]
        current = self._current(r, fi, scope)
        if head == "crate":
            base = crate_of(fi.path, r.layout)[1]
        elif head == "self":
            base = current
        elif head == "super":
            base = current
            while parts and parts[0] == "super":
                base = base.rpartition("::")[0]
                parts = parts[1:]
            parts = ["super", *parts]
        else:
            local = self._module(r, f"{current}::{head}")
            if local:
                base = f"{current}::{head}"
            elif r.module_paths(FAMILY, head):
                base = head
            else:
                return [(EXTERNAL_TAG, FAMILY, head)]
        key = "::".join([base, *parts[1:]]) if len(parts) > 1 else base
        found = self._module(r, key)
        if found or len(parts) < 2:
            return found
        # through an inline module's `#[path]` module (`crate::gen::helper::fold`, where
        # helper is `#[path = "../gen_helper.rs"] mod helper;` inside lib.rs's `mod gen { }`)
        walked = self._module(r, base)
        for part in parts[1:]:
            walked = [m for w in walked[:4] for m in self.module_member(r, w, part, 1)
                      if _is_module(r, m)]
        # (`use a::Type` where a::Type is an item, not a module: nothing)
        return walked

    def _path_module(self, r: ResolverView, fi: FileIndex, written: str, scope: int
                     ) -> list[Symbol]:
        """The module a `#[path = "written"]` names: relative to the file's directory, and
        inside inline `mod` blocks to theirs (below a directory named like the file, unless
        it is a lib.rs, main.rs or mod.rs), as rustc reads it."""
        directory = posixpath.dirname(fi.path)
        inline = self._current(r, fi, scope)[len(module_path(fi.path, r.layout)):].strip(":")
        if inline:
            stem = posixpath.basename(fi.path)[:-3]
            if stem not in ("lib", "main", "mod"):
                directory = posixpath.join(directory, stem)
            directory = posixpath.join(directory, *inline.split("::"))
        target = posixpath.normpath(posixpath.join(directory, written))
        key = module_path(target, r.layout)
        return [(MODULE_TAG, FAMILY, key)] if target in r.module_paths(FAMILY, key) else []

    def _item(self, r: ResolverView, fi: FileIndex, module: str, name: str, scope: int = -1
             ) -> list[Symbol]:
        modules = self.resolve_module(r, fi, module, scope) if module else []
        out: list[Symbol] = []
        for m in modules:
            if m[0] == EXTERNAL_TAG:
                out.append(m)
            else:
                out.extend(self.module_member(r, m, name))
        if not out and module:
            # the module part may itself be a type: `use a::Type::method` is rare; try a path
            found, _ = r.resolve_path(fi, (*module.split("::"), name), -1)
            out.extend(found)
        return out

    def import_binding(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        if not imp.name:
            return self.resolve_module(r, fi, imp.module, imp.scope)
        return self._item(r, fi, imp.module, imp.name, imp.scope)

    def import_targets(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        if imp.module.startswith(MACRO_USE):  # the `mod` or `extern crate` import is the edge
            return []
        spec = imp.module if not imp.name or imp.name == "*" else f"{imp.module}::{imp.name}"
        found = self.resolve_module(r, fi, spec, imp.scope) if spec else []
        if not found and imp.name and imp.name != "*":
            found = self.resolve_module(r, fi, imp.module, imp.scope)
        out: list[Symbol] = []
        for m in found:
            if m[0] == MODULE_TAG:
                out.extend((FILE_TAG, p, 0) for p in r.module_paths(FAMILY, m[2])[:1])
            elif m[0] == EXTERNAL_TAG:
                out.append(m)
        return out

    def _module_member(self, r: ResolverView, module: Symbol, name: str, depth: int
                      ) -> list[Symbol]:
        if module[0] == DEFINITION_TAG:
            pfi = r.index(module[1])
            hit = r.child(pfi, module[2], name) if pfi else None
            if pfi is None:
                return []
            if hit:
                return [(DEFINITION_TAG, module[1], hit[-1])]
            imports = pfi.imports.get((module[2], name))
            # an inline module's own `use` or `mod x;` (a `#[path]` one among them)
            return self.import_binding(r, pfi, imports[-1]) if imports else []
        if module[0] != MODULE_TAG or depth > 6:
            return []
        out: list[Symbol] = []
        for path in r.module_paths(FAMILY, module[2]):
            pfi = r.index(path)
            if pfi is None:
                continue
            hit = pfi.children.get((-1, name))
            if hit:
                out.append((DEFINITION_TAG, path, hit[-1]))
                continue
            imports = pfi.imports.get((-1, name))
            if not imports:
                r.missed(pfi, -1, name)
            if imports:  # `pub use` re-exports
                out.extend(s for s in self.import_binding(r, pfi, imports[-1]) if s != module)
                continue
            for wildcard in pfi.wildcards:
                for m in self.resolve_module(r, pfi, wildcard.module, wildcard.scope):
                    if m != module and m[0] != EXTERNAL_TAG:
                        out.extend(self.module_member(r, m, name, depth + 1))
        if not out:
            out = self._module(r, f"{module[2]}::{name}")
        if not out and "::" not in module[2]:  # `crate::json!`, `serde_json::json!`
            out = exported_macros(r, module[2], name)
        return out

    def module_fallback(self, r: ResolverView, fi: FileIndex, name: str) -> list[Symbol]:
        for wildcard in fi.wildcards:
            for m in self.resolve_module(r, fi, wildcard.module, wildcard.scope):
                if m[0] != EXTERNAL_TAG:
                    found = self.module_member(r, m, name, 1)
                    if found:
                        return found
        # a child module declared in another file (`mod foo;` is an import, this catches
        # crate-root paths like `foo::bar()` where foo is a sibling module)
        current = self._current(r, fi)
        child = self._module(r, f"{current}::{name}")
        if child:
            return child
        # `tri!` defined in lib.rs, called in de.rs; `ready!` of a `#[macro_use] mod macros;`
        macro = enclosing_macro(r, current, name, self.resolve_module)
        if macro:
            return macro
        # the extern prelude: a crate of the workspace by its name, as an integration test
        # (`tests/*.rs`) calls `tokio::spawn` or `syn::parse_str` without a `use`
        return [(MODULE_TAG, FAMILY, name)] if "::" not in name and r.module_paths(FAMILY, name) else []


def _is_module(r: Any, symbol: Any) -> bool:
    if symbol[0] == MODULE_TAG:
        return True
    if symbol[0] != DEFINITION_TAG:
        return False
    fi = r.index(symbol[1])
    return fi is not None and fi.facts.defs[symbol[2]].kind == "Module"


_DEREF_WRAPPER = re.compile(r":\s*(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)*(?:(?:std|alloc)::\w+::)?"
                            r"(?:Box|Arc|Rc)\s*<")
_WRAPPER_OWN_METHODS = frozenset("""
    clone clone_from hash eq ne cmp partial_cmp lt le gt ge fmt default drop as_ref as_mut
    borrow borrow_mut to_tokens to_token_stream into_token_stream
""".split())


RULES = _Rules()
