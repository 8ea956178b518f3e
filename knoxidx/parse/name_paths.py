"""Name paths: the segments of an expression that names something, from its source text.

``self.server.start`` -> ("self", "server", "start"); ``make().run`` -> ("make()", "run");
``Option<&'a mut Foo>`` as a type -> ("Foo",). What extraction records for each reference and
what the resolver follows; pure string functions, cached per process.
"""

from __future__ import annotations

import re

from knoxidx.core.facts import ELEMENT_OF, NamePath

# A reference's text is cut to its tail beyond this: a receiver expression this long (a
# chain of 10,000 calls) never resolves, and re-reading it for every call in the chain is
# quadratic.
MAX_REFERENCE_CHARS = 2000
# Name paths of texts up to this long are remembered per process, up to CACHED_NAMES of them,
# then all forgotten at once. A plain dict rather than functools.lru_cache: most lookups are
# hits (~80 %), and the LRU's reordering on each hit cost more than a miss's split saves.
CACHED_NAME_CHARS = 100
CACHED_NAMES = 1 << 16

_SUPER_CALL = re.compile(r"\bsuper\s*\([^()]*\)")
_GENERIC_ARGS = re.compile(r"::<[^<>]*(?:<[^<>]*>[^<>]*)*>|<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>")
# A member separator. No `\s*` around it: tried at every space of a long run of them, that
# made the split quadratic in the run (11 s for one 51 kB expression); parts are stripped instead.
_SEPARATORS = r"\?\.|!\.|::|->|\."
_SEPARATOR = re.compile(_SEPARATORS)
_IDENTIFIER = re.compile(r"(?:[^\W\d]|[$#])[\w$]*\Z")
_CALL_SEGMENT = re.compile(r"((?:[^\W\d]|[$#])[\w$]*)\s*\(.*\)\Z", re.DOTALL)
# `new T(...)` heading a chain (JavaScript, Java): an instance of T, as a call of the class is
_NEW_SEGMENT = re.compile(r"new\s+((?:[^\W\d]|[$#])[\w$]*)\s*\(.*\)\Z", re.DOTALL)
# a cast heading a chain (Java's `((T) x).run`, `((a.T) x).run`): an instance of T, as `new T()`
_CAST_SEGMENT = re.compile(
    r"\(\s*\(\s*((?:[^\W\d]|[$#])[\w$]*(?:\s*\.\s*(?:[^\W\d]|[$#])[\w$]*)*)\s*\)\s*"
    r"[\w$(].*\)\Z", re.DOTALL)
# a Go type assertion (`x.(*T).run`, `x.(a.T).run`): the value as a T, as a cast's
_ASSERTION_SEGMENT = re.compile(
    r"\(\s*\*?\s*((?:[^\W\d]|[$#])[\w$]*(?:\s*\.\s*(?:[^\W\d]|[$#])[\w$]*)*)\s*\)\Z")
_NEEDS_FULL_SPLIT = re.compile(r"[^\w.]")
_NULL_TYPES = frozenset({"None", "null", "undefined", "nil", "void"})
_TYPE_PREFIX = re.compile(r"^(?:[&*]\s*|'\w+\s+|(?:mut|dyn|impl|const|readonly)\s+)*")
# what a text _TYPE_PREFIX removes something from starts with (most start with none)
_TYPE_PREFIX_STARTS = ("&", "*", "'", "mut", "dyn", "impl", "const", "readonly")
# (a Rust path may lead to an Option or a Result, `io::Result<T>`; not to a Mutex, a crate's
# own `sync::Mutex<T>` is one, whose methods `x.lock()` calls)
_WRAPPER = re.compile(
    r"^(?:(?:\w+\s*::\s*)*(?:Option|Result)|Box|Arc|Rc|RefCell|Cell|Mutex|RwLock|Promise|Optional|"
    r"CompletableFuture|Future|Awaitable|Readonly|ClassVar|Final|Annotated)\s*[<\[](.*)[>\]]$",
    re.DOTALL,
)
# A Go container written before its element (`[]T`, `[4]T`, `map[K]T`, `chan T`, `<-chan T`): the
# element is what a value of it yields, indexed or ranged over, and the container itself has
# no methods, so its declared type may stand for its element's
_CONTAINER_PREFIX = re.compile(
    r"(?:\[[^\[\]]*\]|map\s*\[(?:[^\[\]]|\[[^\[\]]*\])*\]|(?:<-\s*)?chan\b(?:\s*<-)?)\s*")
