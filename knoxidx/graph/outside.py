"""Whether what a call names lies outside the index: the unique-name guess's judgement that
a member of a receiver declared of a type outside the index is no guess to make, and the
reason "external" rather than "unknown" for a call no definition of the index answers (a
predeclared function, a member of a receiver whose type lies outside the index, or of a
class of it extending one). :class:`Outside` is a base of
:class:`knoxidx.graph.resolve.Resolver`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.facts import (
    CALLBACK_OF,
    ELEMENT_OF,
    ITEMS_HEAD,
    UNKNOWN_VALUE,
    Binding,
    NamePath,
    RefKind,
)
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, INSTANCE_TAG, Symbol
from knoxidx.graph.lookups import Workspace
from knoxidx.graph.overloads import Overloads
from knoxidx.graph.scopes import MAX_DEPTH
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.definitions import is_anonymous
from knoxidx.parse.file_index import CLASS, CONSTANT, FUNCTION, TYPE_KINDS, VARIABLE, FileIndex
from knoxidx.parse.name_paths import RESULT_SEGMENT_PREFIX, result_types, type_path

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolutionRules


class Outside(Overloads):
    """The resolver's judgements of what lies outside the index (see the module's head)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._guesses: dict[tuple[str, str, bool], tuple[list[Symbol], int, frozenset[str]]] = {}

    # ---- the unique-name guess ---------------------------------------------------------

    def _declared_outside(self, fi: FileIndex, head: str, scope: int, site: int) -> bool:
        """Whether the local or parameter ``head`` read in ``scope`` (at ``site``) is declared
        of a type outside the index (`IOException e`), by the declaration reaching the read."""
        defs = fi.facts.defs
        s = scope
        while s >= 0 and defs[s].kind == FUNCTION:
            binding = fi.bindings.get((s, head))
            if binding is not None:
                binding = fi.reaching_one(s, head, scope, site, binding)
                if binding is None or binding.is_call or not _plain_type(binding.type_path):
                    return False
                typed = self.resolve_path(fi, binding.type_path, s, want_type=True)[0]
                return bool(typed) and all(self._outside(t) for t in typed)
            s = defs[s].parent
        return self._field_outside(fi, (head,), scope, site)

    def _field_outside(self, fi: FileIndex, receiver: NamePath, scope: int, site: int) -> bool:
        """Whether ``receiver`` denotes a field of the index declared of a type outside it
        (`private final Elements eltUtils;`, `other.values` of a `Map`)."""
        if any(part.endswith("()") for part in receiver):
            return False
        found = self.resolve_path(fi, receiver, scope, site=site)[0]
        if len(found) != 1 or found[0][0] != DEFINITION_TAG:
            return False
        d = self.definition(found[0])
        if d is None or d.kind not in (VARIABLE, CONSTANT) or not d.type_hint:
            return False
        declaring = self.index(found[0][1])
        if declaring is None:
            return False
        typed = self.memo(("field-type", found[0]), self._type_of, declaring, d.type_hint,
                          d.parent)
        return bool(typed) and all(self._outside(t) for t in typed)

    def _outside(self, typed: Symbol) -> bool:
        """Whether a member the index does not find in the type ``typed`` may be one of a
        type outside the index: ``typed`` is one, or a class extending one (directly or
        through the index's classes: `ClientCodeException extends RuntimeException`, whose
        `getCause()` is Throwable's)."""
        if typed[0] == EXTERNAL_TAG:
            return True
        return typed[0] == DEFINITION_TAG and bool(
            self.memo(("extends-outside", typed), self._extends_outside, typed, 0, False))

    def _extends_outside(self, cls: Symbol, depth: int, surely: bool) -> bool:
        """Whether the class ``cls`` extends one outside the index, directly or through the
        index's classes; ``surely``: only bases surely outside (see :meth:`_surely`)."""
        fi = self.index(cls[1])
        if fi is None or depth > MAX_DEPTH:
            return False
        d = fi.facts.defs[cls[2]]
        for ref in fi.bases.get(cls[2], ()):
            found = self.resolve_path(fi, ref.path, d.parent)[0]
            for base in found:
                if base[0] == EXTERNAL_TAG and (not surely or self._surely(fi, ref.path, found)) \
                        or base[0] == DEFINITION_TAG and base != cls \
                        and self._extends_outside(base, depth + 1, surely):
                    return True
        return False

    def _type_of(self, fi: FileIndex, hint: NamePath, scope: int) -> list[Symbol]:
        return self.resolve_path(fi, hint, scope, want_type=True)[0]

    def _guess(self, fi: FileIndex, path: NamePath, found: list[Symbol],
               scope: int | None = None, site: int = 0) -> tuple[list[Symbol], int]:
        """The unique-name guess: (the one candidate or nothing, how many candidates).
        ``scope`` and ``site``: where the path is read, for a family that guesses no member
        of a receiver of a type outside the index (``guess_outside_receivers``)."""
        if any(s[0] == EXTERNAL_TAG for s in found):
            return [], 0  # it names something external: no guessing
        name = path[-1]
        rules: ResolutionRules = fi.rules
        head = path[0]
        if len(path) == 2 and (head in rules.self_names or head in ("super", "Self")):
            return [], 0  # the receiver's class is known: the method is inherited from outside
        if len(path) == 1:
            if not rules.guess_bare_names:
                return [], 0
        elif not rules.guess_members or name in rules.builtin_method_names:
            return [], 0
        elif not rules.guess_outside_receivers and scope is not None and (
                self._declared_outside(fi, head, scope, site) if len(path) == 2
                else self._field_outside(fi, path[:-1], scope, site)):
            return [], 0
        member = len(path) > 1
        key = (fi.family, name, member)
        cached = self._guesses.get(key)
        if cached is None:
            candidates = [
                (p, i) for p, i, kind, is_member in self.defs_named(fi.family, name)
                if kind in (FUNCTION, CLASS) and (is_member or not member)
            ]
            found_one: list[Symbol] = (
                [(DEFINITION_TAG, candidates[0][0], candidates[0][1])] if len(candidates) == 1
                else [])
            cached = (found_one, len(candidates), frozenset({"name:" + name}))
            self._guesses[key] = cached
        self.keys |= cached[2]
        return cached[0], cached[1]

    # ---- why a call stays unresolved ----------------------------------------------------

    def _lies_outside(self, fi: FileIndex, path: NamePath, found: list[Symbol], scope: int,
                      site: int) -> bool:
        """Whether a call no definition of the index answers is of something outside it all
        the same (its reason "external", not "unknown"): a predeclared function, a static
        import's, or a member of a receiver whose type lies outside the index (or is a class
        of it extending one that does, whose member it inherits). Never where the lookup
        found a definition of the index (one of another arity: the index may be meant) or
        the receiver's type is not known."""
        if any(s[0] == DEFINITION_TAG for s in found) or not path:
            return False
        rules: ResolutionRules = fi.rules
        head = path[0].removesuffix("()")
        if head in ("?", ITEMS_HEAD):
            return False
        own = head == "super" or head in rules.self_names
        cls = fi.class_of(scope) if scope >= 0 else -1
        universal = path[-1] in rules.universal_methods
        if len(path) == 1:
            if own:  # `super(..)`: the constructor of a base outside the index
                return head == "super" and cls >= 0 and self._base_outside(fi, cls)
            if head in rules.builtin_functions or rules.outside_name(self, fi, head) \
                    or universal and cls >= 0:
                return True
            # a method inherited from outside by a class the call is in
            while rules.class_members_visible and cls >= 0:
                if self._class_outside((DEFINITION_TAG, fi.path, cls)):
                    return True
                cls = fi.class_of(fi.facts.defs[cls].parent)
            return False
        receiver = path[:-1]
        if own and len(receiver) == 1 and not path[0].endswith("()"):
            return cls >= 0 and (universal or self._class_outside((DEFINITION_TAG, fi.path, cls)))
        # (`x.a()`, `x.b()`: one receiver, read again and again)
        return bool(self.memo(("receiver-outside", fi.path, receiver, scope, site, universal),
                              self._receiver_outside, fi, receiver, scope, site, universal))

    def _base_outside(self, fi: FileIndex, cls: int) -> bool:
        """Whether the class at ``cls`` extends a class outside the index directly."""
        bases = fi.bases.get(cls, ())
        parent = fi.facts.defs[cls].parent
        for ref in bases:
            if ref.kind == RefKind.EXTENDS:
                found = self.resolve_path(fi, ref.path, parent)[0]
                if found and all(s[0] == EXTERNAL_TAG for s in found) \
                        and self._surely(fi, ref.path, found):
                    return True
        return False

    def _surely(self, fi: FileIndex, written: NamePath, found: list[Symbol]) -> bool:
        """Whether what the type written ``written`` resolved to is surely so: not a type
        said outside the index by its name alone (a class named where a wildcard imports a
        package outside it, see the Java rules' fallback) that the index has a type of."""
        name = written[-1] if written else ""
        if not any(s[0] == EXTERNAL_TAG and s[2] == name for s in found):
            return True
        return not any(kind in TYPE_KINDS for _, _, kind, _ in self.defs_named(fi.family, name))

    def _class_outside(self, cls: Symbol) -> bool:
        """:meth:`_outside`, of bases surely outside the index (see :meth:`_surely`)."""
        if cls[0] == EXTERNAL_TAG:
            return True
        return cls[0] == DEFINITION_TAG and bool(
            self.memo(("surely-extends-outside", cls), self._extends_outside, cls, 0, True))

    def _receiver_outside(self, fi: FileIndex, receiver: NamePath, scope: int, site: int,
                          universal: bool = False) -> bool:
        """Whether the value ``receiver`` (a path read in ``scope`` at ``site``) is of a type
        outside the index, or of a class of it extending one: by what resolution makes of
        it, else by the type its declaration or the function returning it declares.
        ``universal``: the method called is one of the root class's, which any instance
        has."""
        if receiver[-1].endswith("()"):  # `c.Flags().String()`: what Flags declares it returns
            outside = self._returns_outside(fi, (*receiver[:-1], receiver[-1][:-2]), scope,
                                            site)
        elif typed := self.resolve_path(fi, receiver, scope, site=site)[0]:
            outside = all(universal and s[0] == INSTANCE_TAG or self._value_outside(s)
                          for s in typed)
        else:  # a local declared of a type outside the index, or a member of one
            outside = self._local_outside(fi, receiver[0], scope, site, len(receiver) > 1)
        return outside

    def _value_outside(self, symbol: Symbol, strict: bool = False) -> bool:
        """Whether what resolution made of a receiver is of a type outside the index: an
        instance or a class extending one, a field declared of one."""
        if symbol[0] == INSTANCE_TAG:
            return self._class_outside((DEFINITION_TAG, symbol[1], symbol[2]))
        if symbol[0] != DEFINITION_TAG:
            return symbol[0] == EXTERNAL_TAG
        d = self.definition(symbol)
        if d is not None and d.kind in TYPE_KINDS:
            return self._class_outside(symbol)
        declaring = self.index(symbol[1])
        if d is None or d.kind not in (VARIABLE, CONSTANT) or declaring is None:
            return False
        if d.type_hint:
            return _plain_type(d.type_hint) and self._type_outside(declaring, d.type_hint,
                                                                   d.parent, strict)
        # a package's `var mu = &sync.Mutex{}`: what its value says
        binding = declaring.bindings.get((d.parent, d.name))
        return binding is not None and self._binding_outside(declaring, binding, strict)

    def _local_outside(self, fi: FileIndex, head: str, scope: int, site: int, strict: bool
                       ) -> bool:
        """Whether the local or parameter ``head`` read in ``scope`` (at ``site``) is declared
        of a type outside the index, or bound to the result of a function of the index
        declared to return one. ``strict``: of such a type itself, not of a class of the index
        extending one (a member read on it is then outside the index too)."""
        defs = fi.facts.defs
        s = scope
        while s >= 0:
            if defs[s].kind != FUNCTION:
                # a local of the method around an anonymous class, none of its own members
                if not is_anonymous(defs[s]) or self.child(fi, s, head):
                    return False
                s = defs[s].parent
                continue
            binding = fi.bindings.get((s, head))
            if binding is not None:
                binding = fi.reaching_one(s, head, scope, site, binding)
                return binding is not None and self._binding_outside(fi, binding, strict)
            s = defs[s].parent
        return False

    def _binding_outside(self, fi: FileIndex, binding: Binding, strict: bool) -> bool:
        """Whether ``binding`` declares its name of a type outside the index (see
        :meth:`_local_outside`), or binds it to what a function of the index declares it
        returns of one."""
        if not binding.is_call:
            return _plain_type(binding.type_path) and self._type_outside(
                fi, binding.type_path, binding.scope, strict)
        callee, result = binding.type_path, 0
        last = callee[-1]
        if last.startswith(RESULT_SEGMENT_PREFIX) and last[1:].isdigit():
            callee, result = callee[:-1], int(last[1:])
        return not strict and self._returns_outside(
            fi, callee, binding.scope, binding.at - 1 if binding.at else 0, result)

    def _returns_outside(self, fi: FileIndex, callee: NamePath, scope: int, site: int,
                         result: int = 0) -> bool:
        """Whether every function of the index ``callee`` names declares its result (the
        one at ``result``) of a type outside the index; not for a function outside it (what
        a library returns may be of the index's types: `list.get(0)`)."""
        if not callee or callee == UNKNOWN_VALUE or callee[-1] == ELEMENT_OF \
                or callee[-1][:1] == CALLBACK_OF:
            return False
        functions = self.resolve_path(fi, callee, scope, site=site)[0]
        if not functions:
            return False
        if all(f[0] == EXTERNAL_TAG for f in functions):  # `f, err := os.Open(..)`
            return all(fi.rules.outside_results(f) for f in functions)
        for function in functions[:4]:
            if function[0] != DEFINITION_TAG:
                return False
            d = self.definition(function)
            declaring = self.index(function[1])
            if d is None or declaring is None or d.kind != FUNCTION:
                return False
            written = d.signature_data[1] if len(d.signature_data) > 1 else None
            types = result_types(written) if written else []
            # (a call bound to one name has one result: `f, err := g()`'s f is g's first)
            if result >= len(types):
                return False
            square = getattr(family_plugin(declaring.family), "SQUARE_TYPE_ARGS", False)
            typed = type_path(types[result], square)
            if not typed or not self._type_outside(declaring, typed, d.parent, False):
                return False
        return True

    def _type_outside(self, fi: FileIndex, written: NamePath, scope: int, strict: bool
                      ) -> bool:
        """Whether the type path ``written`` (read in ``scope``) names types outside the index
        (a predeclared one of the family's: Go's `error`), or where not ``strict`` classes of
        the index extending one."""
        typed = self.resolve_path(fi, written, scope, want_type=True)[0]
        if not typed:  # a predeclared type, or a dot-import's (Go)
            return len(written) == 1 and (written[0] in fi.rules.builtin_types
                                          or fi.rules.outside_name(self, fi, written[0]))
        if not self._surely(fi, written, typed):
            return False
        if strict:
            return all(t[0] == EXTERNAL_TAG for t in typed)
        return all(self._class_outside(t) for t in typed)


def _plain_type(path: NamePath) -> bool:
    """Whether a binding's type path names a type as written (no call's result, element,
    callback's parameter or value of no known type)."""
    return path != UNKNOWN_VALUE and path[-1] != ELEMENT_OF and path[-1][:1] != CALLBACK_OF
