"""Go: packages are directories, import paths come from ``go.mod``, methods attach to their
receiver's type, embedded fields are inheritance."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from knoxidx.core.facts import Import, NamePath, RefKind
from knoxidx.core.symbols import DEFINITION_TAG, EXTERNAL_TAG, MODULE_TAG, Symbol
from knoxidx.languages.common import BaseRules, preceding_comment
from knoxidx.languages.go.build_constraints import file_constraint, in_default_build
from knoxidx.parse import signatures as sig
from knoxidx.parse.definitions import DEF_KINDS, node_text
from knoxidx.parse.file_index import FileIndex
from knoxidx.parse.name_paths import element_path

if TYPE_CHECKING:
    from knoxidx.core.facts import FileFacts
    from knoxidx.languages.protocol import ResolverView

FAMILY = "go"
# Locals, functions and types share a scope: a local hides all three.
LOCAL_SHADOWS = frozenset({RefKind.VALUE, RefKind.CALL, RefKind.NEW})
# Declarations of several names before one type (`a, b, c int`): the query matches each name
# alone and extraction reads the type from the node. A pattern holding both made tree-sitter's
# query cursor cubic in the names (1,000 in one `var`: 6.4 s; a mangled struct of 4,000: hours;
# found by bench.fuzz), as each name's match state scans the rest for the type.
TYPE_AFTER_NAMES: frozenset[str] = frozenset({"field_declaration", "var_spec", "const_spec"})
# Which of a local's bindings reaches a use (see binding_sites): each `:=` declares a local
# scoped to its block, a case's statements, or the statement whose header declares it (`if v,
# ok := x.(T); ok {..} else {..}`), a function literal's parameters to the literal
BINDING_BLOCKS: frozenset[str] = frozenset({
    "block", "expression_case", "default_case", "type_case", "communication_case",
    "if_statement", "for_statement", "expression_switch_statement", "type_switch_statement",
    "func_literal"})
# (a later declaration is another local: none reaches an earlier use, in a loop or not)
LOOPS: frozenset[str] = frozenset()
UNTYPED_REBINDS = False
# every local placed: one declared in an `if`'s header or a block is no name outside it
PLACES_EVERY_LOCAL = True
SQUARE_TYPE_ARGS = True  # type arguments in square brackets: `List[T]`
# the query's @receiver is a literal's type (`T{name: v}`): its key is a field of a value of T,
# not the type's own member (no reference to T at the key's line)
RECEIVERS_ARE_TYPES = True
# The builtins whose result is of the type they are passed (`new(T)`, `make([]T, n)`): a name
# bound to a call of one is bound to that type (tags.scm), not to what the call returns
TYPE_ARGUMENT_CALLS: frozenset[str] = frozenset({"new", "make"})
# `xs[i].run()` reads run on an element of xs (name_paths.indexed_path): a container's declared
# type is its element's, and a named one's element is not read (graph/elements.py)
INDEXES_ELEMENTS = True
# A function literal's parameters are its own: inside a package-level variable's value (`var f =
# func(c *T) { c.m() }`) they stay bound there, not to the package as the variable's name is
FUNCTION_LITERALS: frozenset[str] = frozenset({"func_literal"})
# A `:=` declares its names past its value: `minType := minType(v)` calls the package's function
OWN_VALUE_DECLARATIONS: frozenset[str] = frozenset({"short_var_declaration"})


def element_binding(value_node: Any, source: bytes) -> tuple[NamePath, bool]:
    """`for _, v := range xs`, `v := xs[i]`, `v, ok := <-ch`: v is an element of what xs names,
    a path ending in ``[]`` that the resolver follows (a container reads as its element)."""
    if value_node.type == "slice_expression":  # `range refs[:n]`: refs's elements
        value_node = value_node.child_by_field_name("operand") or value_node
    return element_path(node_text(source, value_node)), False


def build_constraint(root: Any, source: bytes) -> str:
    return file_constraint(root, source)


def classify(sub: str, name: str, node: Any, source: bytes) -> str | None:
    if sub == "field" and _in_function_struct(node):
        return None
    return DEF_KINDS.get(sub)


# where a struct type written in place sits in a function: its fields are no package names
_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})
_NAMED_TYPES = frozenset({"type_spec", "type_alias", "source_file"})


def _in_function_struct(field: Any) -> bool:
    """Whether the field declaration ``field`` is of a struct type written in place inside a
    function (`tests := []struct{ name string }{..}`, a parameter's `opts struct{ n int }`),
    not of a named type's (nor of a package variable's, whose fields are its children)."""
    node = field.parent.parent if field.parent is not None else None  # the struct_type
    while node is not None:
        kind = node.type
        if kind in _NAMED_TYPES:
            return False
        if kind in _FUNCTIONS:
            return True
        node = node.parent
    return False


def doc_comment(node: Any, source: bytes) -> str:
    target = node
    if node.type == "type_spec" and node.parent is not None:
        target = node.parent
    if node.type in ("const_spec", "var_spec"):
        # a spec of a `var ( ... )` block has its own comment; else the declaration's is its
        own = preceding_comment(node, source)
        if own:
            return own
        while target is not None and target.type not in ("const_declaration", "var_declaration"):
            target = target.parent
        if target is None:
            return ""
    return preceding_comment(target, source)


def bound_names(node: Any) -> list[Any]:
    """The names a `@binding.names` node binds: a var spec's or parameter's (`a, b *T`), a
    `:=`'s (`a, b, err := f()`)."""
    if node.type == "short_var_declaration":
        left = node.child_by_field_name("left")
        return [c for c in left.named_children if c.type == "identifier"] if left else []
    return [c for c in node.children_by_field_name("name") if c.type == "identifier"]


