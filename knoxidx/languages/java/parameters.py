"""A method's parameters as its declaration's signature writes them, read as overload
resolution checks a call's arguments against them: how many, their types, the method's type
variables and their bounds; a field's declared type as written."""

from __future__ import annotations

from knoxidx.parse.name_paths import split_top_level


def parameters(signature: str, name: str) -> tuple[int, int, tuple[str, ...]] | None:
    """(least, most) arguments of the method ``name`` declared by ``signature`` (most -1 for a
    varargs `T... xs`), and its parameters' types (see :func:`_parameter_type`); None where
    its parameter list is cut off (a signature is kept up to 400 characters, or the first
    line of one without a body)."""
    at = signature.find(name + "(")
    if at < 0:
        at = signature.find(name + " (")
        if at < 0:
            return None
    start = signature.index("(", at)
    depth = 0  # of (), <> and [] alike: commas inside them separate no parameters
    quote = ""  # inside an annotation's string argument
    escaped = False
    last = start + 1  # where the parameter being read starts
    texts: list[str] = []
    for i in range(start, len(signature)):
        c = signature[i]
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c == '"' or c == "'":
            quote = c
        elif c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
            if depth == 0:
                texts.append(signature[last:i])
                return _counted(texts, type_parameters(signature[:at]),
                                type_bounds(signature[:at]))
        elif c == "," and depth == 1:
            texts.append(signature[last:i])
            last = i + 1
    return None


def _counted(texts: list[str], type_parameters: frozenset[str],
             bounds: dict[str, str] | None = None) -> tuple[int, int, tuple[str, ...]]:
    """:func:`parameters` of a whole parameter list, split into its parameters' ``texts``."""
    if len(texts) == 1 and not texts[0].strip():
        return 0, 0, ()
    types = [_parameter_type(text, type_parameters, bounds) for text in texts]
    if types[0] == "this":
        del types[0]  # a receiver parameter (`Outer Outer.this`) takes no argument
    if types and types[-1].endswith("..."):
        return len(types) - 1, -1, tuple(types)
    return len(types), len(types), tuple(types)


def _parameter_type(text: str, type_parameters: frozenset[str],
                    bounds: dict[str, str] | None = None) -> str:
    """A parameter's type as a call's argument is checked against it: without annotations,
    modifiers, type arguments or the name (`int[]`, `String...`, `a.B`); "?" for a type
    variable (of the method's, or named like one: the class's are not in the signature),
    but the bound of one of the method's declared with one (`<T extends JCTree> .. T t`:
    JCTree)."""
    words = [w for w in text.split() if not w.startswith("@") and w != "final"]
    if len(words) < 2:
        return "?"
    if words[-1].endswith(".this") or words[-1] == "this":
        return "this"
    name = words[-1]
    declared = "".join(words[:-1])
    if "<" in declared:  # type arguments: what they hold does not decide an overload here
        head, _, rest = declared.partition("<")
        declared = head + rest[rest.rfind(">") + 1 :]
    if "(" in declared or ")" in declared:  # an annotation with arguments: not read
        return "?"
    if name.endswith("]"):  # `int a[]`
        declared += name[name.index("[") :].replace(" ", "")
    bare = declared.removesuffix("...").replace("[]", "")
    if bounds and bare == declared and bare in bounds:
        return bounds[bare]
    if bare in type_parameters or looks_like_type_variable(bare):
        # an array of one stays an array (`A[] array`: no collection is passed to it)
        return "?" + declared[len(bare):] if declared.startswith(bare) else "?"
    return declared


def type_parameters(head: str) -> frozenset[str]:
    """The type variables a method declares before its name (`<K, V extends X>`)."""
    if "<" not in head:
        return frozenset()
    inside = head[head.index("<") + 1 : head.rfind(">")]
    return frozenset(part.split()[0] for part in inside.split(",") if part.split())


def type_bounds(head: str) -> dict[str, str]:
    """The bounds of the type variables a method declares before its name that have one of a
    class type (`<T extends JCTree>`: T -> JCTree, without type arguments)."""
    if "extends" not in head or "<" not in head:
        return {}
    inside = head[head.index("<") + 1 : head.rfind(">")]
    out: dict[str, str] = {}
    for part in split_top_level(inside):
        words = part.split(None, 2)
        if len(words) == 3 and words[1] == "extends":
            bound = "".join(words[2].partition("&")[0].split()).partition("<")[0]
            if bound and not looks_like_type_variable(bound.rpartition(".")[2]):
                out[words[0]] = bound
    return out


def written_type(signature: str, name: str) -> str:
    """A field's declared type as its declaration ``signature`` writes it, type arguments and
    all (`private final List<Type> types = ..;` -> "List<Type>"), "" where not read."""
    head = signature.partition("=")[0].strip().rstrip(";").rstrip()
    if not head.endswith(name):
        return ""
    words = head[: len(head) - len(name)].split()
    while words and (words[0] in _MODIFIERS or words[0].startswith("@")):
        if "(" in words[0] and ")" not in words[0]:
            return ""  # an annotation's arguments: not read
        words.pop(0)
    return " ".join(words)


_MODIFIERS = frozenset({"public", "protected", "private", "static", "final", "transient",
                        "volatile"})


def looks_like_type_variable(name: str) -> bool:
    """A class's type variables are named so by convention: T, E, K2, TT."""
    return 0 < len(name) <= 2 and name[0].isupper() and (len(name) == 1 or not name[1].islower())
