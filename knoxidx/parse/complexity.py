"""Each function's complexity from the nodes the complexity patterns of the tags query captured
(``queries/<lang>/complexity.scm``): cyclomatic complexity (1 + its decision points), the
deepest nesting of its control-flow statements, and its lines of code (neither blank nor only
comment). Which constructs count, per language, and why: CONTRIBUTING.md, "Complexity".

A pure function of the captured spans and the source, like extraction itself; what lies in a
nested function (a definition of its own, or a callback the language's patterns mark as a
scope) counts for that function, not the one around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate

from knoxidx.core.facts import Definition
from knoxidx.core.model import NodeKind
from knoxidx.parse.definitions import enclosing

_FUNCTION = NodeKind.FUNCTION.value
_new = tuple.__new__  # a NamedTuple record without its Python-level __new__
_CYCLOMATIC = Definition._fields.index("cyclomatic")
_LOC = Definition._fields.index("loc")
assert Definition._fields[_CYCLOMATIC:_LOC + 1] == ("cyclomatic", "nesting", "loc")
_ANONYMOUS = -2  # the index enclosing() gives a decision inside a callback: nobody's


@dataclass(slots=True)
class ComplexityCaptures:
    """What the complexity patterns captured in one file, as byte spans and rows."""

    decisions: list[int] = field(default_factory=list)  # start bytes
    nesting: list[tuple[int, int]] = field(default_factory=list)  # (start, end) bytes
    flat: set[int] = field(default_factory=set)  # start bytes of an `else if`'s `if`
    # (start row, start column, end row, end column) of each comment
    comments: list[tuple[int, int, int, int]] = field(default_factory=list)
    # (start, end) bytes of each callback, and of the node holding it
    scopes: list[tuple[int, int, int, int]] = field(default_factory=list)


def with_complexity(defs: list[Definition], captured: ComplexityCaptures,
                    source: bytes) -> list[Definition]:
    """``defs`` with each function's ``cyclomatic``, ``nesting`` and ``loc`` filled in."""
    functions = [(d.start_byte, d.end_byte, i) for i, d in enumerate(defs) if d.kind == _FUNCTION]
    if not functions:
        return defs
    own = {(start, end) for start, end, _ in functions}
    # a callback that is a definition's value (`const f = () => ...`) is that definition's body
    scopes = [(start, end, _ANONYMOUS) for start, end, outer_start, outer_end in captured.scopes
              if (start, end) not in own and (outer_start, outer_end) not in own]
    spans = sorted(functions + scopes, key=_outermost_first) if scopes else functions
    decisions = [0] * len(defs)
    positions = sorted(captured.decisions)
    for scope in enclosing(spans, positions):
        if scope >= 0:
            decisions[scope] += 1
    deepest = _nesting(spans, captured, len(defs))
    code_before = _code_lines_before(source, captured.comments)
    last = len(code_before) - 1
    out = list(defs)
    for _, _, i in functions:
        d = defs[i]
        loc = code_before[min(d.end_line, last)] - code_before[min(d.start_line - 1, last)]
        # the record rebuilt from its fields around the three (``_replace`` maps a dict's pop
        # over every field name, in Python)
        out[i] = _new(Definition, (*d[:_CYCLOMATIC], 1 + decisions[i], deepest[i], loc,
                                   *d[_LOC + 1:]))
    return out


def _outermost_first(span: tuple[int, int, int]) -> tuple[int, int]:
    return span[0], -span[1]


def _nesting(spans: list[tuple[int, int, int]], captured: ComplexityCaptures,
             count: int) -> list[int]:
    """The deepest nesting of control-flow statements in each definition: an `else if` is no
    level deeper than its `if`."""
    flat = captured.flat
    statements = sorted((s for s in captured.nesting if s[0] not in flat), key=_by_start_longest)
    deepest = [0] * count
    open_ends: dict[int, list[int]] = {}  # by definition: the ends of the statements open
    for (start, end), scope in zip(statements, enclosing(spans, [s[0] for s in statements]),
                                   strict=True):
        if scope < 0:
            continue
        ends = open_ends.setdefault(scope, [])
        while ends and ends[-1] <= start:
            ends.pop()
        ends.append(end)
        if len(ends) > deepest[scope]:
            deepest[scope] = len(ends)
    return deepest


def _by_start_longest(span: tuple[int, int]) -> tuple[int, int]:
    return span[0], -span[1]


def _code_lines_before(source: bytes, comments: list[tuple[int, int, int, int]]) -> list[int]:
    """For each 0-based row r, how many of the rows before it hold code: something besides
    whitespace and comments. One entry more than the source has rows."""
    lines = source.split(b"\n")
    # (not blank: isspace() makes no stripped copy of each line, as strip() did)
    is_code = [not (line.isspace() or not line) for line in lines]
    # per row a comment touches: the column spans it covers there
    covered: dict[int, list[tuple[int, int]]] = {}
    for start_row, start_col, end_row, end_col in comments:
        if start_row == end_row:
            covered.setdefault(start_row, []).append((start_col, end_col))
            continue
        covered.setdefault(start_row, []).append((start_col, len(lines[start_row])))
        for row in range(start_row + 1, end_row):
            is_code[row] = False
        covered.setdefault(end_row, []).append((0, end_col))
    for row, cut in covered.items():
        if is_code[row]:
            is_code[row] = _code_outside(lines[row], cut)
    # the running count in C: a Python loop over every row of the file cost more
    return list(accumulate(is_code, initial=0))


def _code_outside(line: bytes, cut: list[tuple[int, int]]) -> bool:
    """Whether ``line`` holds anything but whitespace outside the column spans ``cut``."""
    at = 0
    for start, end in sorted(cut):
        if line[at:start].strip():
            return True
        at = max(at, end)
    return bool(line[at:].strip())
