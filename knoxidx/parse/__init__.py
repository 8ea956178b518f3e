"""Files to facts, one file at a time: discovery, reading, tree-sitter parsing,
extraction, the parse workers. Nothing here opens a store."""