def is_exported(node: Any, name: str, nested: bool, source: bytes) -> bool | None:
    return name[:1].isupper()


def package_name(raw: str) -> str:
    return raw


def decode_import(node: Any, scope: int, source: bytes) -> list[Import]:
    out: list[Import] = []
    specs = [c for c in _descendants(node) if c.type == "import_spec"]
    for spec in specs:
        path_node = spec.child_by_field_name("path")
        if path_node is None:
            continue
        path = node_text(source, path_node).strip('"`')
        line = spec.start_point[0] + 1
        name_node = spec.child_by_field_name("name")
        if name_node is None:
            out.append(Import(path, "", default_alias(path), line, scope))
        elif name_node.type == "dot":
            out.append(Import(path, "*", "", line, scope))
        elif node_text(source, name_node) == "_":
            out.append(Import(path, "", "", line, scope))
        else:
            out.append(Import(path, "", node_text(source, name_node), line, scope))
    return out


def _descendants(node: Any) -> list[Any]:
    out = []
    for child in node.named_children:
        out.append(child)
        if child.type == "import_spec_list":
            out.extend(child.named_children)
    return out


def default_alias(path: str) -> str:
    parts = path.split("/")
    last = parts[-1]
    if len(parts) > 1 and last.startswith("v") and last[1:].isdigit():
        last = parts[-2]  # example.com/lib/v2 is package lib
    return last.removeprefix("go-").replace("-", "_").replace(".", "_")


# ---- resolution ----------------------------------------------------------------------------


def package_path(path: str, layout: Any) -> str:
    directory = posixpath.dirname(path)
    best = None
    for mod_dir, module in layout.go_modules.items():
        if mod_dir == "" or directory == mod_dir or directory.startswith(mod_dir + "/"):
            if best is None or len(mod_dir) > len(best[0]):
                best = (mod_dir, module)
    if best is None:
        return posixpath.join(layout.root_name, directory) if directory else layout.root_name
    rel = directory[len(best[0]):].lstrip("/") if best[0] else directory
    return f"{best[1]}/{rel}" if rel else best[1]


