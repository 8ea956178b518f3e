"""Which Go files a default build (linux/amd64, the current release, no custom tags)
compiles: a file name's `_GOOS`/`_GOARCH` suffix and its `//go:build` (or `// +build`) line."""

from __future__ import annotations

import pytest

from knoxidx.languages.go.build_constraints import in_default_build
from knoxidx.parse.extract import extract


@pytest.mark.parametrize(("path", "constraint", "built"), [
    ("a/pipe.go", "", True),
    ("a/pipe_js.go", "", False),
    ("a/x_linux.go", "", True),
    ("a/x_windows_test.go", "", False),
    ("a/x_linux_amd64.go", "", True),
    ("a/x_linux_arm64.go", "", False),
    ("a/linux.go", "", True),  # a name's first element constrains nothing
    ("a/x_unix.go", "", True),  # `unix` is a tag, no file-name suffix
    ("a/t_go117.go", "!go1.18", False),
    ("a/t_go118.go", "go1.18", True),
    ("a/gen.go", "ignore", False),
    ("a/x.go", "go1.7 && gc && !android && !ios && !js", True),
    ("a/x.go", "windows || plan9 || (js && wasm)", False),
    ("a/x.go", "unix && !(bad || worse)", True),
    ("a/x.go", "linux &&", True),  # unreadable: constrains nothing
])
def test_what_a_default_build_compiles(path: str, constraint: str, built: bool) -> None:
    assert in_default_build(path, constraint) is built


def test_the_constraint_is_read_from_the_header_only() -> None:
    go_build = extract("a.go", b"// Copyright\n\n//go:build  !go1.18\n// +build !go1.18\n\n"
                       b"package a\n\n//go:build ignore\n", "go")
    assert go_build.build == "!go1.18"
    plus = extract("b.go", b"// +build linux,386 darwin,!cgo\n// +build go1.9\n\npackage b\n",
                   "go")
    assert plus.build == "((linux && 386) || (darwin && !cgo)) && ((go1.9))"
    assert not in_default_build("b.go", plus.build)
    assert extract("c.go", b"package c\n", "go").build == ""