_CONTAINER_STARTS = ("[", "map", "chan", "<-")
# A generic written with square brackets (Python's `Select[Any]`, Go's `List[T]`): the name
# before them. Not `Foo[]` (an array elsewhere) nor `Literal["a"]` (values, not types).
_SQUARE_ARGS = re.compile(r"((?:[^\W\d]|[$#])[\w$.]*)\s*\[\s*[^\s\]'\"\d].*\]\Z", re.DOTALL)


def name_path(text: str) -> NamePath:
    """The segments of an expression naming something: see :func:`_split_name_path`. Short
    texts repeat (``self.assertEqual``, ``fmt.Sprintf``): their splits are remembered."""
    if len(text) > CACHED_NAME_CHARS:
        return _split_name_path(text)
    hit = _PATHS.get(text)
    if hit is None:
        if len(_PATHS) >= CACHED_NAMES:
            _PATHS.clear()
        hit = _PATHS[text] = _split_name_path(text)
    return hit


def _split_name_path(text: str) -> NamePath:
    """Split an expression naming something into its segments: ``a.b.c`` -> ("a", "b", "c").

    A call inside the chain keeps its name with "()" (``make().run`` -> ("make()", "run")), so
    the resolver can follow return types; so does a `new T(...)` at its head (``new T().run``
    -> ("T()", "run")), and so does a cast (``((T) x).run`` -> ("T()", "run")) and a Go type assertion
    (``x.(*T).run`` -> ("T()", "run")). A receiver that is neither (``a[0].g``, ``(x).g``)
    becomes "?": the path keeps the longest trailing run of names. ``super()`` is "super".
    """
    if text.isidentifier():
        return (text,)
    if not _NEEDS_FULL_SPLIT.search(text):
        parts = text.split(".")
        if all(p.isidentifier() for p in parts):
            return tuple(parts)
    if "(" in text:
        text = _SUPER_CALL.sub("super", text)
    if "<" in text:
        text = _GENERIC_ARGS.sub("", text)
    parts = _split_top_level(text.strip())
    i = len(parts)
    while i > 0:
        part = parts[i - 1]
        if _IDENTIFIER.match(part):
            i -= 1
            continue
        call = _CALL_SEGMENT.match(part)
        if call and i < len(parts):
            parts[i - 1] = call.group(1) + "()"
            i -= 1
            continue
        created = _NEW_SEGMENT.match(part) if i == 1 and i < len(parts) else None
        if created:
            parts[0] = created.group(1) + "()"
            i = 0
        elif i == 1 and i < len(parts) and (cast := _CAST_SEGMENT.match(part)):
            *qualifier, name = (p.strip() for p in cast.group(1).split("."))
            parts[:1] = [*qualifier, name + "()"]
            i = 0
        elif (i >= 2 and i < len(parts) and "?.(" not in text
              and (asserted := _ASSERTION_SEGMENT.match(part))):
            # what the asserted value was does not matter: the chain continues from a T
            # (JavaScript's optional call `f?.(x).then` is no assertion)
            *qualifier, name = (p.strip() for p in asserted.group(1).split("."))
            parts[:i] = [*qualifier, name + "()"]
            i = 0
        break
    if i == len(parts):
        return ()
    return tuple(parts) if i == 0 else ("?", *parts[i:])


_PATHS: dict[str, NamePath] = {}
# type_path's, by whether type arguments are in square brackets
_TYPE_PATHS: tuple[dict[str, NamePath], dict[str, NamePath]] = ({}, {})
_BYTES_PATHS: dict[bytes, tuple[NamePath, bool]] = {}


