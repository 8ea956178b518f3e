"""Rust calls that lie outside the index though no `use` says so: std's macros and the
prelude's functions and variants (`assert_eq!`, `vec!`, `Some(x)`, `drop(x)`), paths through
`std`/`core`/`alloc` or a crate of no `use` (`itoa::Buffer::new()`), the prelude's and the
primitive types' functions (`Vec::new()`, `u64::try_from(x)`, `T::default()` for `T: Default`)
and the methods of a value declared of such a type or of a type the index resolves outside
itself (`buf.push(b)` of a `buf: &mut Vec<u8>`, `fmt.debug_struct(..)` of a `fmt: &mut
fmt::Formatter`). Resolution asks only about a call it left unresolved with nothing external
found (see ``BaseRules.outside_call``); an in-repo definition that may be meant keeps it
unknown: a function or macro of the name, a module of the crate named like a path's head, a
method of the name declared by one of the crate's traits (the only way a crate adds methods to
a type of std's or another crate's)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from knoxidx.core.facts import CALLBACK_OF, ELEMENT_OF, ITEMS_HEAD, TYPES_JOINER, UNKNOWN_VALUE
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG
from knoxidx.languages.rust.bound_types import DEREF_WRAPPED
from knoxidx.parse.file_index import CONSTANT, FUNCTION, INTERFACE, MODULE, VARIABLE

if TYPE_CHECKING:
    from knoxidx.core.facts import Binding, NamePath
    from knoxidx.languages.protocol import ResolverView
    from knoxidx.parse.file_index import FileIndex

FAMILY = "rust"
# std's macros (`assert_eq!` is a call of `assert_eq` to the index) and the prelude's
# functions and enum variants, called by their bare names
PRELUDE_CALLS = frozenset("""
    assert assert_eq assert_ne debug_assert debug_assert_eq debug_assert_ne panic unreachable
    unimplemented todo vec format format_args print println eprint eprintln write writeln
    matches cfg compile_error concat stringify include include_str include_bytes env
    option_env line column file module_path dbg thread_local
    Some Ok Err drop
""".split())
# the prelude's types and traits and the primitive types, whose functions a path calls
# (`Vec::new()`, `Default::default()`, `u64::try_from(x)`)
PRELUDE_TYPES = frozenset("""
    Vec String Box Option Result Default Iterator IntoIterator DoubleEndedIterator
    ExactSizeIterator Extend From Into TryFrom TryInto ToString ToOwned Clone AsRef AsMut
    PartialEq Eq PartialOrd Ord Drop Fn FnMut FnOnce Send Sync Sized Unpin
    bool char str u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64
""".split())
# the prelude's and primitive types a value may be declared of, whose methods are std's:
# none of them derefs to a type the crate may declare (`Box<T>` does: T's methods)
VALUE_TYPES = PRELUDE_TYPES - {"Box"}
# crates a path may start at without a `use`, and their modules
STD_CRATES = frozenset({"std", "core", "alloc"})
STD_MODULES = frozenset("""
    alloc any arch array ascii backtrace borrow boxed cell char clone cmp collections convert
    default env error f32 f64 ffi fmt fs future hash hint i8 i16 i32 i64 i128 io isize iter
    marker mem net num ops option os panic path pin prelude primitive process ptr rc result
    slice str string sync task thread time u8 u16 u32 u64 u128 usize vec
""".split())
# types that deref to the type they hold (whose methods, the crate's maybe, they lend)
DEREF_WRAPPERS = frozenset("""
    Box Arc Rc Pin Ref RefMut MutexGuard RwLockReadGuard RwLockWriteGuard Cow ManuallyDrop
    AssertUnwindSafe Deref DerefMut
