"""ES module and CommonJS imports and exports as a file's imports: `import`, `export`,
`require(..)`, `await import(..)`, `module.exports`."""

from __future__ import annotations

from typing import Any

from knoxidx.core.facts import Import
from knoxidx.parse.definitions import node_text

REQUIRE = "="  # the imported name of `x = require(m)`: m's module.exports, whatever it is


def _string(source: bytes, node: Any) -> str:
    return node_text(source, node).strip("'\"`")


def _specified(names: Any, kind: str, module: str, line: int, scope: int, source: bytes,
               exported: bool) -> list[Import]:
    """An import's or export's braced names (`{a, b as c}`), each ``kind`` child of ``names``
    bound to its alias or its own name."""
    out: list[Import] = []
    for spec in names.named_children:
        if spec.type == kind:
            name = node_text(source, spec.child_by_field_name("name"))
            alias = spec.child_by_field_name("alias")
            bound = node_text(source, alias) if alias else name
            out.append(Import(module, name, bound, line, scope, exported))
    return out


def decode_import(node: Any, scope: int, source: bytes) -> list[Import]:
    line = node.start_point[0] + 1
    if node.type == "expression_statement" and node.named_child_count:
        node = node.named_child(0)  # module.exports = ...
    kind = node.type
    out: list[Import] = []
    if kind == "import_statement":
        specifier = node.child_by_field_name("source")
        module = _string(source, specifier) if specifier is not None else ""
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is None:
            require = next((c for c in node.named_children if c.type == "import_require_clause"),
                           None)
            if require is not None:  # import x = require("y")
                alias = next((c for c in require.named_children if c.type == "identifier"), None)
                src = require.child_by_field_name("source")
                if alias is not None and src is not None:
                    return [Import(_string(source, src), "", node_text(source, alias), line, scope)]
            return [Import(module, "", "", line, scope)]
        for part in clause.named_children:
            if part.type == "identifier":
                out.append(Import(module, "default", node_text(source, part), line, scope))
            elif part.type == "namespace_import":
                ident = next((c for c in part.named_children if c.type == "identifier"), None)
                if ident is not None:
                    out.append(Import(module, "", node_text(source, ident), line, scope))
            elif part.type == "named_imports":
                out += _specified(part, "import_specifier", module, line, scope, source, False)
        return out
    if kind == "export_statement":
        specifier = node.child_by_field_name("source")
        module = _string(source, specifier) if specifier is not None else ""
        declaration = node.child_by_field_name("declaration")
        is_default = any(c.type == "default" for c in node.children)
        if declaration is not None:
            if is_default:
                name_node = declaration.child_by_field_name("name")
                if name_node is not None:
                    return [Import("", node_text(source, name_node), "default", line, scope, True)]
            return []
        value = node.child_by_field_name("value")
        if value is not None and value.type == "identifier":
            return [Import("", node_text(source, value), "default", line, scope, True)]
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is not None:
            return _specified(clause, "export_specifier", module, line, scope, source, True)
        namespace = next((c for c in node.named_children if c.type == "namespace_export"), None)
        if namespace is not None and specifier is not None:
            ident = namespace.named_children[-1] if namespace.named_children else None
            name = node_text(source, ident) if ident else ""
            return [Import(module, "", name, line, scope, True)]
        if specifier is not None:
            return [Import(module, "*", "", line, scope, True)]
        return []
    if kind == "variable_declarator":  # const x = require("y"), const {a, b: c} = require("y")
        call = node.child_by_field_name("value")
        dynamic = call is not None and call.type == "await_expression"
        if dynamic:  # const x = await import("y"): the namespace, as `import * as x`
            call = call.named_child(0) if call.named_child_count else None
        args = call.child_by_field_name("arguments") if call is not None else None
        strings = [c for c in args.named_children if c.type == "string"] if args else []
        if not strings:
            return []
        module = _string(source, strings[0])
        target = node.child_by_field_name("name")
        if target is None:
            return []
        if target.type == "identifier":  # binds what the module assigned to module.exports
            return [Import(module, "" if dynamic else REQUIRE, node_text(source, target), line,
                           scope)]
        if target.type == "object_pattern":
            for prop in target.named_children:
                if prop.type == "shorthand_property_identifier_pattern":
                    name = node_text(source, prop)
                    out.append(Import(module, name, name, line, scope))
                elif prop.type == "pair_pattern":
                    key, value = prop.child_by_field_name("key"), prop.child_by_field_name("value")
                    if key is not None and value is not None and value.type == "identifier":
                        out.append(Import(module, node_text(source, key),
                                          node_text(source, value), line, scope))
        return out
    if kind == "assignment_expression":  # module.exports = {a, b: c} / module.exports = X
        right = node.child_by_field_name("right")
        if right is None:
            return []
        if right.type == "class":  # module.exports = class X {..}: the class node named X
            right = right.child_by_field_name("name")
            if right is None:
                return []
        if right.type in ("identifier", "type_identifier"):
            return [Import("", node_text(source, right), "default", line, scope, True)]
        for prop in right.named_children:
            if prop.type == "shorthand_property_identifier":
                name = node_text(source, prop)
                out.append(Import("", name, name, line, scope, True))
            elif prop.type == "pair":
                key, value = prop.child_by_field_name("key"), prop.child_by_field_name("value")
                if key is not None and value is not None and value.type == "identifier":
                    out.append(Import("", node_text(source, value), _string(source, key), line,
                                      scope, True))
        return out
    return out
