"""The property graph's vocabulary: node kinds, edge types, confidences, and node ids."""

from __future__ import annotations

import enum

import xxhash


class NodeKind(str, enum.Enum):
    FUNCTION = "Function"
    CLASS = "Class"
    INTERFACE = "Interface"
    TYPE = "Type"
    VARIABLE = "Variable"
    CONSTANT = "Constant"
    MODULE = "Module"
    FILE = "File"


# the kinds as the CLI, HTTP and MCP name them (a --kind choice, a schema enum)
NODE_KINDS: tuple[str, ...] = tuple(kind.value for kind in NodeKind)


class EdgeType(str, enum.Enum):
    CALLS = "Calls"
    IMPORTS = "Imports"  # a file's dependency on a file or module
    IMPORTS_SYMBOL = "ImportsSymbol"  # a named import's site: the definition it binds
    EXTENDS = "Extends"
    IMPLEMENTS = "Implements"
    USES = "Uses"
    REFERENCES = "References"
    DEFINES = "Defines"
    DEPENDS_ON = "DependsOn"
    CONTAINS = "Contains"


# Reverse views are queries over the same stored edges (target -> source), never stored twice.
REVERSE_NAMES: dict[EdgeType, str] = {
    EdgeType.CALLS: "CalledBy",
    EdgeType.IMPORTS: "ImportedBy",
    EdgeType.IMPORTS_SYMBOL: "ImportedBy",  # into a definition, where Imports never point
    EdgeType.EXTENDS: "SubclassedBy",
    EdgeType.IMPLEMENTS: "ImplementedBy",
    EdgeType.USES: "UsedBy",
    EdgeType.REFERENCES: "ReferencedBy",
    EdgeType.DEFINES: "DefinedIn",
    EdgeType.DEPENDS_ON: "DependencyOf",
    EdgeType.CONTAINS: "ContainedIn",
}


class Confidence(str, enum.Enum):
    EXACT = "exact"  # resolved through scopes and imports
    INFERRED = "inferred"  # through a receiver's type: self.x(), this.x(), a typed local, a Go receiver
    NAME = "name"  # only a unique-name guess


def node_id(*parts: str) -> int:
    """A stable 63-bit id from the parts that identify a node (never its line numbers).

    Ids survive edits that move a definition, so edges from unchanged files stay valid.
    """
    return xxhash.xxh64_intdigest("\x1f".join(parts).encode("utf-8", "surrogatepass")) >> 1


def file_node_id(path: str) -> int:
    return node_id("file", path)


def module_node_id(language_family: str, module: str) -> int:
    return node_id("module", language_family, module)


def external_module_id(language_family: str, module: str) -> int:
    return node_id("external", language_family, module)