""".split())

# what stands before a type's name as written: references, lifetimes, `mut`, `dyn`, `impl`
_REFERENCES = re.compile(r"^(?:&\s*|'\w+\s+|(?:mut|dyn|impl)\s+)*")


def outside_call(r: ResolverView, fi: FileIndex, scope: int, path: NamePath, site: int
                 ) -> bool:
    """See the module docstring."""
    head = path[0]
    if head in ("?", ITEMS_HEAD, "Self", "crate", "$crate", "super") or head.endswith("()"):
        return False
    if len(path) == 1:
        return head in PRELUDE_CALLS and not _crate_function(r, head)
    if ELEMENT_OF in path:
        return False  # an element: its type is not read here
    method = path[-1].removesuffix("()")
    if any(part.endswith("()") for part in path[1:-1]):
        # a call's result: known where std's methods hand back std's types all the way (the
        # head's type is read only where each step is one of theirs)
        if not all(part.removesuffix("()") in _STD_RESULT_METHODS for part in path[1:-1]) \
                or _trait_method(r, method):
            return False
        held = _std_type(r, fi, scope, head, site, 0)
        for part in path[1:-1]:
            held = STD_RESULTS.get((held, part.removesuffix("()"))) if held else None
        return held is not None and held not in DEREF_WRAPPERS
    local, binding = _local(fi, head, scope, site) if head != "self" else (True, None)
    if binding is not None and binding.is_call:
        if len(path) != 2 or _trait_method(r, method):
            return False
        held = _std_type(r, fi, scope, head, site, 0)  # `let d = f.debug_struct("D")`
        return held is not None and held not in DEREF_WRAPPERS
    if head == "self" or binding is not None and len(path) > 2:
        return _field_outside(r, fi, scope, path, site)
    if binding is not None:
        return _binding_outside(r, fi, binding) and not _trait_method(r, method)
    if local:
        return False  # a local of no type read here (`let v = Self::default()`)
    # (a local the index does not see bound, `|LocalData { ctx, .. }| ctx.get()`, reads as a
    # head found nowhere too: a path through std names one of its modules, a crate's path
    # a type, which no field of a local is named like)
    if head in STD_CRATES:
        form = path[1] in STD_MODULES
    elif head in PRELUDE_TYPES:
        form = len(path) == 2
    else:
        form = head[:1].islower() and head.isidentifier() and len(path) >= 3 \
            and any(part[:1].isupper() for part in path[1:-1])
    if not form or r.resolve_path(fi, (head,), scope, want_type=True, site=site)[0] \
            or r.resolve_path(fi, (head,), scope, site=site)[0]:
        return False  # an item of the crate's, or one it found outside already
    if head in STD_CRATES:
        return True
    if head in PRELUDE_TYPES:
        return not _trait_method(r, method)
    # a crate of the extern prelude (`itoa::Buffer::new()`): no module or item of the crate's
    # is named so
    return not any(kind in (MODULE, FUNCTION) or not member
                   for _, _, kind, member in r.defs_named(FAMILY, head))


def _field_outside(r: ResolverView, fi: FileIndex, scope: int, path: NamePath, site: int
                   ) -> bool:
    """A method of a field declared of a type outside the index (`self.scratch.push(c)` of a
    `scratch: Vec<u8>`): where the receiver is one field the index knows."""
    if len(path) < 3:
        return False  # `self.m()`: a method of the crate's type, or of a trait's
    found = r.resolve_path(fi, path[:-1], scope, site=site)[0]
    if len(found) != 1 or found[0][0] != DEFINITION_TAG:
        return False
    d = r.definition(found[0])
    declaring = r.index(found[0][1])
    if d is None or declaring is None or d.kind not in (VARIABLE, CONSTANT) \
            or ":" not in d.signature:
        return False
    written = d.signature.partition(":")[2].partition("=")[0]
    return r.memo(("rust-written-outside", declaring.path, d.parent, written),
                  _written_outside, r, declaring, written, d.parent) is True \
        and not _trait_method(r, path[-1].removesuffix("()"))


def _binding_outside(r: ResolverView, fi: FileIndex, binding: Binding) -> bool:
    """Whether the local ``binding`` binds is of a type outside the index: a parameter by
    its type as written, one of a type
    parameter's (`visitor: V`) by V's bounds; a type parameter itself (`T::default()`) by its
    bounds; a `let`'s by its declared type (the wrapper it reads as: `Arc<Mutex<T>>` is a
    Mutex, see hooks.OPAQUE_WRAPPERS)."""
    written = r.memo(("rust-parameters", fi.path, binding.scope), _parameters, fi,
                     binding.scope).get(binding.name)
    if written is not None:
        outside = r.memo(("rust-written-outside", fi.path, binding.scope, written),
                         _written_outside, r, fi, written, binding.scope)
        if outside is not None:
            return outside
    return _plain(binding.type_path) and r.memo(
        ("rust-type-outside", fi.path, binding.scope, binding.type_path), _type_outside, r, fi,
        binding.type_path, binding.scope)


def _parameters(fi: FileIndex, function: int) -> dict[str, str | None]:
    """The types of the function's parameters as written, by name."""
    signature = fi.facts.defs[function].signature_data
    return {name: typed for name, typed, *_ in signature[0]} if signature else {}


