"""The elements of a collection (:class:`Elements`, a base of
:class:`~knoxidx.graph.scopes.ScopeResolver`): what indexing or ranging over a value yields
(Go's ``[]`` segments), and the types an ``ELEMENT_OF`` binding's collection holds, read from
its declared type as written, from what is pushed into it, or from what the local copies.
"""

from __future__ import annotations

from knoxidx.core.facts import CALLBACK_OF, ELEMENT_OF, TYPES_JOINER, Binding, NamePath
from knoxidx.core.symbols import DEFINITION_TAG, INSTANCE_TAG, Symbol
from knoxidx.graph.scope_reads import MAX_DEPTH, dedupe
from knoxidx.graph.type_arguments import TypeArguments, binds_type_arguments
from knoxidx.languages.registry import family_plugin
from knoxidx.parse.definitions import declared_type
from knoxidx.parse.file_index import CONSTANT, FUNCTION, TYPE, VARIABLE, FileIndex
from knoxidx.parse.name_paths import type_path

# what a Go container's type starts with (`[]T`, `[4]T`, `map[K]T`, `chan T`, `<-chan T`)
_CONTAINER_STARTS = ("[", "map", "chan", "<-")


class Elements(TypeArguments):
    """Elements of collections (see the module docstring)."""

    def elements(self, symbols: list[Symbol]) -> list[Symbol]:
        """What indexing or ranging over each value yields (a path's ``[]`` segment, which Go
        bindings write): its own type's instance where that is a struct or interface, for Go
        reads a container's declared type as its element's (``[]*T`` as T: name_paths'
        _CONTAINER_PREFIX) and neither can be ranged over; nothing for a named type of
        another kind: see :meth:`_named_elements`."""
        out: list[Symbol] = []
        for symbol in symbols[:4]:
            if symbol[0] == DEFINITION_TAG and self.definition(symbol).kind in (VARIABLE,
                                                                                CONSTANT):
                out.extend(self.elements(self.value_type(symbol)))
            elif symbol[0] == INSTANCE_TAG:
                out.extend(self._named_elements(symbol)
                           if self.definition(symbol).kind == TYPE else [symbol])
        return dedupe(out)

    def _named_elements(self, symbol: Symbol) -> list[Symbol]:
        """An element of a value of the named type ``symbol`` (not a struct or interface),
        where a container's declared type reads as its element's: `[]T` and `T` are both T. A
        value whose elements have no methods (`type RefSpec string`, `type Hash [20]byte`)
        cannot be what a member is read on, so the container was `[]T` and the element a T;
        a named container of a named type (`type byKind []*Item`) is indexed itself far more
        often than put in another one (`a[i]` in its sort methods): the element is an Item."""
        d = self.definition(symbol)
        if d.type_hint:  # an alias whose target is not the project's: nothing known of it
            return []
        underlying = d.signature[len(d.name):]
        if underlying.startswith("["):  # type parameters: `List[T any] []T`
            depth = 0
            for i, char in enumerate(underlying):
                depth += (char == "[") - (char == "]")
                if depth == 0:
                    underlying = underlying[i + 1:]
                    break
        underlying = underlying.strip()
        if underlying.startswith(_CONTAINER_STARTS):
            element = type_path(underlying, True)
            if element:
                fi = self.defining(symbol[1])
                found = self.binding_type(fi, Binding(d.parent, "", element, False))
                if found:
                    return found
        return [symbol]

    def _collection(self, fi: FileIndex, path: NamePath, scope: int) -> NamePath:
        """The path to the collection whose elements ``path``'s are: past calls that keep the
        receiver's elements (``rules.elements_kept``, `xs.filter(..)`), and a local of the
        function holding a call's result to that call (`const xs = this.getAll()`)."""
        kept = fi.rules.elements_kept
        while len(path) > 1 and path[-1].endswith("()") and path[-1][:-2] in kept:
            path = path[:-1]
        if len(path) == 1 and scope >= 0:
            local = fi.bindings.get((scope, path[0]))
            if local is not None and local.is_call and local.type_path \
                    and local.type_path[-1][:1] != CALLBACK_OF:
                path = (*local.type_path[:-1], local.type_path[-1] + "()")
                while len(path) > 1 and path[-1][:-2] in kept:
                    path = path[:-1]
        return path

    def _element_types(self, fi: FileIndex, binding: Binding, depth: int) -> list[Symbol]:
        """The types of an element of the collection `binding.type_path[:-1]` denotes (see
        ``ELEMENT_OF``), read from its declared type as written: the parameter's of that name
        of the binding's function, else the field's it resolves to or, when it is called,
        the function's return type (the family's ``element_type`` reads the element)."""
        collection = binding.type_path[:-1]
        kept = fi.rules.elements_kept  # `xs.concat()`: xs's elements
        while len(collection) > 1 and collection[-1].endswith("()") \
                and collection[-1][:-2] in kept:
            collection = collection[:-1]
        called = collection[-1].endswith("()")
        if called:
            collection = (*collection[:-1], collection[-1][:-2])
        written: list[tuple[FileIndex, int, str]] = []  # (file, scope, declared type)
        function = fi.facts.defs[binding.scope] if binding.scope >= 0 else None
        if len(collection) == 1 and not called and function is not None \
                and function.kind == FUNCTION and function.signature_data:
            written.extend((fi, binding.scope, declared)
                           for name, declared, *_ in function.signature_data[0]
                           if name == collection[0] and declared)
        if not written and not called and len(collection) == 1 \
                and binds_type_arguments(fi.family):
            # `List<Tree> ts = ..`: the type arguments its declaration writes
            local = self._local_written(fi, collection[0], binding.scope)
            if local is not None and local[1]:
                where, s, _ = local[1][0]
                arguments = ", ".join(text for _, _, text in local[1])
                written.append((where, s, f"{local[0]}<{arguments}>"))
        if not written and not called:
            held = self._held_elements(fi, collection, binding.scope, depth)
            if held:
                return held
        if not written:
            found, _ = self.resolve_path(fi, collection, binding.scope)
            for symbol in found[:4]:
                if symbol[0] != DEFINITION_TAG:
                    continue
                d = self.definition(symbol)
                if called and d.kind == FUNCTION and d.signature_data and d.signature_data[1]:
                    written.append((self.defining(symbol[1]), d.parent, d.signature_data[1]))
                elif not called and d.kind in (VARIABLE, CONSTANT):
                    written.append((self.defining(symbol[1]), d.parent, d.signature))
        out: list[Symbol] = []
        for declaring, scope, declared in written:
            element = declaring.rules.element_type(declared)
            if element:
                path = declared_type(family_plugin(declaring.family), element)
                if path:
                    out.extend(self.binding_type(declaring, Binding(scope, "", path, False),
                                                 depth + 1))
            else:  # an iterator type of the project's own
                for item in declaring.rules.iterator_items(self, declaring, scope, declared)[:4]:
                    out.extend(self.instances_of(item))
        return dedupe(out)

    def _held_elements(self, fi: FileIndex, collection: NamePath, scope: int, depth: int
                       ) -> list[Symbol]:
        """The types of the elements of a local's or a field's collection where a binding
        named for it says them (see ``ELEMENT_OF``: `xs.push(new T())`), or of the path a
        local copies (`const xs = this.xs`)."""
        if len(collection) > 1:  # a field of what the path before it denotes
            out: list[Symbol] = []
            owners, _ = self.resolve_path(fi, collection[:-1], scope)
            for owner in owners[:4]:
                if owner[0] == INSTANCE_TAG:
                    out.extend(self._field_elements(owner[1], owner[2], collection[-1], depth))
            return dedupe(out)
        name, defs, s = collection[0], fi.facts.defs, scope
        while True:
            # what a function stores in its local collection (`xs.push(new T())`) is not
            # known in the functions nested in it (TypeScript's evolving `[]` stays `any[]`)
            held = fi.bindings.get((s, name + ELEMENT_OF)) if s == scope or s < 0 else None
            if held is not None:
                return self._agreed_elements(fi, held, depth)
            local = fi.bindings.get((s, name))
            if local is not None:
                copied = local.type_path
                if local.is_call and len(copied) > 1 and copied[-1] in fi.rules.elements_kept:
                    copied = copied[:-1]  # `const xs = this.xs.concat()`: the same elements
                elif local.is_call and fi.rules.called_locals_hold_elements \
                        and _names_a_value(copied[-1]) and all(map(_names_a_value, copied)):
                    # `let w = f(); if let Some(w) = w`: the elements of f's result
                    return self._element_types(
                        fi, Binding(s, "", (*copied[:-1], copied[-1] + "()", ELEMENT_OF), False),
                        depth + 1)
                elif local.is_call:
                    return []
                if not all(map(_names_a_value, copied)):
                    return []
                return self.binding_type(fi, Binding(s, "", (*copied, ELEMENT_OF), False),
                                         depth + 1)
            if s < 0:
                return []
            d = defs[s]
            if d.kind == FUNCTION and d.signature_data and any(
                    p[0] == name for p in d.signature_data[0]):
                return []  # a parameter of no known elements hides what is outside
            s = d.parent

    def _field_elements(self, path: str, index: int, name: str, depth: int) -> list[Symbol]:
        """The types of the elements of the field ``name`` of the class at (path, index) or
        of its bases, where a binding says them (see :meth:`_held_elements`)."""
        fi = self.index(path)
        if fi is None or depth > MAX_DEPTH:
            return []
        held = fi.attribute_binding(index, name + ELEMENT_OF)
        if held is not None:
            return self._agreed_elements(fi, held, depth)
        for base in self.bases_of(path, index):
            found = self._field_elements(base[1], base[2], name, depth + 1)
            if found:
                return found
        return []

    def _agreed_elements(self, fi: FileIndex, held: Binding, depth: int) -> list[Symbol]:
        """The types ``held`` says a collection's elements are, none where the scope's other
        bindings of them say other types (objects of several classes pushed)."""
        typed = self.binding_type(fi, held, depth + 1)
        for other in fi.rebindings.get((held.scope, held.name), ()):
            if set(self.binding_type(fi, other, depth + 1)) != set(typed):
                return []
        return typed


def _names_a_value(segment: str) -> bool:
    """Whether a binding's path segment names a value read (no call, element, joined type
    or callback's parameter): a copy's path (`const xs = this.xs`)."""
    return segment != ELEMENT_OF and segment != TYPES_JOINER and segment[-1:] != ")" \
        and segment[:1] != CALLBACK_OF


def indexes_elements(family: str) -> bool:
    """Whether the family's paths carry ``[]`` segments that resolve_path follows (Go)."""
    return bool(getattr(family_plugin(family), "INDEXES_ELEMENTS", False))
