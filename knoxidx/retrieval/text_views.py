"""What text of a chunk an embedder reads (its "view").

MiniLM reads 256 tokens at ~7 chunks/s on two cores, so the local embedder embeds a condensed
view of each chunk by default rather than the raw text cut at 256 tokens (MODELS.md has the
figures); Voyage reads the full view.
"""

from __future__ import annotations

from knoxidx.languages.registry import KEYWORDS
from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.terms import identifier_parts, readable_identifiers

# Words every chunk of a language has (syntax, not meaning): they fill the model's 256 tokens
# and pull every vector towards "code in general". The languages' keywords, and two words
# that close or chain blocks in code of any language without being a keyword of one here.
CODE_KEYWORDS = KEYWORDS | {"then", "end"}
_KIND_WORDS = {"Function": "function", "Class": "class", "Interface": "interface",
               "Type": "type"}


def _words(identifier: str) -> str:
    return " ".join(identifier_parts(identifier))


def _name_words(qualname: str) -> list[str]:
    """``pkg.OffsetTime.withSecond`` -> ``["with second", "offset time"]``: innermost first."""
    names = [n for n in qualname.replace("::", ".").split(".") if n]
    return [w for w in (_words(n) for n in reversed(names[-3:])) if w]


def condensed_view(chunk: Chunk, identifier_limit: int = 120) -> str:
    """What the chunk defines in words first (``function with second in offset time``), the
    other definitions it holds, the file (last two path parts), signature, doc, then the
    chunk's identifiers as words without the language's keywords: a member chunk thus says
    its own name and its class's rather than only a path and a signature."""
    lines = []
    if chunk.symbol:
        name = _name_words(chunk.symbol)
        kind = _KIND_WORDS.get(chunk.kind, "")
        lines.append(" ".join(filter(None, (kind, name[0] if name else "",
                                            ("in " + " ".join(name[1:])) if name[1:] else ""))))
    elif chunk.enclosing:
        lines.append("in " + " ".join(_name_words(chunk.enclosing[-1])))
    others = [words[0] for q in chunk.symbols if q != chunk.symbol
              for words in (_name_words(q),) if words]
    if others:
        lines.append("also " + ", ".join(dict.fromkeys(others[:12])))
    parts = chunk.path.replace("\\", "/").split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    lines.append(" ".join(_words(p) for p in parts[-2:]))
    if chunk.signature:
        lines.append(chunk.signature.strip().splitlines()[0][:300])
    if chunk.doc:
        lines.append(chunk.doc.strip())
    lines.append(readable_identifiers(chunk.text, identifier_limit, keep=meaningful_identifier))
    return "\n".join(line for line in lines if line)


def meaningful_identifier(token: str) -> bool:
    """An identifier that is not one of the languages' keywords (numbers are not kept)."""
    return not token.isdigit() and token.lower() not in CODE_KEYWORDS


def full_view(chunk: Chunk) -> str:
    return f"{chunk.header}\n{chunk.text}"