def _written_outside(r: ResolverView, fi: FileIndex, written: str, scope: int) -> bool | None:
    """Whether the type ``written`` (as the source writes it) lies outside the index and
    derefs to no type of the crate's: by its outermost type, a slice or a prelude or primitive
    type, or one the index resolves outside itself (read as a type or a module, never as a
    local named like it: `fmt: &mut fmt::Formatter`). None where the index knows no such type
    (a type parameter's name)."""
    text = _unboxed(written)
    if text.startswith("["):
        return True  # a slice or an array
    outer = text.partition("<")[0].strip()
    if not outer or "+" in outer or "(" in outer:
        return False
    path = tuple(part.strip() for part in outer.split("::"))
    if not all(part.isidentifier() for part in path) or path[-1] in DEREF_WRAPPERS:
        return False
    found = r.resolve_path(fi, (ITEMS_HEAD, *path), scope, want_type=True)[0]
    if found:
        return all(s[0] == EXTERNAL_TAG for s in found)
    if len(path) == 1 and path[0] in VALUE_TYPES:
        return True
    return None


def _unboxed(written: str) -> str:
    """The type ``written`` derefs to through its references and `Box`, `Arc` and `Rc`
    (`&Rc<RefCell<T>>` is a RefCell's), as written."""
    text = _REFERENCES.sub("", written.strip())
    while (boxed := DEREF_WRAPPED.match(text)) is not None:
        text = _REFERENCES.sub("", boxed.group(1).strip())
    return text


def _local(fi: FileIndex, head: str, scope: int, site: int) -> tuple[bool, Binding | None]:
    """Whether ``head`` read at ``site`` of ``scope`` is a local (or a type parameter) the
    functions around bind, and its declaration where exactly one reaches the read (else
    None)."""
    defs = fi.facts.defs
    s = scope
    while s >= 0 and defs[s].kind == FUNCTION:
        binding = fi.bindings.get((s, head))
        if binding is not None:
            return True, fi.reaching_one(s, head, scope, site, binding)
        s = defs[s].parent
    return False, None


# std's methods whose result is another of std's types, by (receiver type, method): the
# `Debug` builders (`f.debug_struct("S").field("a", &a).finish()`: each step hands back its
# builder) and the locks' `LockResult`, whose `unwrap()` is a guard (which derefs to the
# value inside: its methods may be the crate's)
_BUILDERS = {"debug_struct": "DebugStruct", "debug_tuple": "DebugTuple",
             "debug_list": "DebugList", "debug_set": "DebugSet", "debug_map": "DebugMap"}
_BUILDER_STEPS = {"DebugStruct": ("field",), "DebugTuple": ("field",),
                  "DebugList": ("entry", "entries"), "DebugSet": ("entry", "entries"),
                  "DebugMap": ("entry", "entries", "key", "value")}
_LOCKS = {("Mutex", "lock"): "MutexGuard", ("Mutex", "try_lock"): "MutexGuard",
          ("RwLock", "read"): "RwLockReadGuard", ("RwLock", "try_read"): "RwLockReadGuard",
          ("RwLock", "write"): "RwLockWriteGuard", ("RwLock", "try_write"): "RwLockWriteGuard"}
STD_RESULTS: dict[tuple[str, str], str] = {
    **{("Formatter", method): builder for method, builder in _BUILDERS.items()},
    **{(builder, step): builder for builder, steps in _BUILDER_STEPS.items() for step in steps},
    **{lock: "LockResult" for lock in _LOCKS},
    **{("LockResult", method): "MutexGuard" for method in ("unwrap", "expect")},
}

_STD_RESULT_METHODS = frozenset(method for _, method in STD_RESULTS)


