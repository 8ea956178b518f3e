"""One file in, everything the store needs out: the work a parse worker does.

``read_and_extract`` reads, hashes and extracts a file and also prepares its node rows and
module keys, so the parent process only writes rows: the parent is the bottleneck of a cold
build (one writer), the workers are not.
"""

from __future__ import annotations

import marshal
import os
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import xxhash

from knoxidx.core.facts import BASE_KINDS, Definition, FileFacts, base_references, dump_facts
from knoxidx.core.files import FileTooLargeError, read_regular
from knoxidx.core.model import NodeKind, file_node_id
from knoxidx.languages.registry import BY_NAME
from knoxidx.parse.definitions import is_anonymous
from knoxidx.parse.discovery import SourceFile
from knoxidx.parse.extract import ParseTimeoutError, extract_rows
from knoxidx.parse.file_index import FUNCTION, TYPE_KINDS, definition_ids
from knoxidx.parse.signatures import stored_signature

BINARY_SNIFF = 8192
# How much a file may have grown between discovery's stat and its read (see read_and_extract).
GROWTH_BYTES = 1 << 20
# A file whose parse or extraction met the parse worker's memory cap (tree-sitter's error
# recovery can take gigabytes over a few kB of mangled code): said so, not as the bare
# "MemoryError: " or the SystemError a C callback turns it into (found by bench.fuzz)
OUT_OF_MEMORY = ("ran out of memory while reading (past the parse worker's memory cap, "
                 "which KNOXIDX_WORKER_MEMORY_MB raises); not indexed")
DefinitionName = tuple[str, str, str, str, str]  # name, kind, qualname, parent kind, owner
# What a parse worker is handed for one file: the root, the file, the content hash the index
# has for it (None: new), the layout, and whether the update needs the file's definition names
# (``ReadResult.names``; an update that re-resolves every file consults none); optionally a
# sixth, a picklable ``chunker(path, source, source_hash, facts)`` that makes the file's
# retrieval chunks from what the worker has at hand (None: not chunked). The update layer
# hands it down (``update.chunk_refresh.chunk_source``): this layer knows nothing of chunks.
# Optionally a seventh: whether a minified file is indexed too (else skipped, see looks_minified).
Job = (tuple[str, SourceFile, str | None, Any, bool]
       | tuple[str, SourceFile, str | None, Any, bool, Any]
       | tuple[str, SourceFile, str | None, Any, bool, Any, bool])


@dataclass(frozen=True, slots=True)
class ReadResult:
    path: str
    language: str
    size: int
    mtime_ns: int
    status: str  # ok | unchanged | binary | minified | unreadable | timeout | error
    hash: str = ""
    message: str = ""
    blob: bytes | None = None  # serialised FileFacts (dump_facts), stored as is
    iface: str = ""
    lines: int = 0
    rows: list[tuple] | None = None  # node rows, file_id appended by the writer
    module_keys: tuple[str, ...] = ()
    names: frozenset[DefinitionName] = frozenset()
    # its chunks (``update.chunk_refresh.ChunkedFile``), when the job asked for them: made here,
    # in parallel and from the bytes and facts at hand, rather than after the graph is written
    chunked: Any = None


def file_hash(data: bytes) -> str:
    """The content hash an update keys a file on (stored in ``files.hash``)."""
    return xxhash.xxh3_128_hexdigest(data)