def short_reference(text: bytes) -> tuple[NamePath, bool]:
    """The :func:`name_path` of a reference's bytes (at most CACHED_NAME_CHARS long), and
    whether they span lines, remembered by the bytes themselves: a repeated name is neither
    decoded nor searched for a newline again."""
    hit = _BYTES_PATHS.get(text)
    if hit is None:
        if len(_BYTES_PATHS) >= CACHED_NAMES:
            _BYTES_PATHS.clear()
        hit = _BYTES_PATHS[text] = (
            _split_name_path(text.decode("utf-8", "replace")), b"\n" in text)
    return hit


def type_path(text: str, square_args: bool = False) -> NamePath:
    """The named type a type annotation denotes, through pointers, references and the usual
    single-value wrappers: ``*Server``, ``&'a mut Foo``, ``Option<Foo>``, ``Promise<Foo>``,
    ``(*T, error)`` all give the path of the inner type; so do Go's containers, ``[]*T``,
    ``map[string]T``, ``chan T`` (see _CONTAINER_PREFIX). ``square_args``: the language writes
    type arguments in square brackets (Python, Go), so ``Select[Any]`` is a ``Select``; and
    (Python) an annotation may be a string, a forward reference: ``"Select[T]"`` is one too.
    Short types repeat (``String``, ``int``, ``&str``: a few hundred make most of a corpus's
    declared types, each read through several patterns): their paths are remembered."""
    if len(text) > CACHED_NAME_CHARS:
        return _type_path(text, square_args)
    remembered = _TYPE_PATHS[square_args]
    hit = remembered.get(text)
    if hit is None:
        if len(remembered) >= CACHED_NAMES:
            remembered.clear()
        hit = remembered[text] = _type_path(text, square_args)
    return hit


def _type_path(text: str, square_args: bool) -> NamePath:
    text = _unquoted(text.strip()) if square_args else text.strip()
    if "|" in text:  # `Foo | None`, `Foo | undefined`: the named alternative
        parts = [p.strip() for p in split_top_level(text.replace("|", ","))]
        named = [p for p in parts if p and p not in _NULL_TYPES]
        text = named[0] if named else ""
    for _ in range(4):
        if text.startswith("("):
            # a tuple's first type; Go's results name theirs (`(n int, err error)`)
            text = result_types(text)[0]
        if text.startswith(_TYPE_PREFIX_STARTS):
            text = _TYPE_PREFIX.sub("", text)
        text = text.strip()
        if square_args and text.startswith(_CONTAINER_STARTS):
            container = _CONTAINER_PREFIX.match(text)
            if container and container.end() < len(text):
                text = text[container.end():]
                continue
        wrapped = _WRAPPER.match(text)
        if not wrapped:
            break
        text = split_top_level(wrapped.group(1))[0].strip()
        if square_args:
            text = _unquoted(text)
    if square_args and text.endswith("]"):
        generic = _SQUARE_ARGS.match(text)
        if generic:
            text = generic.group(1)
    elif "(" in text and text.endswith(">"):
        # `oneshot::Sender<()>`, `Box<dyn Fn(u8)>`: a type's arguments, parentheses and all
        # (name_path leaves `<..(..)..>` alone: in an expression it may be `a < f(b) > c`)
        text = _without_type_arguments(text)
    path = name_path(text)
    return path if path and path[0] != "?" else ()


def _without_type_arguments(text: str) -> str:
    """``text`` less the type arguments it ends with (`Sender<()>` -> `Sender`), where its first
    `<` opens them."""
    opening = text.find("<")
    if opening <= 0:
        return text
    depth = 0
    for at in range(opening, len(text)):
        char = text[at]
        if char == "<":
            depth += 1
        elif char == ">" and text[at - 1] != "-":  # (`Fn() -> T`'s arrow)
            depth -= 1
            if depth == 0:
                return text[:opening] if at == len(text) - 1 else text
    return text