def _std_type(r: ResolverView, fi: FileIndex, scope: int, head: str, site: int, depth: int
              ) -> str | None:
    """The name of the std type (one STD_RESULTS knows of) the local ``head`` read at
    ``site`` holds: declared of a type outside the index, or bound to a call of such a
    table's method on one (`let mut d = f.debug_struct("D")`); None where not known."""
    local, binding = _local(fi, head, scope, site)
    if binding is None or depth > 3:
        return None
    if binding.is_call:
        called = binding.type_path
        returned = _returned_outside(r, fi, binding)
        if returned is not None:  # `let m = made()` of a `fn made() -> Arc<Mutex<T>>`
            return returned
        if len(called) != 2:
            return None
        held = _std_type(r, fi, binding.scope, called[0], binding.at - 1 if binding.at else site,
                         depth + 1)
        return STD_RESULTS.get((held, called[1])) if held else None
    if not _binding_outside(r, fi, binding):
        return None
    written = r.memo(("rust-parameters", fi.path, binding.scope), _parameters, fi,
                     binding.scope).get(binding.name)
    outer = _unboxed(written).partition("<")[0] if written \
        else "::".join(binding.type_path)
    return outer.rpartition("::")[2].strip() or None


def _returned_outside(r: ResolverView, fi: FileIndex, binding: Binding) -> str | None:
    """The name of the type outside the index a local bound to a call of the crate's function
    holds, by the type the function returns as a `let` reads it (the wrapper kept: a `fn
    made() -> Arc<Mutex<T>>` returns a Mutex, see hooks.OPAQUE_RESULTS), as a declared
    local's; None where that is no type outside (one of the crate's, a type parameter). Once
    per binding: each call on the local asks."""
    return r.memo(("rust-returned-outside", fi.path, binding), _returned_outside_of, r, fi,
                  binding)


def _returned_outside_of(r: ResolverView, fi: FileIndex, binding: Binding) -> str | None:
    found = r.resolve_path(fi, binding.type_path, binding.scope,
                           site=binding.at - 1 if binding.at else 0)[0]
    if len(found) != 1 or found[0][0] != DEFINITION_TAG:
        return None
    d = r.definition(found[0])
    declaring = r.index(found[0][1])
    if d is None or declaring is None or d.kind != FUNCTION or not _plain(d.type_hint):
        return None
    outside = r.memo(("rust-type-outside", declaring.path, d.parent, d.type_hint), _type_outside,
                     r, declaring, d.type_hint, d.parent)
    return d.type_hint[-1] if outside else None


def _plain(path: NamePath) -> bool:
    """Whether a declared type path names types as written (no value of no known type, no
    element or callback parameter)."""
    return bool(path) and path != UNKNOWN_VALUE and path[-1] != ELEMENT_OF \
        and path[-1][:1] != CALLBACK_OF


def _type_outside(r: ResolverView, fi: FileIndex, type_path: NamePath, scope: int) -> bool:
    """Whether every type ``type_path`` names (bounds joined by TYPES_JOINER) lies outside the
    index and lends no type of the crate's its methods: a prelude or primitive type of no
    Deref, or one the index resolves outside itself (its head read as a type's or a module's,
    never as a local named like it: `fmt: &mut fmt::Formatter`)."""
    paths: list[NamePath] = []
    current: list[str] = []
    for part in type_path:
        if part == TYPES_JOINER:
            paths.append(tuple(current))
            current = []
        else:
            current.append(part)
    paths.append(tuple(current))
    for path in paths:
        if not path or path[-1] in DEREF_WRAPPERS:
            return False
        found = r.resolve_path(fi, (ITEMS_HEAD, *path), scope, want_type=True)[0]
        if found:
            if not all(s[0] == EXTERNAL_TAG for s in found):
                return False
        elif len(path) != 1 or path[0] not in VALUE_TYPES:
            return False
    return True


def _crate_function(r: ResolverView, name: str) -> bool:
    """Whether the crate defines a function or macro ``name`` a bare call may mean."""
    return r.memo(("rust-crate-function", name), _defines_function, r, name)


def _defines_function(r: ResolverView, name: str) -> bool:
    return any(kind == FUNCTION and not member
               for _, _, kind, member in r.defs_named(FAMILY, name))


def _trait_method(r: ResolverView, name: str) -> bool:
    """Whether one of the crate's traits declares a method ``name``: implemented for a type
    of std's or another crate's, it is the crate's method of that type."""
    return r.memo(("rust-trait-method", name), _declared_by_trait, r, name)


def _declared_by_trait(r: ResolverView, name: str) -> bool:
    for path, index, kind, member in r.defs_named(FAMILY, name):
        if kind != FUNCTION or not member:
            continue
        fi = r.index(path)
        if fi is None:
            return True  # not known: may be one
        parent = fi.facts.defs[index].parent
        if parent >= 0 and fi.facts.defs[parent].kind == INTERFACE:
            return True
    return False
