"""The ignore files' rules (``.gitignore`` at every level, ``.knoxidxignore``): compiled once
per content, asked per path, with git's precedence (a deeper file overrides, negations
included). Discovery and the watcher's event filter both ask them."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import xxhash

from knoxidx.core.files import FileTooLargeError, NotRegularFileError, read_regular_text
from knoxidx.parse.ignore_regex import ignore_spec

IGNORE_FILES = (".gitignore", ".knoxidxignore")
IGNORE_NAMES = frozenset(IGNORE_FILES)


class IgnoreRules:
    """One ignore file's patterns, compiled once per content (a walk runs on every update and
    may meet the same files thousands of times).

    Checking a path with pathspec costs ~8 us of Python per call, and discovery asks for every
    directory and source file under an ignore file (8,700 times a walk on the whole corpus,
    for a root ``.knoxidxignore`` of one line). Most paths match no pattern at all, which the
    patterns' own compiled regexes say in one C call each; only a path some pattern matches
    goes through pathspec's gitignore precedence rules. The answer is pathspec's either way.
    """

    __slots__ = ("_verdicts", "digest", "searches", "spec")

    def __init__(self, lines: list[str], digest: str = "") -> None:
        self.digest = digest  # names the content in a walk cache's record of the rules
        try:
            self.spec = ignore_spec(lines)
        except ValueError:
            # A line pathspec cannot compile (a lone "!"): git ignores such a line, and one bad
            # line in a .gitignore must not stop the index (it was a traceback).
            self.spec = ignore_spec([line for line in lines if _compiles(line)])
        searches: list[Any] = []
        prefilter = True
        for pattern in self.spec.patterns:
            if pattern.include is None:
                continue  # a comment or blank line: pathspec skips it too
            regex = getattr(pattern, "regex", None)
            if regex is None:  # not a regex pattern: no pre-filter, pathspec decides
                prefilter = False
                break
            searches.append(regex.search)
        # None: every path goes to pathspec. () : no pattern can match (an empty file).
        self.searches: tuple | None = tuple(searches) if prefilter else None
        # Verdicts already given: a pure function of these rules and the path, and a process
        # that updates again (a watcher, a server, a second Index.update) walks the same tree.
        self._verdicts: dict[str, bool | None] = {}

    def verdict(self, local: str) -> bool | None:
        """True: ignored, False: re-included (negation), None: this file says nothing.
        ``local`` is relative to the ignore file's directory, posix, no leading ``/`` or
        ``./`` (what pathspec's normalisation would leave unchanged)."""
        try:
            return self._verdicts[local]
        except KeyError:
            pass
        verdict = None
        searches = self.searches
        if searches is None or any(search(local) is not None for search in searches):
            verdict = self.spec.check_file(local).include
        if len(self._verdicts) >= VERDICTS_KEPT:
            self._verdicts.clear()
        self._verdicts[local] = verdict
        return verdict


def _compiles(line: str) -> bool:
    try:
        ignore_spec([line])
    except ValueError:
        return False
    return True


Specs = list[tuple[str, IgnoreRules]]
VERDICTS_KEPT = 200_000  # per ignore file: ~20 MB at worst, then forgotten all at once
# Compiled rules by ignore-file content: bounded, since a long-lived process (a watcher, a
# server re-indexing) may see many versions of many files.
_RULES_CACHE: dict[str, IgnoreRules] = {}
_RULES_CACHE_MAX = 512


def _rules_for(text: str) -> IgnoreRules:
    rules = _RULES_CACHE.get(text)
    if rules is None:
        if len(_RULES_CACHE) >= _RULES_CACHE_MAX:
            _RULES_CACHE.clear()
        digest = xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))
        rules = _RULES_CACHE[text] = IgnoreRules(text.splitlines(), digest)
    return rules


def load_ignore_files(directory: str, names: set[str], prefix: str,
                      skip: Callable[[str, str], None] | None = None) -> Specs:
    """The rules of the ignore files among ``names``; one that is not a regular file (never
    opened for reading: a FIFO would wait for a writer for ever), is over a MiB or cannot be
    read is left out, and said to ``skip`` with its reason."""
    specs = []
    for name in IGNORE_FILES:
        if name not in names:
            continue
        try:
            text = read_regular_text(os.path.join(directory, name))
        except OSError as exc:
            if skip is not None:
                skip(prefix + name, _reason(exc))
            continue
        specs.append((prefix, _rules_for(text)))
    return specs


def _reason(exc: OSError) -> str:
    if isinstance(exc, NotRegularFileError):
        return "not_a_file"
    return "too_large" if isinstance(exc, FileTooLargeError) else "unreadable"


def is_ignored(specs: Specs, rel: str, is_dir: bool) -> bool:
    """Whether the rules in force (``specs``, the outermost first) leave ``rel`` out."""
    ignored = False
    for prefix, rules in specs:
        local = rel[len(prefix):] if prefix else rel
        if is_dir:
            local += "/"
        # Later (deeper) files override earlier ones, as in git; negations included.
        include = rules.verdict(local)
        if include is not None:
            ignored = include
    return ignored


def rules_key(specs: Specs) -> tuple:
    """What a walk cache records of the rules in force: the content of each file, by where
    it applies."""
    return tuple((prefix, rules.digest) for prefix, rules in specs)
