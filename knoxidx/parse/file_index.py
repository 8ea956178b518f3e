"""What the resolver knows of one file: its facts indexed by scope and name (definitions,
imports, bindings, base classes), with the answers it asks of them again and again kept per
file. Built once per file a resolver loads; it reads nothing else."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from operator import attrgetter
from typing import Any

from knoxidx.core.facts import (
    BASE_KINDS,
    ELEMENT_OF,
    TYPE_ARGUMENTS,
    UNKNOWN_VALUE,
    Binding,
    FileFacts,
    Import,
    NamePath,
    Reference,
    load_reference_rows,
)
from knoxidx.core.model import NodeKind, node_id

# Plain strings in the hot paths (here and in the resolver): an Enum member's .value is a
# descriptor call every time.
FUNCTION = NodeKind.FUNCTION.value
CLASS = NodeKind.CLASS.value
INTERFACE = NodeKind.INTERFACE.value
TYPE = NodeKind.TYPE.value
VARIABLE = NodeKind.VARIABLE.value
CONSTANT = NodeKind.CONSTANT.value
MODULE = NodeKind.MODULE.value
TYPE_KINDS = frozenset({CLASS, INTERFACE, TYPE})
CALLER_KINDS = frozenset({FUNCTION, CLASS, INTERFACE, TYPE})
_AT = attrgetter("at")
# what the children of a scope file a function it assigns to the receiver's member under,
# before its name (see FileIndex.children)
ASSIGNED_MEMBER = "."


class FileIndex:
    """Lookup tables over one file's facts, built once per resolver."""

    __slots__ = (
        "_attributes",
        "_bases",
        "_block_functions",
        "_callers",
        "_class_entry",
        "_function_bound",
        "_ids",
        "_local_names",
        "_outside",
        "_refs",
        "_walk_needed",
        "assigns_members",
        "bindings",
        "children",
        "facts",
        "family",
        "file_key",
        "imports",
        "ordered",
        "path",
        "placed_names",
        "placed_arguments",
        "rebindings",
        "rules",
        "wildcards",
    )

    def __init__(self, facts: FileFacts, family: str, rules: Any,
                 refs: bytes | None = None, ids: tuple[int, ...] | None = None) -> None:
        """``refs``: every reference of the file, still marshalled, when ``facts`` came as an
        interface (``facts.load_interface``: its ``refs`` are the base-class ones only).
        ``ids``: its definitions' node ids, when the interface had them (else hashed on first
        use)."""
        self.facts = facts
        self._refs = refs
        self.path = facts.path
        self.file_key = "file:" + facts.path  # the lookup key reading this file records
        self.family = family
        self.rules = rules
        defs = facts.defs
        children: dict[tuple[int, str], list[int]] = defaultdict(list)
        hide_methods = rules.methods_outside_module_scope
        # `this.clear = function () {..}` in a constructor: a member of the class, no name
        # of the constructor's scope (kept apart, under ASSIGNED_MEMBER before its name)
        receivers = tuple(f"{r}." for r in rules.self_names) if rules.constructor_name else ()
        self.assigns_members = False  # whether any definition is filed so
        for i, d in enumerate(defs):
            if hide_methods and d.owner and d.parent < 0:
                continue  # a Go receiver's method: no name of the package scope
            if receivers and d.parent >= 0 and d.signature.startswith(receivers) \
                    and d.kind == FUNCTION:
                children[(d.parent, ASSIGNED_MEMBER + d.name)].append(i)
                self.assigns_members = True
                continue
            children[(d.parent, d.name)].append(i)
        self._ids: list[int] | None = list(ids) if ids is not None else None
        self.children = children
        self._block_functions: dict[str, list[int]] | None = None
        self.bindings: dict[tuple[int, str], Binding] = {}
        # the later bindings of a name that say something else than its first (`x = Foo()`, then
        # `x = x.asc()`): where a family's rebinding_changes_type, they must agree on the type
        self.rebindings: dict[tuple[int, str], list[Binding]] = {}
        # the type arguments a declaration of a local bound several ways writes, by the
        # local's scope, name and the declaration's place (see reaching)
        self.placed_arguments: dict[tuple[int, str, int], Binding] = {}
        previous: Binding | None = None
        for b in facts.bindings:
            if b.at and b.name.endswith(TYPE_ARGUMENTS):
                self.placed_arguments[(b.scope, b.name[: -len(TYPE_ARGUMENTS)], b.at)] = b
            first = self.bindings.setdefault((b.scope, b.name), b)
            if (b.type_path, b.is_call) != (first.type_path, first.is_call):
                self.rebindings.setdefault((b.scope, b.name), []).append(b)
                if previous is not None and previous.at and previous.scope == b.scope \
                        and b.name == previous.name + TYPE_ARGUMENTS:
                    # `List<Tree> l`, then `List<Sym> l`: declarations apart in their type
                    # arguments alone are placed as well (see reaching)
                    rebound = self.rebindings.setdefault((b.scope, previous.name), [])
                    if previous not in rebound:
                        rebound.append(previous)
            previous = b
        # the locals bound several ways whose bindings are placed (Binding.at): each one's
        # bindings in the order they take effect, with those places to bisect, and those of
        # them that declare its type (see reaching)
        self.ordered: dict[tuple[int, str],
                           tuple[list[int], list[Binding], tuple[Binding, ...]]] = {}
        # their names, and as called (`f()`): a reference whose head is one is resolved
        # with its site (see reaching)
        self.placed_names: frozenset[str] = frozenset()
        if self.rebindings or self.rules.places_every_local:
            self._order(facts.bindings)
        self.imports: dict[tuple[int, str], list[Import]] = defaultdict(list)
        self.wildcards: list[Import] = []
        for imp in facts.imports:
            if imp.name == "*":
                self.wildcards.append(imp)
            elif imp.alias and not imp.reexport:  # an export names, it binds nothing locally
                self.imports[(imp.scope, imp.alias)].append(imp)
        self._bases: dict[int, list[Reference]] | None = None
        self._attributes: dict[tuple[int, str], Binding] | None = None
        self._local_names: frozenset[str] | None = None
        self._walk_needed: dict[int, bool] = {}
        self._outside: dict[int, bool] = {}
        self._function_bound: frozenset[str] | None = None
        self._class_entry: dict[int, int] = {}
        self._callers: dict[int, int] = {}

    def _order(self, bindings: tuple[Binding, ...]) -> None:
        """Fill :attr:`ordered` and :attr:`placed_names` (see ``__init__``)."""
        wanted = {key for key, rebound in self.rebindings.items()
                  if "." not in key[1] and rebound[0].at}
        if self.rules.places_every_local:
            # a name bound once yet placed (Go's `x := x(v)`: its own value reads no local;
            # Java's `for (T x : xs)`: no read outside the loop does)
            wanted |= {key for key, b in self.bindings.items()
                       if b.at and key not in self.rebindings and "." not in key[1]}
        if not wanted:
            return
        groups: dict[tuple[int, str], list[Binding]] = defaultdict(list)
        for b in bindings:
            if (b.scope, b.name) in wanted:
                groups[(b.scope, b.name)].append(b)
        # (a declaration is no statement in a block-scoped family, where each binding declares)
        declares = not self.rules.bindings_block_scoped
        for key, group in groups.items():
            group.sort(key=_AT)
            # (a loop's element, `for x in xs`, declares no type: x may be bound otherwise)
            self.ordered[key] = ([b.at for b in group], group, tuple([
                b for b in group if declares and not b.is_call and b.block_end
                and b.type_path != UNKNOWN_VALUE and b.type_path[-1] != ELEMENT_OF]))
        names = {name for _, name in wanted}
        self.placed_names = frozenset(names | {name + "()" for name in names})

    def reaching(self, s: int, name: str, scope: int, site: int) -> tuple[Binding, ...] | None:
        """The bindings of the local ``name`` of the function at ``s`` that may reach a read
        of it at ``site`` (a ``point``) in ``scope``: where locals are block-scoped
        (``rules.bindings_block_scoped``), the last one before the site whose block holds it,
        none where no such one does (the name is no local there); else the ones before the
        site back to the first that runs for sure before it (one outside a branch the site
        is not in), and the later ones in a loop around the site that the former do not
        cover. Where a statement declares its type (Python's `x: T`, not a parameter's:
        outside every block of the function), whatever else it is bound to, the ones that do
        wherever it is read, as a type checker has it. None where that is not known: the name
        is not placed in ``s``, or a function's local is read in a function inside it
        (called later, it may see any)."""
        entry = self.ordered.get((s, name))
        if entry is None:
            return None
        return self._reached(entry, s, scope, site)

    def _reached(self, entry: tuple[list[int], list[Binding], tuple[Binding, ...]], s: int,
                 scope: int, site: int) -> tuple[Binding, ...] | None:
        """:meth:`reaching`, of the local whose :attr:`ordered` entry is ``entry``."""
        ats, group, declared = entry
        if declared:
            return declared
        last = bisect_right(ats, site) - 1
        if self.rules.bindings_block_scoped:
            for i in range(last, -1, -1):
                b = group[i]
                if not b.block_end or site < b.block_end:
                    return (b,)
            return ()
        if s != scope:
            return None
        out: list[Binding] = []
        definite: Binding | None = None
        for i in range(last, -1, -1):
            b = group[i]
            out.append(b)
            if not b.block_end or site < b.block_end:
                definite = b
                break
        for b in group[last + 1:]:
            if b.loop and b.loop <= site and (definite is None or definite.at < b.loop):
                out.append(b)
        return tuple(out) if out else None

    def reaching_one(self, s: int, name: str, scope: int, site: int,
                     binding: Binding) -> Binding | None:
        """Of the local ``name`` that the function at ``s`` binds (``binding``, its first
        binding), the one binding that reaches a read at ``site`` in ``scope``: ``binding``
        where the name is bound once and not placed; None where several may reach, none does,
        or which is not known."""
        if (s, name) not in self.ordered:
            return binding
        reached = self.reaching(s, name, scope, site) if site else None
        return reached[0] if reached and len(reached) == 1 else None

    def reach_key(self, name: str, scope: int, site: int) -> tuple[int, ...] | None:
        """What tells apart the reads of ``name`` (a reference's head, maybe called) in
        ``scope`` at different sites: the places of the bindings that reach ``site``
        (:meth:`reaching`) from the innermost function around ``scope`` placing ``name``;
        None where none does, or where it is not known which reach."""
        name = name.removesuffix("()")
        defs = self.facts.defs
        ordered = self.ordered
        s = scope
        while s >= 0:
            entry = ordered.get((s, name))
            # (one lookup: with every Go and Java local placed, most reads come here)
            if entry is not None:
                reached = self._reached(entry, s, scope, site)
                if reached == () and self.rules.places_every_local:
                    # a read outside the block of every declaration of it, or in the value of
                    # its declaration (Go's `x := x(v)`), each one placed: no local there
                    return ()
                # (none in scope there: a declaration the index has no type of, read as the
                # name's bindings are without a site)
                return tuple([b.at for b in reached]) if reached else None
            s = defs[s].parent
        return None

    # Made on first use: most files a resolver loads are only consulted (a name looked up in
    # them), and never need node ids or base lists.

    @property
    def block_functions(self) -> dict[str, list[int]]:
        """Names the module scope declares as several functions where declarations live in
        blocks the index does not model (JavaScript's `const f = () => ..` in each test's
        callback): name -> those definitions, in the file's order. Made on first use."""
        if self._block_functions is None:
            self._block_functions = {} if not self.rules.classes_block_scoped else {
                name: hit for (scope, name), hit in self.children.items()
                if scope < 0 and len(hit) > 1
                and all(self.facts.defs[i].kind == FUNCTION for i in hit)}
        return self._block_functions

    @property
    def ids(self) -> list[int]:
        """Node ids of the definitions, by index."""
        if self._ids is None:
            self._ids = definition_ids(self.facts)
        return self._ids

    def reference_rows(self) -> tuple[tuple[str, NamePath, int, int, int, int,
                                            tuple[str, ...]], ...]:
        """Every reference of the file, as ``Reference``'s fields in order (kind, path, scope,
        line, col, arity, argument types): the rows marshal decodes, without a record made of
        each (a record each cost resolution 5 % more instructions). Decoded on each call, so that a resolver's
        cache of indexes holds none of them."""
        return self.facts.refs if self._refs is None else load_reference_rows(self._refs)

    @property
    def bases(self) -> dict[int, list[Reference]]:
        """Extends/implements references by the definition they belong to."""
        if self._bases is None:
            bases: dict[int, list[Reference]] = defaultdict(list)
            for ref in self.facts.refs:
                if ref.kind in BASE_KINDS and ref.scope >= 0:
                    bases[ref.scope].append(ref)
            self._bases = bases
        return self._bases

    def attribute_binding(self, class_index: int, name: str) -> Binding | None:
        """``self.name = ...`` set in a method of the class at ``class_index``."""
        if self._attributes is None:
            table: dict[tuple[int, str], Binding] = {}
            defs = self.facts.defs
            for b in self.facts.bindings:
                receiver, dot, attr = b.name.partition(".")
                if dot and b.scope >= 0 and receiver in self.rules.self_names:
                    table.setdefault((defs[b.scope].parent, attr), b)
            self._attributes = table
        return self._attributes.get((class_index, name))

    def walk_needed(self, name: str, scope: int) -> bool:
        """Whether a lexical lookup of ``name`` from ``scope`` can stop anywhere before the
        module scope. It cannot when nothing inside a definition binds ``name`` (no nested
        definition, binding or import of it, and not the receiver's name) and no enclosing
        class lends its members: most bare names read in a function are its parameters and
        locals, or module-level names, and walking the scopes for them found nothing."""
        names = self._local_names
        if names is None:
            local = {name for scope_, name in self.children if scope_ >= 0}
            # (a collection's elements' binding names it: `xs[]`, see ELEMENT_OF)
            local.update(name.removesuffix(ELEMENT_OF) for scope_, name in self.bindings
                         if scope_ >= 0)
            local.update(name for scope_, name in self.imports if scope_ >= 0)
            local.update(self.rules.self_names)
            names = self._local_names = frozenset(local)
        if name in names:
            return True
        if scope < 0 or not self.rules.class_members_visible:
            return False
        needed = self._walk_needed.get(scope)
        if needed is None:
            defs = self.facts.defs
            s = defs[scope].parent
            while s >= 0 and defs[s].kind not in TYPE_KINDS:
                s = defs[s].parent
            needed = self._walk_needed[scope] = s >= 0
        return needed

    def class_entry(self, name: str, scope: int) -> int:
        """Where a lexical lookup of ``name`` from ``scope`` (a function, or a class whose
        body reads it) first meets a scope other than a function's, when that is a class no
        function encloses; -1 otherwise (or when some
        function binds ``name``, or is the receiver). The function scopes on the way bind no
        such name and record nothing (:meth:`Resolver.missed` exempts them), so the lookup
        from ``scope`` is the one from that class's scope, whichever method reads the name."""
        bound = self._function_bound
        if bound is None:
            defs = self.facts.defs
            local = {name for scope_, name in self.children
                     if scope_ >= 0 and defs[scope_].kind == FUNCTION}
            local.update(name.removesuffix(ELEMENT_OF) for scope_, name in self.bindings
                         if scope_ >= 0 and defs[scope_].kind == FUNCTION)
            local.update(name for scope_, name in self.imports
                         if scope_ >= 0 and defs[scope_].kind == FUNCTION)
            local.update(self.rules.self_names)
            bound = self._function_bound = frozenset(local)
        if name in bound:
            return -1
        entry = self._class_entry.get(scope)
        if entry is None:
            defs = self.facts.defs
            entry = -1
            if defs[scope].kind == FUNCTION:
                s = defs[scope].parent
                while s >= 0 and defs[s].kind not in TYPE_KINDS:
                    s = defs[s].parent
                if s >= 0 and self.outside_functions(s):
                    entry = s
            elif defs[scope].kind in TYPE_KINDS and self.outside_functions(scope):
                # read in the class body itself (a static block, a field's initializer): its
                # members as a method sees them, every overload and the inherited ones
                entry = scope
            self._class_entry[scope] = entry
        return entry

    def outside_functions(self, scope: int) -> bool:
        """Whether no function encloses ``scope`` (itself not counted)."""
        outside = self._outside.get(scope)
        if outside is None:
            defs = self.facts.defs
            s = defs[scope].parent
            while s >= 0 and defs[s].kind != FUNCTION:
                s = defs[s].parent
            outside = self._outside[scope] = s < 0
        return outside

    def caller(self, scope: int) -> int:
        """The innermost function or class-like definition enclosing ``scope`` (itself
        included), or -1: where a call read in ``scope`` comes from. Kept per scope."""
        found = self._callers.get(scope)
        if found is None:
            defs = self.facts.defs
            s = scope
            while s >= 0 and defs[s].kind not in CALLER_KINDS:
                s = defs[s].parent
            found = self._callers[scope] = s
        return found

    def class_of(self, scope: int) -> int:
        """The innermost class-like definition enclosing ``scope`` (or -1)."""
        defs = self.facts.defs
        s = scope
        while s >= 0:
            if defs[s].kind in TYPE_KINDS:
                return s
            s = defs[s].parent
        return -1


def definition_ids(facts: FileFacts) -> list[int]:
    """Stable node ids of a file's definitions: path + qualified name + ordinal among
    same-named siblings (overloads), never line numbers."""
    seen: dict[str, int] = defaultdict(int)
    ids: list[int] = []
    path = facts.path
    for d in facts.defs:
        ordinal = seen[d.qualname]
        seen[d.qualname] = ordinal + 1
        ids.append(node_id("def", path, d.qualname, str(ordinal)))
    return ids
