"""One module per language family: what tree-sitter queries cannot say.

Each module provides the extraction hooks ``classify``, ``doc_comment``, ``is_exported``,
``decode_import`` and ``package_name``, and the resolution hooks used by
``knoxidx.graph.resolve`` (module naming and import-path mapping).
"""
