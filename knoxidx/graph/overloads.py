"""Which of a name's overloads a call means: by what it is used as (a method or a field), by
how many arguments it passes, by the static types of those whose type is certain (the most
specific first, fixed arity before varargs where the family says so), and where none of a
class's own fit, by the overloads its bases declare, which a subclass's do not hide.
:class:`Overloads` is a base of :class:`knoxidx.graph.resolve.Resolver`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from knoxidx.core.facts import RefKind
from knoxidx.core.symbols import DEFINITION_TAG, Symbol
from knoxidx.graph.lookups import Workspace
from knoxidx.graph.scopes import MAX_DEPTH, ScopeResolver
from knoxidx.parse.file_index import FUNCTION, FileIndex

if TYPE_CHECKING:
    from knoxidx.languages.protocol import ResolutionRules


class Overloads(ScopeResolver):
    """The resolver's choice among overloads (see the module's head)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        # (least, most) arguments a function takes and its parameters' types, None where
        # unknown (see _fitting)
        self._parameters: dict[Symbol, tuple[int, int, tuple[str, ...]] | None] = {}

    def _by_use(self, targets: list[Symbol], kind: str) -> list[Symbol]:
        """Members of one name that are a method and a field (Java keeps them apart, a Rust
        getter is named after its field): a call means the methods, a read the fields."""
        functions: list[Symbol] = []
        others: list[Symbol] = []
        for target in targets:
            d = self.definition(target)
            (functions if d is not None and d.kind == FUNCTION else others).append(target)
        if not functions or not others:
            return targets
        return others if kind == RefKind.VALUE else functions

    def _by_arity(self, targets: list[Symbol], name: str, arity: int, rules: ResolutionRules
                  ) -> list[Symbol]:
        """The overloads among ``targets`` that take ``arity`` arguments; where none of a
        class's do, those of its bases (which a subclass's overloads of the name do not
        hide, as they do in Python's MRO). Nothing where no declaration fits: the call is
        of a method outside the index (an overload in a library's base class)."""
        fitting = self._fitting(targets, name, arity, rules)
        if fitting or not self._declared_in_class(targets):
            return fitting
        levels = self._inherited_levels(targets, name, arity, rules)
        return levels[0] if levels else []

    def _inherited_levels(self, targets: list[Symbol], name: str, arity: int,
                          rules: ResolutionRules) -> list[list[Symbol]]:
        """:meth:`_inherited_overloads`, once per (targets, name, arity)."""
        levels: list[list[Symbol]] = self.memo(
            ("inherited-overloads", tuple(targets), name, arity),
            lambda: list(self._inherited_overloads(targets, name, arity, rules)))
        return levels

    def _inherited_overloads(self, targets: list[Symbol], name: str, arity: int,
                             rules: ResolutionRules) -> Iterator[list[Symbol]]:
        """The overloads of ``name`` taking ``arity`` arguments that the classes declaring
        ``targets`` inherit, nearest bases first: for each level of bases that has some, those
        (a base without a fitting one of its own is passed through to its bases)."""
        seen: set[Symbol] = set()
        classes = [(DEFINITION_TAG, t[1], self.definition(t).parent) for t in targets]
        for _ in range(MAX_DEPTH):
            bases = [b for c in classes for b in self.bases_of(c[1], c[2]) if b not in seen]
            if not bases:
                return
            seen.update(bases)
            classes = []
            fitting: list[Symbol] = []
            for base in bases:
                members = self.class_member(base[1], base[2], name)
                fitting.extend(self._fitting(members, name, arity, rules))
                # a base without a fitting one of its own: its bases in turn
                if members and self._declared_in_class(members):
                    classes.extend((DEFINITION_TAG, m[1], self.definition(m).parent)
                                   for m in members)
            if fitting:
                yield _dedupe_symbols(fitting)

    def _inherited_by_types(self, fi: FileIndex, scope: int, targets: list[Symbol], name: str,
                            arity: int, argument_types: tuple[str, ...],
                            rules: ResolutionRules) -> list[Symbol]:
        """``targets`` (a class's overloads of ``name`` that take ``arity`` arguments), or
        where the arguments' certain types fit none of them, the nearest inherited overloads
        they fit: a class's method hides no overload of its bases with other parameters
        (`scan(JCTree)` declared beside TreeScanner's `scan(List)`)."""
        if not self._declared_in_class(targets):
            return targets
        levels = self._inherited_levels(targets, name, arity, rules)
        if not levels or any(self._takes(fi, scope, t, argument_types, rules)
                             for t in targets):
            return targets
        for inherited in levels:
            fitting = [t for t in inherited if self._takes(fi, scope, t, argument_types, rules)]
            if fitting:
                return fitting
        return targets

    def _takes(self, fi: FileIndex, scope: int, target: Symbol,
               argument_types: tuple[str, ...], rules: ResolutionRules) -> bool:
        """Whether the function ``target`` may take arguments of these types (True where its
        parameters are not known)."""
        parameters = self._parameters.get(target)
        return parameters is None or self._arguments_fit(fi, scope, target, parameters,
                                                         argument_types, rules)

    def _overloads(self, targets: list[Symbol]) -> bool:
        """Whether the targets are methods declared in one class."""
        owners = set()
        for target in targets:
            d = self.definition(target)
            if d is None or d.kind != FUNCTION or d.parent < 0:
                return False
            owners.add((target[1], d.parent))
        return len(owners) == 1

    def _declared_in_class(self, targets: list[Symbol]) -> bool:
        """Whether every target is a method of a class (so its bases have overloads too)."""
        for target in targets:
            d = self.definition(target)
            if d is None or d.kind != FUNCTION or d.parent < 0:
                return False
        return True

    def _fitting(self, targets: list[Symbol], name: str, arity: int, rules: ResolutionRules
                 ) -> list[Symbol]:
        """The ``targets`` a call of ``arity`` arguments can mean: the functions whose
        parameters take that many, and what is no function (a class: `new`'s, Go's `T(x)`)."""
        out: list[Symbol] = []
        for target in targets:
            if target in self._parameters:
                counts = self._parameters[target]
            else:
                d = self.definition(target)
                counts = self._parameters[target] = (
                    rules.parameters(d.signature, name)
                    if d is not None and d.kind == FUNCTION else None)
            if counts is None or counts[0] <= arity and (counts[1] < 0 or arity <= counts[1]):
                out.append(target)
        return out

    def _by_argument_types(self, fi: FileIndex, scope: int, targets: list[Symbol],
                           argument_types: tuple[str, ...], rules: ResolutionRules
                           ) -> list[Symbol]:
        """The overloads among ``targets`` (all of which take as many arguments) whose
        parameters may take the arguments whose static types are certain; all of them where
        none may (a type this reading gets wrong leaves the call as it was)."""
        out: list[Symbol] = []
        for target in targets:
            parameters = self._parameters.get(target)
            if parameters is None or self._arguments_fit(fi, scope, target, parameters,
                                                         argument_types, rules):
                out.append(target)
        if len(out) > 1 and rules.fixed_arity_first:
            out = self._fixed_arity_first(fi, scope, out, len(argument_types), argument_types,
                                          rules)
        if len(out) > 1:  # the most specific: those declaring the most arguments' own types
            scores = [self._exact_arguments(fi, scope, t, argument_types, rules) for t in out]
            best = max(scores)
            if best > 0:
                out = [t for t, score in zip(out, scores, strict=True) if score == best]
        return out or targets

    def _fixed_arity_first(self, fi: FileIndex, scope: int, targets: list[Symbol], arity: int,
                           argument_types: tuple[str, ...], rules: ResolutionRules
                           ) -> list[Symbol]:
        """Of overloads that may all take a call's ``arity`` arguments, those that take them
        without gathering varargs where some do: a varargs method then only where its last
        argument may be the array itself (`peek(0, kinds)`, `lub(types)`)."""
        fixed: list[Symbol] = []
        any_fixed = False
        for target in targets:
            counts = self._parameters.get(target)
            if counts is None:
                return targets
            least, most, types = counts
            if most >= 0:
                fixed.append(target)
                any_fixed = True
            elif arity == least + 1:  # the last argument in the varargs' place: an array?
                last = argument_types[-1] if len(argument_types) == arity else ""
                if not last or rules.argument_fits(self, fi, scope, last, target,
                                                   types[-1].removesuffix("...") + "[]"):
                    fixed.append(target)
        return fixed if any_fixed and len(fixed) < len(targets) else targets

    def _exact_arguments(self, fi: FileIndex, scope: int, target: Symbol,
                         argument_types: tuple[str, ...], rules: ResolutionRules
                         ) -> int:
        """How many of the arguments ``target`` declares a parameter of their very type."""
        parameters = self._parameters.get(target)
        if parameters is None:
            return 0
        types = parameters[2]
        return sum(1 for argument, parameter in zip(argument_types, types, strict=False)
                   if argument and rules.argument_is(self, fi, scope, argument, parameter))

    def _arguments_fit(self, fi: FileIndex, scope: int, target: Symbol,
                       parameters: tuple[int, int, tuple[str, ...]],
                       argument_types: tuple[str, ...], rules: ResolutionRules
                       ) -> bool:
        least, most, types = parameters
        for i, argument in enumerate(argument_types):
            if not argument:
                continue
            if most < 0 and i >= least:  # one of the varargs: each is of the element type
                parameter = types[-1].removesuffix("...")
            elif i < len(types):
                parameter = types[i]
            else:
                continue
            if not rules.argument_fits(self, fi, scope, argument, target, parameter):
                return False
        return True


def _dedupe_symbols(symbols: list[Symbol]) -> list[Symbol]:
    return list(dict.fromkeys(symbols))
