"""A CommonJS module whose export is a class expression (`module.exports = class Cursor {..}`,
how eslint's token store writes its cursors) exports that class: `const Cursor =
require("./cursor")` binds it, so `class Backward extends Cursor` and `new Cursor()` reach it,
also through a chain of such modules. An anonymous class expression exports no name to reach."""

from __future__ import annotations

from knoxidx.graph import export
from knoxidx.index import Index
from tests.helpers import build

CURSOR = """\
"use strict";

module.exports = class Cursor {
    constructor() {
        this.current = null;
    }
};
"""
DECORATIVE = """\
"use strict";

const Cursor = require("./cursor");

module.exports = class DecorativeCursor extends Cursor {
    constructor(cursor) {
        super();
        this.cursor = cursor;
    }
};
"""
FILTER = """\
"use strict";

const DecorativeCursor = require("./decorative-cursor");
const Cursor = require("./cursor");

module.exports = class FilterCursor extends DecorativeCursor {
    constructor() {
        super(new Cursor());
    }
};
"""
ANONYMOUS = """\
"use strict";

module.exports = class {
    run() {}
};
"""
USE_ANONYMOUS = """\
"use strict";

const Base = require("./anonymous");

class Runner extends Base {}

module.exports = { Runner };
"""
# TypeScript names a class expression with a type_identifier, where JavaScript has an identifier
TS_CURSOR = """\
module.exports = class LegacyCursor {};
"""
TS_BACK = """\
const LegacyCursor = require("./cursor");

export class Back extends LegacyCursor {}
"""


def test_a_class_expression_assigned_to_module_exports_is_what_require_binds(repo) -> None:
    root = repo({"cursor.js": CURSOR, "decorative-cursor.js": DECORATIVE,
                 "filter-cursor.js": FILTER, "anonymous.js": ANONYMOUS,
                 "runner.js": USE_ANONYMOUS, "legacy/cursor.ts": TS_CURSOR,
                 "legacy/back.ts": TS_BACK})
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        links = {(e["type"], e["path"], e["line"], nodes[e["target"]]["path"],
                  nodes[e["target"]]["name"])
                 for e in export.edges(idx.q) if e["type"] in ("Extends", "Calls")}
    assert ("Extends", "decorative-cursor.js", 5, "cursor.js", "Cursor") in links
    assert ("Extends", "filter-cursor.js", 6, "decorative-cursor.js", "DecorativeCursor") in links
    assert ("Calls", "filter-cursor.js", 8, "cursor.js", "Cursor") in links  # `new Cursor()`
    assert ("Extends", "legacy/back.ts", 3, "legacy/cursor.ts", "LegacyCursor") in links
    # the anonymous class has no node: Runner's base stays unresolved rather than guessed
    assert not {link for link in links if link[1] == "runner.js"}
