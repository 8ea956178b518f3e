"""One module per language family: what tree-sitter queries cannot say.

Each module provides the extraction hooks ``classify``, ``doc_comment``, ``is_exported``,
``decode_import``, ``package_name`` and ``signature_of`` (a function's signature as data, see
``knoxidx.indexer.signatures``), and the resolution hooks used by
``knoxidx.graph.resolve`` (module naming and import-path mapping). ``classify``,
``doc_comment``, ``is_exported`` and ``decode_import`` (and JS's ``property_types``) take the
file's ``source`` too, whether or not a language needs it: a node's text is sliced from it
(``definitions.node_text``), never read as ``node.text``, which goes back through the parse's
read callback, a Python call per 256 bytes.
"""