# The last segment of a path to what indexing or ranging over a value yields (see element_path)
ELEMENT_SEGMENT = ELEMENT_OF  # the same segment a Rust loop binding ends in (core.facts)


def element_path(text: str) -> NamePath:
    """The path of an element of the value the expression ``text`` names: ``xs`` ->
    ("xs", "[]"), ``s.files`` -> ("s", "files", "[]"), ``load(cfg)`` -> ("load()", "[]");
    nothing where the value has no path (``xs[i]``, a literal)."""
    path = name_path(text + ".x")[:-1]  # a member read makes the call at its end a segment
    return (*path, ELEMENT_SEGMENT) if path and path[0] != "?" else ()


# a Go named result, `err error` (its name before its type; no type begins with a keyword
# and a space, as `chan int` does)
_NAMED_RESULT = re.compile(r"(?!(?:chan|func|map|interface|struct)\b)[^\W\d]\w*\s+(?=\S)")


# A binding's last segment "#k" (k >= 1): the k-th result of the call its path names, counting
# from 0 (Go's `_, b := f()`; the first result is the call's own type). No name is a number
# (`#` starts JavaScript's private names)
RESULT_SEGMENT_PREFIX = "#"


_LEADING_NAME = re.compile(r"(?:[^\W\d]|[$#])[\w$]*")
_CLOSER = {"(": ")", "[": "]", "{": "}"}


def indexed_path(text: str) -> NamePath:
    """The path of a member of an indexed value, through :data:`ELEMENT_SEGMENT`: ``xs[i].run``
    -> ("xs", "[]", "run"), ``s.files[0].Name`` -> ("s", "files", "[]", "Name"),
    ``p.Patches()[0].Chunks()[1].Type`` -> ("p", "Patches()", "[]", "Chunks()", "[]", "Type");
    nothing where no index is read, a part is no name, call or index of one (`fs[i]()`: a
    call of an element), or nothing follows the last index."""
    parts = _split_top_level(text.strip())
    if len(parts) < 2 or not _IDENTIFIER.match(parts[-1]):
        return ()
    out: list[str] = []
    for part in parts[:-1]:
        segments = _indexed_segments(part)
        if segments is None:
            return ()
        out.extend(segments)
    if ELEMENT_SEGMENT not in out:
        return ()
    return (*out, parts[-1])


def _indexed_segments(part: str) -> list[str] | None:
    """``xs`` -> ["xs"], ``xs[i][j]`` -> ["xs", "[]", "[]"], ``f(a)[0]`` -> ["f()", "[]"];
    None for any other form."""
    name = _LEADING_NAME.match(part)
    if name is None:
        return None
    segments = [name.group(0)]
    i = name.end()
    while i < len(part):
        char = part[i]
        if char.isspace():
            i += 1
            continue
        if char not in "([":
            return None
        close = _closing(part, i)
        if close < 0:
            return None
        if char == "(":
            if len(segments) > 1 or segments[0].endswith("()"):
                return None  # a call of an element, or of a call's result
            segments[0] += "()"
        elif ":" in part[i + 1:close]:
            return None  # `xs[i:j]`: a slice of the value, no element of it
        else:
            segments.append(ELEMENT_SEGMENT)
        i = close + 1
    return segments


def _closing(text: str, start: int) -> int:
    """Where the bracket opened at ``start`` closes (strings skipped), or -1."""
    expected = [_CLOSER[text[start]]]
    i = start + 1
    while i < len(text):
        char = text[i]
        if char in "\"'`":
            end = text.find(char, i + 1)
            while end > 0 and char != "`" and text[end - 1] == "\\":
                end = text.find(char, end + 1)
            if end < 0:
                return -1
            i = end
        elif char in _CLOSER:
            expected.append(_CLOSER[char])
        elif char in ")]}":
            if char != expected.pop():
                return -1
            if not expected:
                return i
        i += 1
    return -1