class _Rules(BaseRules):
    out_of_line_methods = True
    methods_outside_module_scope = True
    # a method name on a receiver of unknown type is no call knoxidx can tell: half of such
    # unique-name guesses were a standard-library method named like one in the corpus
    # (`w.Header()` -> cmd/godoc's Header), and an unresolved call is better than a wrong one
    guess_members = False
    bases_are_fields = True  # an embedded field is named by its type
    literal_keys_of_maps = True
    bindings_block_scoped = True
    places_every_local = True
    builtin_method_names = frozenset({
        "Error", "String", "Close", "Read", "Write", "Lock", "Unlock", "RLock", "RUnlock",
        "Done", "Err", "Value", "Len", "Wait", "Add", "Store", "Load", "Swap", "Reset",
        "Bytes", "WriteString", "Printf", "Println", "Sprintf", "Errorf", "Fatal", "Fatalf",
        "Helper", "Run", "Skip", "Logf", "Log", "Parallel", "Cleanup", "Set", "Get", "Del",
        "Seek", "Flush", "Sync", "Stop", "Now",
    })
    # the universe block's functions, and its types as conversions (`string(b)`)
    builtin_functions = frozenset({
        "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
        "max", "min", "new", "panic", "print", "println", "real", "recover",
        "any", "bool", "byte", "complex64", "complex128", "error", "float32", "float64", "int",
        "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16",
        "uint32", "uint64", "uintptr",
    })
    builtin_types = frozenset({"error"})  # the one predeclared type with a method
    receivers_outside = True

    def module_keys(self, path: str, facts: FileFacts, layout: Any) -> list[str]:
        return [package_path(path, layout), "dir:" + posixpath.dirname(path)]

    def qualified_prefix(self, path: str, keys: list[str]) -> str:
        return keys[0] if keys else ""

    special_heads: frozenset[str] = frozenset()

    def special_head(self, r: ResolverView, fi: FileIndex, head: str, scope: int
                    ) -> list[Symbol] | None:
        return None  # Go has no super

    def owner_matches(self, r: ResolverView, fi: FileIndex, index: int, path: str, method: int
                     ) -> bool:
        # a method in a file the default build leaves out is no member of a type declared in
        # one it compiles: `Len` of go117's `type Union struct{}` is not go118's alias's
        return posixpath.dirname(path) == posixpath.dirname(fi.path) and (
            path == fi.path or not in_default_build(fi.path, fi.facts.build)
            or _in_default_build(r, path))


    def _package(self, r: ResolverView, import_path: str) -> list[Symbol]:
        if r.module_paths(FAMILY, import_path):
            return [(MODULE_TAG, FAMILY, import_path)]
        return [(EXTERNAL_TAG, FAMILY, import_path)]

    def import_binding(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        return self._package(r, imp.module)

    def outside_results(self, external: Symbol) -> bool:
        # a standard package's function returns the standard library's types, but for those
        # generic over the caller's (`slices.Clone(xs)`, `rand.N(d)`)
        path = external[2]
        return external[0] == EXTERNAL_TAG and "." not in path.partition("/")[0] \
            and path not in _GENERIC_STANDARD_PACKAGES

    def outside_name(self, r: ResolverView, fi: FileIndex, name: str) -> bool:
        """A name the package does not declare where the file dot-imports a package outside
        the index (`. "gopkg.in/check.v1"`'s `Suite`, `C`): that package's."""
        return any(
            w.name == "*" and not r.module_paths(FAMILY, w.module) for w in fi.wildcards)

    def import_targets(self, r: ResolverView, fi: FileIndex, imp: Import) -> list[Symbol]:
        return self._package(r, imp.module)

    def module_member(self, r: ResolverView, module: Symbol, name: str) -> list[Symbol]:
        if module[0] != MODULE_TAG:
            return []
        hits = r.module_names(FAMILY, module[2]).get(name, ())
        if len(hits) < len(r.module_paths(FAMILY, module[2])):
            r.missed_name(name)  # some file of the package lacks it: one may gain it
        return [(DEFINITION_TAG, path, index) for path, index in _built(r, hits)]

    def module_fallback(self, r: ResolverView, fi: FileIndex, name: str) -> list[Symbol]:
        # the package scope spans every file of the directory: the first other file defining
        # the name, in path order; a file before it that lacks the name is a recorded miss
        key = "dir:" + fi.path.rpartition("/")[0]  # paths are normalised: posixpath.dirname
        paths = r.module_paths(FAMILY, key)
        # the first other file of the package (a package of 100 files answers thousands of
        # misses: no list of the others per miss)
        first_other = next((p for p in paths if p != fi.path), None)
        hit = next(iter(_built(r, [h for h in r.module_names(FAMILY, key).get(name, ())
                                   if h[0] != fi.path], fi)), None)
        if hit is None or (first_other is not None and hit[0] != first_other):
            r.missed_name(name)
        if hit is not None:
            return [(DEFINITION_TAG, hit[0], hit[1])]
        for wildcard in fi.wildcards:
            found = self.module_member(r, (MODULE_TAG, FAMILY, wildcard.module), name)
            if found:
                return found
        return []


RULES = _Rules()
# standard packages with generic functions or types whose results may be the caller's types
_GENERIC_STANDARD_PACKAGES = frozenset({
    "cmp", "errors", "iter", "maps", "math/rand/v2", "slices", "sync", "sync/atomic",
    "unique", "weak",
})


def _built(r: ResolverView, hits: Sequence[tuple[str, int]], site: FileIndex | None = None
           ) -> Sequence[tuple[str, int]]:
    """Of a package's definitions of one name, those in files a default build compiles
    (build_constraints.py): two files declaring it under exclusive constraints are both real
    code, but a reference means the one the build resolves it to; all of them where no such
    file declares it (the name of a `_windows.go` file read from another). Read from a file
    of the ``site``'s package that the default build leaves out, those in files under the
    same constraint come first: the build that compiles the site compiles them."""
    if len(hits) < 2:
        return hits
    if site is not None and not in_default_build(site.path, site.facts.build):
        alike = [h for h in hits if _constraint(r, h[0]) == site.facts.build]
        if alike:
            return alike
    built = [h for h in hits if _in_default_build(r, h[0])]
    return built or hits


def _constraint(r: ResolverView, path: str) -> str:
    fi = r.index(path)
    return fi.facts.build if fi is not None else ""


def _in_default_build(r: ResolverView, path: str) -> bool:
    fi = r.index(path)
    return fi is None or in_default_build(path, fi.facts.build)


def signature_of(node: Any, source: bytes) -> sig.SignatureData:
    """A function's receiver and parameters (`a, b int` is two of type int; `func(int)`'s
    has no name), its result as written (`(int, error)`) and its type parameters."""
    params: list[sig.Parameter] = []
    for field, kind in (("receiver", sig.RECEIVER), ("parameters", sig.POSITIONAL)):
        listed = node.child_by_field_name(field)
        for child in listed.named_children if listed is not None else ():
            if child.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            type_text = sig.field_text(source, child, "type")
            param_kind = sig.VARIADIC if child.type == "variadic_parameter_declaration" else kind
            names = child.children_by_field_name("name")
            for name in names:
                params.append((sig.written(source, name), type_text, None, param_kind))
            if not names:
                params.append((None, type_text, None, param_kind))
    type_parameters = node.child_by_field_name("type_parameters")
    return (tuple(params), sig.field_text(source, node, "result"),
            tuple([sig.written(source, t) for t in type_parameters.named_children
                   if t.type != "comment"]) if type_parameters is not None else (), ())
