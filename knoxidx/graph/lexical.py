"""What a bare name denotes from a scope of a file (:class:`LexicalScopes`, a base of
:class:`~knoxidx.graph.scopes.ScopeResolver`): the lexical scopes from the reference's
outwards (a function's locals, a class's members where the family sees them), then the module
scope and the family's fallbacks (package scope, wildcard imports, builtins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knoxidx.core.facts import Import
from knoxidx.core.symbols import DEFINITION_TAG, INSTANCE_TAG, Symbol
from knoxidx.graph.scope_reads import ScopeReads, dedupe
from knoxidx.parse.file_index import (
    CLASS,
    CONSTANT,
    FUNCTION,
    MODULE,
    TYPE_KINDS,
    VARIABLE,
    FileIndex,
)

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolutionRules


class LexicalScopes(ScopeReads):
    """What a bare name denotes (see the module docstring)."""

    def lookup(
        self, fi: FileIndex, name: str, scope: int, want_type: bool = False,
        called: bool = False, site: int = 0
    ) -> tuple[list[Symbol], bool]:
        """Lexical lookup of a bare name: enclosing scopes, then the module, then the family's
        fallbacks (package scope, wildcard imports, builtins). ``want_type``: the name is in a
        type position, so values (fields, variables, locals) do not shadow it; ``called``: it
        is called, so in a family whose locals cannot be (Java) they do not shadow it;
        ``site``: where it is read (see resolve_path)."""
        if not fi.walk_needed(name, scope):
            # straight to the module scope, recording what the walk would have: the miss in
            # the reference's own scope when that is no function body
            if scope >= 0:
                self.missed(fi, scope, name)
            return self.memo(("module-scope", fi.path, name, want_type),
                             self._module_scope, fi, name, want_type), False
        rules: ResolutionRules = fi.rules
        if rules.class_members_visible and scope >= 0:
            cls = fi.class_entry(name, scope)
            if cls >= 0:
                return self._class_scopes_memo(fi, cls, name, want_type), False
        return self._walk(fi, name, scope, want_type, called, site)

    def _walk(self, fi: FileIndex, name: str, scope: int, want_type: bool,
              called: bool = False, site: int = 0) -> tuple[list[Symbol], bool]:
        """:meth:`lookup` where neither of its shortcuts applies: the scopes from ``scope``
        outwards, then the module scope."""
        defs = fi.facts.defs
        rules: ResolutionRules = fi.rules
        skip_bindings = want_type or (called and not rules.locals_callable)
        s = scope
        while s >= 0:
            d = defs[s]
            # an inline module (Rust `mod parsing { use ...; }`, a TypeScript namespace) binds
            # names for what it holds, as a function does
            if d.kind == FUNCTION or d.kind == MODULE or s == scope:
                binding = None if skip_bindings else fi.bindings.get((s, name))
                # (a variable's value binds a function literal's parameters: Go's extraction)
                if binding is not None and d.kind in (FUNCTION, VARIABLE, CONSTANT):
                    reached = fi.reaching(s, name, scope, site) if site else None
                    if reached is None:
                        typed = self.local_type(fi, binding)
                        return (typed, True) if typed else ([], False)
                    if reached:
                        typed = self.reached_type(fi, reached)
                        return (typed, True) if typed else ([], False)
                    # no binding of it in scope at the site: no local of this function there
                found = self._scope_entry(fi, s, name, want_type)
                if found is not None:
                    if s == scope and d.kind in TYPE_KINDS and name == d.name:
                        # a class's own name inside it is the class (as _class_scope has
                        # it), not the member named like it: a Java constructor
                        return [(DEFINITION_TAG, fi.path, s)], False
                    return found, False
                if d.kind == FUNCTION and name in rules.self_names and rules.self_binds_anywhere:
                    cls = fi.class_of(s)
                    if cls >= 0:
                        return [(INSTANCE_TAG, fi.path, cls)], True
            elif d.kind in TYPE_KINDS and rules.class_members_visible:
                if fi.outside_functions(s):
                    return self._class_scopes_memo(fi, s, name, want_type), False
                members = self._class_scope(fi, s, name, want_type)
                if members:
                    return members, False
            s = d.parent
        return self.memo(("module-scope", fi.path, name, want_type),
                         self._module_scope, fi, name, want_type), False

    def _class_scope(self, fi: FileIndex, s: int, name: str, want_type: bool) -> list[Symbol]:
        """``name`` as the class at ``s`` of ``fi`` sees it: itself, or one of its members."""
        if name == fi.facts.defs[s].name:  # a class's own name inside it is the class
            return [(DEFINITION_TAG, fi.path, s)]
        # member()'s answer for a class, without its dispatch (it would read the class's
        # definition to learn its kind, and record this file, which class_member does)
        members = self.class_member(fi.path, s, name)
        if want_type:
            members = [m for m in members if self.definition(m).kind in TYPE_KINDS]
        return members

    def _class_scopes_memo(self, fi: FileIndex, s: int, name: str,
                           want_type: bool) -> list[Symbol]:
        """:meth:`_class_scopes`, once per (class, name): the walk from a class depends on
        neither the method the name is read in nor the reference."""
        return self.memo(("class-scope", fi.path, s, name, want_type),
                         self._class_scopes, fi, s, name, want_type)

    def _class_scopes(self, fi: FileIndex, s: int, name: str, want_type: bool) -> list[Symbol]:
        """The lexical walk from the class at ``s``, which no function encloses, up to the
        module scope (:meth:`lookup`'s, less the function scopes it cannot meet)."""
        defs = fi.facts.defs
        while s >= 0:
            d = defs[s]
            if d.kind in TYPE_KINDS:
                members = self._class_scope(fi, s, name, want_type)
                if members:
                    return members
            s = d.parent
        return self.memo(("module-scope", fi.path, name, want_type),
                         self._module_scope, fi, name, want_type)

    def _module_scope(self, fi: FileIndex, name: str, want_type: bool) -> list[Symbol]:
        found = self._scope_entry(fi, -1, name, want_type)
        if found is not None:
            return found
        return fi.rules.module_fallback(self, fi, name)

    def _scope_entry(
        self, fi: FileIndex, scope: int, name: str, want_type: bool
    ) -> list[Symbol] | None:
        """A definition or import binding ``name`` directly in ``scope``. An import wins over a
        variable of the same name (``const lib = require("./lib")`` is both)."""
        hit = fi.children.get((scope, name))
        imports = fi.imports.get((scope, name))
        if not hit and not imports:
            self.missed(fi, scope, name)
        if hit:
            if len(hit) > 1 and fi.rules.classes_block_scoped and sum(
                    fi.facts.defs[i].kind == CLASS for i in hit) > 1:
                return []  # same-named classes in blocks the index does not model: no guess
            kind = fi.facts.defs[hit[-1]].kind
            value = kind in (VARIABLE, CONSTANT) or kind == FUNCTION and want_type \
                and fi.rules.declared_types_name_items  # (Rust's `fmt::Formatter` in `fn fmt`)
            if not (value and (imports or want_type)):
                return [(DEFINITION_TAG, fi.path, hit[-1])]
        if imports:
            return self._bind_imports(fi, imports)
        return None

    def _bind_imports(self, fi: FileIndex, imports: list[Import]) -> list[Symbol]:
        imp = imports[-1]  # the last import of a name wins, as at run time
        return self.memo(("import", fi.path, imp),
                         lambda: dedupe(fi.rules.import_binding(self, fi, imp)))