def result_types(text: str) -> list[str]:
    """The type of each of Go's results ``text``, as written: ``(T, error)`` -> ["T",
    "error"], ``(left, right *Node)`` -> ["*Node", "*Node"], ``T`` -> ["T"]."""
    text = text.strip()
    if not text.startswith("("):
        return [text]
    inner = text[1:-1] if text.endswith(")") else text[1:]  # a long one is cut short
    results = [r.strip() for r in split_top_level(inner)]
    if not _NAMED_RESULT.match(results[-1]):
        return results
    out: list[str] = []
    untyped = 0  # names before the type they share: `left, right *Node`
    for result in results:
        named = _NAMED_RESULT.match(result)
        if named is None:
            untyped += 1
            continue
        out.extend([result[named.end():]] * (untyped + 1))
        untyped = 0
    return out



def _unquoted(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].strip()
    return text


def alias_path(text: str, square_args: bool = False) -> NamePath:
    """The named type a type alias stands for (``type ParseStream<'a> = &'a ParseBuffer<'a>``
    -> ParseBuffer), or nothing when it is a choice of several (``type Id = number | Key``:
    a member of it could belong to either; :func:`type_path` picks the first for a binding's
    annotation, where the others are usually null)."""
    if "|" in text:
        parts = [p.strip() for p in split_top_level(text.replace("|", ","))]
        if sum(1 for p in parts if p and p not in _NULL_TYPES) > 1:
            return ()
    return type_path(text, square_args)


def type_arguments(written: str) -> tuple[str, ...]:
    """The type arguments of a written type's outermost generic, each without spaces or
    annotations (`Map<K, List<V>>` -> ("K", "List<V>")); a wildcard's upper bound (`? extends
    T` -> "T") and "" for one with none (`?`, `? super T`); () for a type without any."""
    start = written.find("<")
    end = written.rfind(">")
    if start < 0 or end < start or not written[start + 1 : end].strip():
        return ()
    out: list[str] = []
    for part in split_top_level(written[start + 1 : end]):
        words = [w for w in part.split() if not w.startswith("@")]
        if words and words[0] == "?":
            words = words[2:] if len(words) > 2 and words[1] == "extends" else []
        out.append("".join(words))
    return tuple(out)


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """``text`` split at each ``separator`` outside brackets: a type's arguments, a tuple's
    parts (``Vec<(A, B)>, C`` -> ``Vec<(A, B)>``, `` C``)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        elif c == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _split_top_level(text: str) -> list[str]:
    """Split at member separators (``.``, ``?.``, ``::``, ``->``) outside brackets."""
    if "(" not in text and "[" not in text:
        return [part.strip() for part in _SEPARATOR.split(text)]
    parts: list[str] = []
    depth = 0
    start = 0
    # only brackets and separators matter: the regex skips the names between them in C
    for token in _BRACKET_OR_SEPARATOR.finditer(text):
        c = token.group()
        if c in _OPENING:
            depth += 1
        elif c in _CLOSING:
            depth -= 1
        elif depth == 0:
            parts.append(text[start : token.start()].strip())
            start = token.end()
    parts.append(text[start:].strip())
    return parts


_OPENING = frozenset("([{")
_CLOSING = frozenset(")]}")
_BRACKET_OR_SEPARATOR = re.compile(r"[(\[{)\]}]|" + _SEPARATORS)


_TAIL_NAME = re.compile(r"(?:" + _SEPARATORS + r")\s*((?:[^\W\d]|[$#])[\w$]*)\s*\Z")


def reference_path(source: bytes, start: int, end: int) -> NamePath:
    if end - start <= MAX_REFERENCE_CHARS:
        return name_path(source[start:end].decode("utf-8", "replace"))
    # Only the last name of an overlong expression can matter: `<unknown receiver>.name`.
    tail = _TAIL_NAME.search(source[end - 256 : end].decode("utf-8", "replace"))
    return ("?", tail.group(1)) if tail else ()
