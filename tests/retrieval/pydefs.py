"""Definitions for Python source, shaped like the indexer's ``Definition`` records.

Built with the stdlib ``ast`` so the retrieval tests do not depend on the indexer under
construction; line numbers follow tree-sitter's ``function_definition``/``class_definition``
(the ``def``/``class`` line, decorators outside).
"""

from __future__ import annotations

import ast
from typing import NamedTuple


class Def(NamedTuple):
    kind: str
    name: str
    qualname: str
    parent: int
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    signature: str
    doc: str


def python_definitions(source: bytes) -> list[Def]:
    text = source.decode("utf-8", errors="replace")
    lines = text.split("\n")
    tree = ast.parse(text)
    out: list[Def] = []

    def visit(node: ast.AST, parent: int, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                doc = ast.get_docstring(child) or ""
                out.append(
                    Def(
                        kind="Class" if isinstance(child, ast.ClassDef) else "Function",
                        name=child.name,
                        qualname=qual,
                        parent=parent,
                        start_line=child.lineno,
                        end_line=child.end_lineno or child.lineno,
                        start_byte=0,
                        end_byte=0,
                        signature=lines[child.lineno - 1].strip(),
                        doc=doc.strip().splitlines()[0] if doc.strip() else "",
                    )
                )
                visit(child, len(out) - 1, qual + ".")
            elif not isinstance(child, (ast.Lambda,)):
                visit(child, parent, prefix)

    visit(tree, -1, "")
    return out
