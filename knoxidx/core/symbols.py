"""What a name resolves to: a symbol, a tuple of its tag and two fields the tag gives a meaning.

    (DEFINITION_TAG, path, index)  a definition: the ``index``-th of the file at ``path``
    (INSTANCE_TAG, path, index)    an instance of the class/interface/type definition there
    (MODULE_TAG, family, key)      a module or package, by its family-specific key
    (EXTERNAL_TAG, family, name)   an external (third-party) module
    (FILE_TAG, path, 0)            a file, as an import target

Plain tuples rather than a record: the resolver makes and compares millions of them, hashes
them as memo keys, and a tuple literal is the cheapest of these to build (a NamedTuple's
``__new__`` runs in Python). The tags are module constants, not an ``Enum`` or class
attributes, for the same reason: each test of a tag reads one global (an inlined literal
where mypyc compiles the resolver).
"""

from __future__ import annotations

from typing import Any, Final, Literal

DEFINITION_TAG: Final = "d"
INSTANCE_TAG: Final = "i"
MODULE_TAG: Final = "m"
EXTERNAL_TAG: Final = "x"
FILE_TAG: Final = "f"

SymbolTag = Literal["d", "i", "m", "x", "f"]
# the third field is an int (a definition's index, 0 for a file) or a str (a module's key, an
# external module's name), as the tag says
Symbol = tuple[SymbolTag, str, Any]
