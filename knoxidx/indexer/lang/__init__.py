"""One module per language family: what tree-sitter queries cannot say.

Each module provides the extraction hooks ``classify``, ``doc_comment``, ``is_exported``,
``decode_import`` and ``package_name``, and the resolution hooks used by
``knoxidx.graph.resolve`` (module naming and import-path mapping). The extraction hooks that
read a node's text take the file's ``source`` and slice it (``definitions.node_text``):
``node.text`` reads it back through the parse's read callback, a Python call per 256 bytes.
"""