def read_and_extract(job: Job) -> ReadResult:
    """Read one file, skip it if its hash is unchanged, else extract it. Never raises."""
    root, src, known_hash, layout, names = job[:5]
    chunker = job[5] if len(job) > 5 else None
    keep_minified = len(job) > 6 and bool(job[6])
    base = (src.path, src.language, src.size, src.mtime_ns)
    try:
        # no more than discovery saw, and some growth: a file rewritten or appended to since
        # (a log that ends in .js) was read whole, whatever its size now; and a regular file
        # still (a FIFO put in its place kept a worker waiting for a writer for ever)
        data = read_regular(os.path.join(root, src.path), src.size + GROWTH_BYTES)
    except FileTooLargeError:
        return ReadResult(*base, "unreadable", message=(
            f"the file grew by over {GROWTH_BYTES >> 20} MiB while it was being indexed (still "
            "being written?); not indexed this time"))
    except OSError as exc:
        return ReadResult(*base, "unreadable", message=exc.strerror or str(exc))
    if b"\0" in data[:BINARY_SNIFF]:
        return ReadResult(*base, "binary")
    # judged before the hash: an unchanged file is skipped or indexed as the setting says now
    limit = BY_NAME[src.language].minified_line_chars
    if limit and not keep_minified and looks_minified(data, limit):
        return ReadResult(*base, "minified", message=(
            f"minified (over {limit} characters a line on average); not indexed: "
            "`[index] minified = true` in knoxidx.toml indexes it"))
    digest = file_hash(data)
    if digest == known_hash:
        return ReadResult(*base, "unchanged", digest)
    message = ""
    source = data  # as the chunks quote it: invalid bytes decoded as U+FFFD, not replaced below
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"invalid UTF-8 at byte {exc.start}; read with replacement characters"
        # The query's text predicates (`#eq?`, `#match?`) decode the nodes they test strictly:
        # an invalid byte in one failed the whole file, or crashed py-tree-sitter (SIGSEGV).
        data = valid_utf8(data)
    try:
        facts, notes = extract_rows(src.path, data, src.language)  # references as rows
        rules = BY_NAME[src.language].plugin.RULES
        keys = tuple(rules.module_keys(src.path, facts, layout))
        ids = definition_ids(facts)
        rows = node_rows(facts, rules.qualified_prefix(src.path, list(keys)),
                         rules.module_joiner, rules.separator, ids)
    except ParseTimeoutError as exc:
        return ReadResult(*base, "timeout", digest, str(exc))
    except Exception as exc:  # noqa: BLE001 - a crash in one file must not lose the others
        if out_of_memory(exc):
            return ReadResult(*base, "error", digest, OUT_OF_MEMORY)
        return ReadResult(*base, "error", digest, f"{type(exc).__name__}: {exc}")
    if facts.error_nodes and not message:
        message = f"{facts.error_nodes} syntax error(s); indexed what parsed"
    message = "; ".join([message, *notes]) if message else "; ".join(notes)
    base_refs = base_references(facts.refs)  # the blob and the fingerprint both hold them
    chunked = None
    if chunker is not None:
        # one worker of a pool that fills the cores: the tokenizer's own threads would only
        # contend, and reserve memory against the worker's cap
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        chunked = chunker(src.path, source, digest, facts)
    return ReadResult(
        *base, "ok", digest, message, dump_facts(facts, ids, base_refs),
        interface_fingerprint(facts, base_refs),
        facts.lines, rows, keys, definition_names(facts) if names else frozenset(), chunked,
    )


def looks_minified(data: bytes, limit: int) -> bool:
    """Whether ``data`` averages over ``limit`` characters a line: a minifier's output, a
    whole library on a line or a few, never a file written to be read (whose one long line
    of data the rest of the file outweighs)."""
    breaks = data.count(b"\n")
    bound = limit * (breaks + (not data.endswith(b"\n"))) + breaks  # the breaks are no line's
    if len(data) <= bound:  # characters never outnumber bytes: no decoding
        return False
    return len(data.decode("utf-8", "replace")) > bound


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised because of, a failed allocation: a MemoryError out of
    a callback reaches the caller as a SystemError caused by it."""
    return any(isinstance(e, MemoryError) for e in (exc, exc.__cause__, exc.__context__))


def valid_utf8(data: bytes) -> bytes:
    """``data`` with every byte that is not part of valid UTF-8 replaced by ``?``: the same
    length, so each byte offset and line into it is the same in the file."""
    return data.decode("utf-8", "surrogateescape").encode("utf-8", "replace")


def node_rows(facts: FileFacts, prefix: str, joiner: str, sep: str,
              ids: list[int] | None = None) -> list[tuple]:
    """Rows for the nodes table in NODE_COLUMNS order, without the trailing file_id; ``ids``:
    the definitions' node ids, when the caller has them (``definition_ids``)."""
    spec = BY_NAME[facts.language]
    family, language, path = spec.family, facts.language, facts.path
    rows: list[tuple] = [(
        file_node_id(path), NodeKind.FILE.value, path.rsplit("/", 1)[-1], path, None, None,
        1, max(facts.lines, 1), 0, None, language, family, "", "", 1, "", 0, None, None, None,
        None, None, None,
    )]
    if ids is None:
        ids = definition_ids(facts)
    defs = facts.defs
    for i, d in enumerate(defs):
        # a method of an anonymous class is reached only through its base's: never guessed
        # as the member a receiver of unknown type calls (as before it was a class of its own)
        member = bool(d.owner) or (d.parent >= 0 and defs[d.parent].kind in TYPE_KINDS
                                   and not is_anonymous(defs[d.parent]))
        qualified = d.qualname if sep == "." else d.qualname.replace(".", sep)
        rows.append((
            ids[i], d.kind, d.name, f"{prefix}{joiner}{qualified}" if prefix else qualified,
            i, ids[d.parent] if d.parent >= 0 else None, d.start_line, d.end_line,
            d.start_byte, d.end_byte, language, family, d.signature, d.doc,
            None if d.exported is None else int(d.exported), d.owner, int(member),
            *((d.cyclomatic, d.nesting, d.loc) if d.cyclomatic else _NO_COMPLEXITY),
            *(stored_signature(d.signature_data) if d.signature_data else _NO_SIGNATURE),
        ))
    return rows


_NO_COMPLEXITY = (None, None, None)  # a definition other than a function's
_NO_SIGNATURE = (None, None, None)


def named_definitions(path: str, rows: list[tuple]) -> list[tuple]:
    """(family, name, owner, path, def_index, kind, member) of each definition among a file's
    :func:`node_rows`: what ``store.all_named_defs`` answers for it, without the query."""
    return [(r[11], r[2], r[15], path, r[4], r[1], r[16]) for r in rows if r[4] is not None]


