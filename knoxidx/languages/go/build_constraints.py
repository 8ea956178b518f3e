"""Which Go files a default build compiles: `go build` on linux/amd64 with the current Go
release and no custom tags. Two files of a package may declare the same name under mutually
exclusive constraints (`//go:build !go1.18` beside `//go:build go1.18`, `pipe.go` beside
`pipe_js.go`); both are indexed, and a reference resolves to the one this build compiles, as
the compiler and gopls (in its default configuration) do."""

from __future__ import annotations

import functools
import posixpath
import re
from typing import Any

GOOS = "linux"
GOARCH = "amd64"
# the newest release whose tag (`go1.22`) the build satisfies: every `go1.N` up to it
GO_MINOR = 22
# what a default build on linux/amd64 satisfies besides its GOOS, GOARCH and release tags
# (`cgo`: a native build with a C compiler at hand)
SATISFIED = frozenset({GOOS, GOARCH, "unix", "gc", "cgo"})
KNOWN_OS = frozenset({
    "aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
    "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos",
})
KNOWN_ARCH = frozenset({
    "386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips",
    "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le",
    "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm",
})
_RELEASE = re.compile(r"go1\.(\d+)\Z")
_TOKEN = re.compile(r"\s*(\(|\)|!|&&|\|\||[\w.]+)")


def file_constraint(root: Any, source: bytes) -> str:
    """The build constraint a file's header states, as a `//go:build` expression: its
    `//go:build` line, else its `// +build` lines (each a disjunction of conjunctions, all of
    them required); "" where it states none. Only comments before the package clause count."""
    plus_lines: list[str] = []
    for child in root.children:
        if child.type != "comment":
            break
        text = source[child.start_byte:child.end_byte].decode("utf-8", "replace")
        if text.startswith("//go:build"):
            return " ".join(text[len("//go:build"):].split())
        if text.startswith("// +build"):
            options = [" && ".join(option.split(",")) for option in text[9:].split()]
            if options:
                plus_lines.append("(" + " || ".join(f"({o})" for o in options) + ")")
    return " && ".join(plus_lines)


@functools.lru_cache(maxsize=4096)  # asked again for each method and name of the file
def in_default_build(path: str, constraint: str) -> bool:
    """Whether a default build compiles the file at ``path`` whose header states
    ``constraint`` (``file_constraint``): its name's `_GOOS`/`_GOARCH` suffix and the
    expression both satisfied. An expression that does not parse constrains nothing."""
    if not _name_matches(posixpath.basename(path)):
        return False
    if not constraint:
        return True
    try:
        return _Expression(constraint).value()
    except ValueError:
        return True


def _name_matches(name: str) -> bool:
    """The file name's implicit constraint: `x_GOOS.go`, `x_GOARCH.go`, `x_GOOS_GOARCH.go`
    (a `_test` suffix aside), as `go/build` reads it."""
    stem = name.removesuffix(".go").removesuffix("_test")
    parts = stem.split("_")
    if len(parts) < 2:
        return True
    last = parts[-1]
    if len(parts) >= 3 and parts[-2] in KNOWN_OS and last in KNOWN_ARCH:
        return parts[-2] == GOOS and last == GOARCH
    if last in KNOWN_OS:
        return last == GOOS
    if last in KNOWN_ARCH:
        return last == GOARCH
    return True


def _satisfied(tag: str) -> bool:
    release = _RELEASE.match(tag)
    if release:
        return int(release.group(1)) <= GO_MINOR
    return tag in SATISFIED


class _Expression:
    """A `//go:build` expression (`!`, `&&`, `||`, parentheses over tags), evaluated for the
    default build by recursive descent: `||` binds loosest, then `&&`, then `!`."""

    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        position = 0
        text = text.rstrip()
        while position < len(text):
            token = _TOKEN.match(text, position)
            if token is None:
                raise ValueError(f"not a build expression: {text!r}")
            self.tokens.append(token.group(1))
            position = token.end()
        self.at = 0

    def value(self) -> bool:
        result = self._or()
        if self.at != len(self.tokens):
            raise ValueError("trailing tokens")
        return result

    def _next(self) -> str:
        if self.at >= len(self.tokens):
            raise ValueError("unexpected end")
        token = self.tokens[self.at]
        self.at += 1
        return token

    def _peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def _or(self) -> bool:
        result = self._and()
        while self._peek() == "||":
            self.at += 1
            right = self._and()
            result = result or right
        return result

    def _and(self) -> bool:
        result = self._not()
        while self._peek() == "&&":
            self.at += 1
            right = self._not()
            result = result and right
        return result

    def _not(self) -> bool:
        token = self._next()
        if token == "!":
            return not self._not()
        if token == "(":
            result = self._or()
            if self._next() != ")":
                raise ValueError("unbalanced parenthesis")
            return result
        if token in (")", "&&", "||"):
            raise ValueError(f"unexpected {token!r}")
        return _satisfied(token)
