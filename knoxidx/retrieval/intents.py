"""What a question's opening words say about the name of the definition it asks for.

Doc comments, and the questions an agent writes like them, open with what the code does:
"Checks whether the path is ignored", "Creates a reader over ...", "Removes every entry ...".
Code names those acts with a few leading words that are often not the question's own: a check
is ``isIgnored`` / ``has_key`` / ``canRead``, a creation ``new`` / ``NewReader`` / ``of`` /
``from_path``, a removal ``delete`` / ``drop`` / ``pop``. Word matching (``rerank.match_score``)
misses each of these pairs; this table names them, and the definition rerank adds
``RerankWeights.intent`` to a unit whose name begins with a word its question's opening implies
and goes on with a word of the question (``isIgnored`` for "Checks whether the path is
ignored", not ``hasManifest``; a name that is the act alone, ``__init__`` or ``of``, goes on
with what holds it: the last word of its name). The question's own opening word is not
implied: the words count it already (``check_case`` for "Checks whether ...").

Only openings that say what kind of act it is are listed; "Returns the ..." alone says nothing
about the name (``size``, ``getName``, ``__len__``) and is left to the words.
"""

from __future__ import annotations

import re
from functools import lru_cache

from knoxidx.retrieval.terms import content_terms, identifier_parts, stem

# (the question's opening, the first words of the names that do it), by kind of act
_INTENTS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (  # a yes/no question: a predicate
        re.compile(r"^(returns? (true|whether)|(checks?|tests?|determines?|indicates?|reports?"
                   r"|tells?) (whether|if)|whether\b|(is|are|has|does) )", re.IGNORECASE),
        frozenset({"is", "has", "can", "should", "check", "contains", "exists", "equals",
                   "matches", "supports", "needs", "allows", "accepts", "was", "did", "are",
                   "includes", "starts", "ends", "must", "will", "any", "all"}),
    ),
    (  # a new thing
        re.compile(r"^((creates?|constructs?|builds?|makes?|instantiates?|initiali[sz]es?) "
                   r"|returns? an? new\b|obtains? an? )", re.IGNORECASE),
        frozenset({"new", "create", "make", "build", "of", "from", "init",
                   "constructor", "with", "default", "builder", "instance", "get"}),
    ),
    (  # taking something away
        re.compile(r"^(removes?|deletes?|clears?|drops?|discards?|erases?|purges?) ",
                   re.IGNORECASE),
        frozenset({"remove", "delete", "del", "drop", "clear", "pop", "discard", "unregister",
                   "evict", "erase", "purge", "reset", "delitem"}),
    ),
    (  # putting something in
        re.compile(r"^(adds?|appends?|inserts?|registers?|pushes) ", re.IGNORECASE),
        frozenset({"add", "append", "insert", "push", "put", "register", "extend",
                   "setitem"}),
    ),
    (  # another form of the same thing
        re.compile(r"^((converts?|transforms?|formats?|serializes?) |returns? (a|the) string "
                   r"representation|returns? .{0,40} as an? )", re.IGNORECASE),
        frozenset({"to", "as", "into", "convert", "format", "str", "repr", "string",
                   "serialize", "encode", "display"}),
    ),
    (  # changing a property
        re.compile(r"^sets? ", re.IGNORECASE),
        frozenset({"set", "with", "update", "put", "setattr"}),
    ),
)


# name parts that say how a type is built, not what it is (`ChronoLocalDateImpl` is a date)
BUILD_PARTS = frozenset({"impl", "abstract", "base", "default"})


@lru_cache(maxsize=1024)
def name_openings(query: str) -> frozenset[str]:
    """The first words (lower case) of the names that do what the question's opening says,
    less the opening word itself; empty when its opening names no kind of act."""
    opening = query.strip()
    found: frozenset[str] = frozenset()
    for pattern, words in _INTENTS:
        if pattern.search(opening):
            found |= words
    own = content_terms(opening.split(maxsplit=1)[0]) if found else []
    if own:
        found = frozenset(w for w in found if stem(w) != stem(own[0]))
    return found


@lru_cache(maxsize=65_536)  # the rerank asks for every unit of every search's best chunks
def act_and_object(symbol: str) -> tuple[str, tuple[str, ...]]:
    """A definition's act (its own name's first word, lower case) and the words that say what
    it acts on: the rest of its name, or when the name is the act alone (``__init__``, ``of``,
    ``new``) what the innermost thing holding it is, the last word of its name less those that
    say how it is built (``Period.of`` -> of, (period,); ``LinkedList::new`` -> new, (list,):
    a linked list is a list, and "Creates a new symbolic link" is not about it)."""
    path = symbol.replace("::", ".").replace(":", ".").split(".")
    parts = identifier_parts(path[-1]) or [path[-1].lower()]
    if len(parts) > 1:
        return parts[0], tuple(parts[1:])
    for outer in reversed(path[:-1]):
        kept = [p for p in identifier_parts(outer) if p not in BUILD_PARTS]
        if kept:
            return parts[0], (kept[-1],)
    return parts[0], ()