# The fields of a definition and an import that other files' resolution can consult.
# kind, name, qualname, parent, owner, type_hint, exported, signature_data (what resolution
# reads of a declaration beyond its type's name: a return type's arguments, `list[T]`'s T, a
# decorator, a parameter's type)
_INTERFACE_DEF = itemgetter(0, 1, 2, 3, 11, 12, 10, 16)
_INTERFACE_IMPORT = itemgetter(0, 1, 2, 4, 5)  # module, name, alias, scope, reexport


def interface_fingerprint(facts: FileFacts, base_refs: tuple[Any, ...] | None = None) -> str:
    """A hash of what other files' resolution can consult in this one (not line numbers or
    function bodies): if it is unchanged, no other file needs re-resolving. ``marshal`` of
    plain tuples, built in C (``repr`` cost three times as much), in format version 0: later
    versions write shared objects as back-references and mark interned strings, so equal
    facts could give different bytes. ``base_refs``: ``base_references(facts.refs)``, when the
    caller has them already."""
    if base_refs is None:
        base_refs = base_references(facts.refs)
    defs = facts.defs
    has_children = {d.parent for d in defs}
    return xxhash.xxh3_64_hexdigest(marshal.dumps((
        facts.package, facts.build,
        tuple(map(_INTERFACE_DEF, defs)),
        tuple(map(_INTERFACE_IMPORT, facts.imports)),
        tuple(b[:4] for b in facts.bindings  # not where: a line moved changes no other file
              if b.scope < 0 or "." in b.name or defs[b.scope].kind != FUNCTION
              or b.scope in has_children),
        tuple([(r[1], r[2]) for r in base_refs]),  # (path, scope): records or plain rows
        tuple((i.type_path, i.trait_path) for i in facts.impls),
    ), 0))


def added_definitions(old: FileFacts, new: FileFacts) -> list[Definition] | None:
    """The definitions ``new`` adds to ``old`` when adding them is all that changed in what other
    files can see (everything else equal, scopes compared by qualified name since indexes
    shift), and no new name takes over a lookup an existing name, import or binding answered;
    else None. Such an addition can only change another file's resolution where that file
    looked one of the new names up and missed, which the resolver records as a ``name:`` key:
    so appending a function re-resolves one file, not every importer."""
    def qual(facts: FileFacts, scope: int) -> str:
        return facts.defs[scope].qualname if scope >= 0 else ""

    old_names = {d.qualname for d in old.defs}
    keep = [i for i, d in enumerate(new.defs) if d.qualname in old_names]
    if len(keep) == len(new.defs) or _interface_view(old, range(len(old.defs))) != \
            _interface_view(new, keep):
        return None
    taken = {(qual(old, d.parent), d.name) for d in old.defs}
    taken.update((qual(old, i.scope), i.alias) for i in old.imports)
    taken.update((qual(old, b.scope), b.name) for b in old.bindings)
    kept = set(keep)
    added = [d for i, d in enumerate(new.defs) if i not in kept]
    if any((qual(new, d.parent), d.name) in taken for d in added):
        return None
    rules = BY_NAME[new.language].plugin.RULES if new.language in BY_NAME else None
    if rules is not None and any(rules.looked_up_as(d) for d in added):
        return None  # found under another name than its own (a pytest fixture's `name=`)
    return added


def _interface_view(facts: FileFacts, keep: Any) -> tuple:
    """What :func:`interface_fingerprint` covers, restricted to the definitions ``keep`` (and
    what is scoped inside them or at the top), with scopes named instead of numbered."""
    defs = facts.defs
    kept = set(keep)

    def qual(scope: int) -> str:
        return defs[scope].qualname if scope >= 0 else ""

    def visible(scope: int) -> bool:
        while scope >= 0:
            if scope not in kept:
                return False
            scope = defs[scope].parent
        return True

    has_children = {defs[i].parent for i in kept}
    return (
        facts.package, facts.build,
        [(defs[i].kind, defs[i].name, defs[i].qualname, qual(defs[i].parent), defs[i].owner,
          defs[i].type_hint, defs[i].exported, defs[i].signature_data) for i in sorted(kept)],
        [(i.module, i.name, i.alias, qual(i.scope), i.reexport)
         for i in facts.imports if visible(i.scope)],
        [(qual(b.scope), b.name, b.type_path, b.is_call) for b in facts.bindings
         if visible(b.scope) and (b.scope < 0 or "." in b.name or defs[b.scope].kind != FUNCTION
                                  or b.scope in has_children)],
        [(r.path, qual(r.scope)) for r in facts.refs
         if r.kind in BASE_KINDS and visible(r.scope)],
        [(i.type_path, i.trait_path) for i in facts.impls],
    )


def definition_names(facts: FileFacts | None) -> frozenset[DefinitionName]:
    """What name-based lookups can see of a file's definitions."""
    if facts is None:
        return frozenset()
    defs = facts.defs
    return frozenset(
        (d.name, d.kind, d.qualname, defs[d.parent].kind if d.parent >= 0 else "", d.owner)
        for d in defs
    )
