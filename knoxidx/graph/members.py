"""A member of what a path denotes so far (:class:`Members`, a base of
:class:`~knoxidx.graph.scopes.ScopeResolver`): a class's own members, then its bases' (their
order the MRO's); an instance's, and the attributes its methods set on the receiver; a
module's names; a value's through its type; an alias's through the type it stands for, and a
type definition's instances.
"""

from __future__ import annotations

from knoxidx.core.facts import OWN_MEMBERS
from knoxidx.core.symbols import (
    DEFINITION_TAG,
    EXTERNAL_TAG,
    FILE_TAG,
    INSTANCE_TAG,
    MODULE_TAG,
    Symbol,
)
from knoxidx.graph.lexical import LexicalScopes
from knoxidx.graph.lookups import Workspace
from knoxidx.graph.scope_reads import MAX_DEPTH, dedupe
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.definitions import is_anonymous
from knoxidx.parse.file_index import (
    ASSIGNED_MEMBER,
    CLASS,
    CONSTANT,
    FUNCTION,
    MODULE,
    TYPE,
    TYPE_KINDS,
    VARIABLE,
    FileIndex,
)


class Members(LexicalScopes):
    """Members and bases (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._bases_cache: dict[tuple[str, int], tuple[list[Symbol], frozenset[str]]] = {}

    def forget(self) -> None:
        super().forget()
        self._bases_cache.clear()

    def member(self, symbol: Symbol, name: str, depth: int = 0) -> tuple[list[Symbol], bool]:
        """What ``symbol.name`` denotes; the flag says it went through an instance's type."""
        tag = symbol[0]
        if tag == EXTERNAL_TAG:
            return [symbol], False  # a member of something external is external
        if tag == MODULE_TAG or tag == FILE_TAG:
            family = symbol[1] if tag == MODULE_TAG else self._family(symbol[1])
            fi_rules = family_plugin(family).RULES
            return fi_rules.module_member(self, symbol, name), False
        d = self.definition(symbol)
        if d is None:
            return [], False
        if tag == INSTANCE_TAG:
            found = self.class_member(symbol[1], symbol[2], name)
            if not found and d.kind == FUNCTION:
                found = self._result_member(symbol, name)
            return (found or self.attribute_types(symbol[1], symbol[2], name)), True
        kind = d.kind
        if kind in TYPE_KINDS:
            if kind == TYPE and d.type_hint:
                aliased = self.aliased(symbol)
                if aliased:  # `Alias::new()`: the aliased type's
                    return dedupe([m for t in aliased
                                    for m in self.class_member(t[1], t[2], name)]), False
            return self.class_member(symbol[1], symbol[2], name), False
        if kind == MODULE:
            fi = self.index(symbol[1])
            hit = self.child(fi, symbol[2], name) if fi else None
            return ([(DEFINITION_TAG, symbol[1], hit[-1])] if hit else []), False
        if kind in (VARIABLE, CONSTANT) and depth < MAX_DEPTH:
            if self.defining(symbol[1]).rules.wrapper_method(d.signature, name):
                return [], True  # `self.boxed.clone()`: Box's clone, not the boxed type's
            typed = self.value_type(symbol)
            out: list[Symbol] = []
            for t in typed:
                members, _ = self.member(t, name, depth + 1)
                out.extend(members)
            if not out:
                # an object literal's own methods: `const Cache = { get(key) {..} }`
                fi = self.index(symbol[1])
                hit = self.child(fi, symbol[2], name) if fi else None
                if hit:
                    return [(DEFINITION_TAG, symbol[1], hit[-1])], False
            return out, True
        if kind == FUNCTION and depth < MAX_DEPTH and len(d.signature_data) > 3 \
                and d.signature_data[3]:
            # `cli.command` of a `cli` that `@click.group()` made a Group: that type's member
            out = []
            for t in self.decorated(symbol):
                out.extend(self.member(t, name, depth + 1)[0])
            return dedupe(out), True
        return [], False

    def decorated(self, symbol: Symbol) -> list[Symbol]:
        """The instance types the name of the decorated function ``symbol`` holds where its
        decorators say (the family's ``decorated_types``), [] where it holds the function."""
        if self._typing or self._returning:  # (inside another's: a partial answer, not kept)
            return self._decorated(symbol)
        return self.memo(("decorated", symbol), self._decorated, symbol)

    def _decorated(self, symbol: Symbol) -> list[Symbol]:
        with self.entering(("decorated", symbol)) as fresh:
            if not fresh:  # `@f.x` over `def f`
                return []
            fi = self.defining(symbol[1])
            return fi.rules.decorated_types(self, fi, symbol[2])

    def _family(self, path: str) -> str:
        fi = self.index(path)
        return fi.family if fi else ""

    def class_member(self, path: str, index: int, name: str, depth: int = 0) -> list[Symbol]:
        """``name`` in the class at (path, index) or, failing that, its bases in order (MRO)."""
        if depth == 0:
            return self.memo(("member", path, index, name),
                             self._class_member, path, index, name, 0)
        return self._class_member(path, index, name, depth)

    def _class_member(self, path: str, index: int, name: str, depth: int) -> list[Symbol]:
        fi = self.index(path)
        if fi is None or depth > MAX_DEPTH:
            return []
        d = fi.facts.defs[index]
        # methods declared apart (Go receivers, Rust impls) before fields of the same name:
        # `x.len()` is the method even where a field `len` exists
        owned = [
            (p, i) for p, i, method in self.methods_of(fi.family, d.name)
            if method == name and fi.rules.owner_matches(self, fi, index, p, i)
        ] if fi.rules.out_of_line_methods else []
        hit = self.child(fi, index, name)
        if not hit and fi.assigns_members and d.kind == CLASS:
            hit = self._constructor_assigned(fi, index, name)
        if hit and depth and name == d.name:
            # a base's constructor (Java names it as its class) is no member a subclass
            # inherits: the name read there is the base class itself
            hit = [i for i in hit if fi.facts.defs[i].kind != FUNCTION]
        if owned:
            # and a field of the same name (a Rust getter: `fn title(&self) -> &str {
            # &self.title }`): both, and the reference picks (see Resolver._by_use)
            defs = fi.facts.defs
            return [(DEFINITION_TAG, p, i) for p, i in owned] + [
                (DEFINITION_TAG, path, i) for i in hit or () if defs[i].kind != FUNCTION]
        if hit:
            return [(DEFINITION_TAG, path, i) for i in hit]
        for base in self.bases_of(path, index):
            found = self._class_member(base[1], base[2], name, depth + 1)
            if found:
                return found
        return []

    def _constructor_assigned(self, fi: FileIndex, index: int, name: str) -> list[int]:
        """The functions the constructor of the class at ``index`` assigns to the receiver's
        member ``name`` (JavaScript's `this.clear = function () {..}`): defined inside the
        constructor, which they close over, they are members of the class all the same."""
        out: list[int] = []
        for constructor in self.child(fi, index, fi.rules.constructor_name) or ():
            out.extend(self.child(fi, constructor, ASSIGNED_MEMBER + name) or ())
        return out

    def _result_member(self, symbol: Symbol, name: str) -> list[Symbol]:
        """The types of the property ``name`` of the inline object type the function
        ``symbol`` declares as its result (`f(): { status: ParseStatus }`, see
        parse/returns.py's result_member_bindings)."""
        fi = self.index(symbol[1])
        binding = fi.bindings.get((symbol[2], f"{OWN_MEMBERS[0]}.{name}")) if fi else None
        return self.binding_type(fi, binding) if fi is not None and binding is not None else []

    def attribute_types(self, path: str, index: int, name: str, depth: int = 0) -> list[Symbol]:
        """Types of an attribute set on the receiver in a method (``self.x = Foo()``), in the
        class or its bases: the attribute itself is no definition, so the value's type is what
        a further member access continues from."""
        fi = self.index(path)
        if fi is None or depth > MAX_DEPTH:
            return []
        binding = fi.attribute_binding(index, name)
        if binding is not None:
            typed = self.binding_type(fi, binding)
            if typed:
                return typed
        if fi.rules.bases_are_fields:
            embedded = [base for base in self.bases_of(path, index)
                        if base[0] == DEFINITION_TAG and self.definition(base).name == name]
            if embedded:
                return [i for base in embedded for i in self.instances_of(base)]
        for base in self.bases_of(path, index):
            found = self.attribute_types(base[1], base[2], name, depth + 1)
            if found:
                return found
        return []

    def bases_of(self, path: str, index: int) -> list[Symbol]:
        """Resolved base classes/interfaces, cached with the lookup keys their resolution
        consulted so that a cache hit records the same dependencies as a miss."""
        key = (path, index)
        cached = self._bases_cache.get(key)
        if cached is not None:
            self.keys |= cached[1]
            return cached[0]
        self._bases_cache[key] = ([], frozenset())  # cycle guard
        outer_keys, self.keys = self.keys, set()
        fi = self.index(path)
        out: list[Symbol] = []
        if fi is not None:
            d = fi.facts.defs[index]
            found = [s for ref in fi.bases.get(index, ())
                     for s in self.resolve_path(fi, ref.path, d.parent)[0]]
            if is_anonymous(d):
                # an anonymous class (`new T() {..}`): the type its `new` names, a base with
                # no Extends edge (javac reports that relation as the `new`'s call of T)
                found.extend(self.resolve_path(fi, d.type_hint, d.parent, want_type=True)[0])
            out.extend(s for s in found
                       if s[0] == DEFINITION_TAG and s != (DEFINITION_TAG, path, index))
            out.extend(fi.rules.extra_bases(self, fi, index))
        out = dedupe(out)
        consulted = frozenset(self.keys)
        self._bases_cache[key] = (out, consulted)
        outer_keys |= consulted  # in place, as in memo()
        self.keys = outer_keys
        return out

    def instances_of(self, symbol: Symbol) -> list[Symbol]:
        """An instance of the type definition ``symbol``: of what it stands for when it is an
        alias (``input: ParseStream`` holds a ParseBuffer), else of itself."""
        aliased = self.aliased(symbol)
        if aliased:
            return [(INSTANCE_TAG, t[1], t[2]) for t in aliased]
        return [(INSTANCE_TAG, symbol[1], symbol[2])]

    def aliased(self, symbol: Symbol, depth: int = 0) -> list[Symbol]:
        """The classes, interfaces or other types a type alias stands for (through aliases of
        aliases), or [] when ``symbol`` is no alias of a named type (an object type, a union,
        something outside the repository)."""
        d = self.definition(symbol)
        if d is None or d.kind != TYPE or not d.type_hint or depth > MAX_DEPTH:
            return []
        fi = self.index(symbol[1])
        if fi is None:
            return []
        found, _ = self.resolve_path(fi, d.type_hint, d.parent, want_type=True)
        out: list[Symbol] = []
        for target in found[:4]:
            if target[0] != DEFINITION_TAG or target == symbol:
                continue
            t = self.definition(target)
            if t.kind == TYPE and t.type_hint:
                out.extend(self.aliased(target, depth + 1) or [target])
            elif t.kind in TYPE_KINDS:
                out.append(target)
        return dedupe(out)
