"""Doc comments of functions: where they are (so a copy can have them stripped) and what they
say (so they can be asked as a query).

knoxidx's ``Definition`` facts carry only the doc's first line, not its span, so the span is
found here from the tree-sitter node of each definition (by its byte range, from knoxidx's own
extraction): a Python docstring is the body's first statement; elsewhere it is the run of doc
comments directly above the declaration (above its decorators, annotations, attributes or
``export``), in the language's doc style: JSDoc/Javadoc ``/** */``, Rust ``///`` or ``/** */``,
Go ``//`` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from knoxidx.languages.registry import BY_NAME, ts_language

COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
SKIPPED_BETWEEN = frozenset({"decorator", "annotation", "attribute_item"})


@dataclass(frozen=True, slots=True)
class DocComment:
    first_line: int  # 1-based, inclusive: the lines removed from the stripped copy
    last_line: int
    raw: str  # the comment or docstring as written


def parse(source: bytes, language: str) -> Any:
    from tree_sitter import Parser

    return Parser(ts_language(language)).parse(source)


def node_for(root: Any, start_byte: int, end_byte: int) -> Any | None:
    """The outermost node spanning exactly ``start_byte..end_byte`` (a definition's span)."""
    node = root.descendant_for_byte_range(start_byte, end_byte)
    while node is not None and (node.start_byte, node.end_byte) != (start_byte, end_byte):
        node = node.parent
    if node is None:
        return None
    while node.parent is not None and (node.parent.start_byte, node.parent.end_byte) == (
        start_byte, end_byte,
    ):
        node = node.parent
    return node


def has_body(node: Any) -> bool:
    """Declarations without a body (interface methods, overload signatures) are not answers.
    A Go struct or interface type's body is its ``type`` field."""
    if node.type == "type_spec":
        shape = node.child_by_field_name("type")
        return shape is not None and shape.type in ("struct_type", "interface_type")
    return node.child_by_field_name("body") is not None


def doc_comment(node: Any, language: str, source: bytes) -> DocComment | None:
    """The doc comment of the definition ``node``, if it sits on lines of its own."""
    if language == "python":
        return _python_docstring(node, source)
    family = BY_NAME[language].family
    target = node
    if target.type == "type_spec" and target.parent is not None and (
            target.parent.type == "type_declaration"):  # Go: the doc sits above `type`
        target = target.parent
    if family == "js":
        if target.type == "variable_declarator" and target.parent is not None:
            target = target.parent
        if target.parent is not None and target.parent.type == "export_statement":
            target = target.parent
    prev = target.prev_named_sibling
    while prev is not None and prev.type in SKIPPED_BETWEEN:
        target, prev = prev, prev.prev_named_sibling
    if prev is None or prev.type not in COMMENT_TYPES:
        return None
    if _end_row(prev) < target.start_point[0] - 1:
        return None
    run = [prev]
    while True:
        before = run[0].prev_named_sibling
        if (
            before is None
            or before.type not in COMMENT_TYPES
            or _end_row(before) != run[0].start_point[0] - 1
        ):
            break
        run.insert(0, before)
    texts = [_text(c).rstrip("\r\n") for c in run]
    if family in ("js", "java"):
        # only the last block above is the doc, and it must be JSDoc/Javadoc
        run, texts = run[-1:], texts[-1:]
        if not texts[0].startswith("/**"):
            return None
    elif family == "rust":
        keep = [i for i, t in enumerate(texts) if t.startswith(("///", "/**"))
                and not t.startswith("////")]
        if not keep or keep[-1] != len(texts) - 1:
            return None
        first = keep[-1]
        while first - 1 in keep:
            first -= 1
        run, texts = run[first:], texts[first:]
    elif family == "go" and not all(t.startswith("//") for t in texts):
        return None
    if not _own_lines(run[0], run[-1], source):
        return None
    return DocComment(run[0].start_point[0] + 1, _end_row(run[-1]) + 1, "\n".join(texts))


def _python_docstring(node: Any, source: bytes) -> DocComment | None:
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    body = node.child_by_field_name("body")
    if body is None or body.named_child_count < 2:  # nothing would be left of the function
        return None
    first = body.named_child(0)
    if first.type != "expression_statement" or first.named_child_count != 1:
        return None
    string = first.named_child(0)
    if string.type != "string":
        return None
    if not _own_lines(first, first, source):
        return None
    return DocComment(first.start_point[0] + 1, first.end_point[0] + 1, _text(string))


def _end_row(node: Any) -> int:
    """The last row a node is on (Rust's line comments end after their newline)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


def _own_lines(first: Any, last: Any, source: bytes) -> bool:
    """Nothing but whitespace shares a line with the comment, so whole lines can go."""
    end = last.end_byte
    if end > 0 and source[end - 1 : end] == b"\n":
        end -= 1
    line_start = source.rfind(b"\n", 0, first.start_byte) + 1
    line_end = source.find(b"\n", end)
    line_end = len(source) if line_end < 0 else line_end
    return not source[line_start:first.start_byte].strip() and not source[end:line_end].strip()


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


# ---- what the doc says ------------------------------------------------------------------------

_SECTION = re.compile(
    r"^(?:@\w+|:(?:param|type|return|returns|rtype|raises?)\b|(?:Args|Arguments|Parameters|"
    r"Returns?|Yields?|Raises|Examples?|Example usage|Notes?|See also|Panics|Errors|Safety|"
    r"Deprecated)\s*:?\s*$|#+\s|```|>>>|\.\. )",
    re.IGNORECASE,
)
_UNDERLINE = re.compile(r"^[-=~]{3,}\s*$")
_INLINE_TAG = re.compile(r"\{@\w+\s+([^}]*)\}")
_RST_ROLE = re.compile(r":\w+(?::\w+)?:`~?([^`]*)`")
_RUST_LINK = re.compile(r"\[`?([^\]`]+)`?\](?:\([^)]*\)|\[[^\]]*\])?")
_HTML = re.compile(r"</?[a-zA-Z][^>]*>")
_SPACES = re.compile(r"\s+")


def comment_lines(raw: str) -> list[str]:
    """The doc's text lines without comment markers or string quotes."""
    text = raw.strip()
    match = re.match(r"^[rRuUbBfF]*(\"\"\"|'''|\"|')", text)
    if match:  # a Python string literal
        quote = match.group(1)
        text = text[match.end():]
        text = text.removesuffix(quote)
        return [line.strip() for line in text.split("\n")]
    out = []
    for line in text.split("\n"):
        line = line.strip()
        for marker in ("/**", "/*!", "/*", "///", "//!", "//"):
            if line.startswith(marker):
                line = line[len(marker):]
                break
        line = line.removesuffix("*/")
        line = line.strip()
        if line.startswith("*"):
            line = line[1:].strip()
        out.append(line)
    return out


def summary(raw: str, max_words: int = 60) -> str:
    """The doc's first paragraph (up to a blank line or the first tag/section), markup
    reduced to its words: what a person asking for this code would write."""
    lines = comment_lines(raw)
    while lines and not lines[0]:
        lines.pop(0)
    kept: list[str] = []
    for line in lines:
        if not line or _SECTION.match(line) or _UNDERLINE.match(line):
            break
        kept.append(line)
    text = " ".join(kept)
    text = _INLINE_TAG.sub(lambda m: m.group(1).replace("#", " ").strip(), text)
    text = _RST_ROLE.sub(lambda m: m.group(1), text)
    text = _RUST_LINK.sub(lambda m: m.group(1), text)
    text = _HTML.sub(" ", text).replace("`", "").replace("&nbsp;", " ")
    words = _SPACES.sub(" ", text).strip().split(" ")
    return " ".join(words[:max_words]) if words != [""] else ""
