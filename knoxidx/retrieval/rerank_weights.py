"""The definition rerank's weights, each with what it does and how it was measured."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RerankWeights:
    # fused chunks whose units are ranked: one source alone often puts the answer's chunk
    # at 21-60 (a rival that several sources half-agree on outranks it in the fusion)
    # while its definition's name and lines win the rerank. 60 measured best on the
    # docstring benchmark's nine copies (20 -> 60: six reported and one held-out question
    # found, none lost; 40: five of them). Context reads its own 20 (``search_depth``)
    depth: int = 60
    # the chunk's rank counts (rank_k + 1) / (rank_k + rank), rank from 1: 5 measured better
    # than 10 on the held-out projects and on questions about types
    rank_k: float = 5.0
    lines: float = 1.0  # weight of the share of query words in the unit's lines
    name: float = 1.0  # weight of the share of query words in the unit's name
    # A chunk of at most this many lines is already definition-sized (small neighbours
    # merged): it stands for itself unless one of its definitions shares clearly more of the
    # query than the others (best unit score >= narrow_margin x the runner-up's). Picking
    # among a few small definitions by words alone picks the wrong one more often than not.
    whole_lines: int = 50
    narrow_margin: float = 3.0
    # weight of the cosine between the query's vector and the unit's chunk vector: RRF keeps
    # only the vector source's ranks; this lets how close a chunk is count in the rerank.
    # x1 measured better on both the held-out projects it was chosen on (R@10 / MRR@10
    # +0.008 / +0.021) and the reported ones (+0.006 / +0.006)
    similarity: float = 1.0
    # compare words by their stems ("Returns the copies" meets `return`, `copy`)
    stems: bool = True
    # weight of the share of query words (not in the unit's lines) in the names of what holds
    # it: enclosing definitions and the file ("... a leap year. Minguo ..." ->
    # MinguoChronology.isLeapYear rather than the same method of a sibling class)
    scope: float = 1.0
    # what the score of a unit that only declares (a type's header, fields or variants, its
    # doc, a file's head, an interface's or abstract method: no function with a body in it,
    # nothing that does what the question describes) is multiplied by, unless the question
    # reads as naming a thing (``asks_for_declaration``) or begins with the unit's own name
    # (Go's doc comments do). Such a unit's doc often sums up what its methods do ("A buffer
    # that is incrementally filled and initialized") and outranked the method asked about.
    # x0.8: the mildest weight on the plateau measured on the held-out projects; questions
    # about types pay a little for it
    declaration_only: float = 0.8
    # added to the score of a unit whose own name is the query's first word, case and all:
    # "Repository represents a git repository", "parseConfig reads ..." — Go's doc comments
    # begin so, and a question that does is about that definition. x1 measured best on the
    # held-out projects; a capitalised English word at the head of a sentence
    # ("Returns ...") is rarely a definition's exact name.
    named_first: float = 1.0
    # weight of how close the query is to the unit's own declaration vector (its kind, name,
    # holder and signature words, ``names.declaration_texts``), above the least close of the
    # units ranked. The chunk's cosine (``similarity``) is one figure for all the small
    # definitions merged into it, and the declarations source ranks a chunk by its best
    # declaration, whichever that is; this tells the siblings apart by meaning where their
    # words cannot ("... with the specified number of years subtracted": `minusYears`).
    # x1.5: the middle of the plateau (x1-x2) measured on the held-out projects
    declaration: float = 1.5
    # added to the score of a unit whose name begins with a word the question's opening
    # implies ("Checks whether ..." -> `isEmpty`, "Creates ..." -> `NewReader`, "Removes ..."
    # -> `delete`; ``intents``) and goes on with a word of the question (or, a name that is
    # the act alone, `__init__`, `of`, whose holder's name does): words alone miss those
    # pairs. x0.6 on the plateau (x0.6-x1) measured on the held-out projects
    intent: float = 0.6
    # added to the score of a method whose type is what the question calls "this ..."
    # ("Compares this OffsetTime ...", "... a copy of this date": `ChronoLocalDateImpl`,
    # not `OffsetDateTime`), when a ranked method of another type has the same name: Javadoc
    # names the receiver so, and same-named methods of sibling types share nearly all their
    # words. Such a method rises (by at most this) to just above the best ranked sibling of
    # the same name, and nothing else moves. x1 to x4 measured the same on the held-out
    # projects (three.js MRR@10 +0.003 over none, the others equal); x2 is inside that plateau
    subject: float = 2.0
    # the same lift for a method whose type the question names anywhere by a word that no
    # same-named rival's type has ("Gets the ID of the chronology - 'Minguo'":
    # `MinguoChronology.getId` over `Chronology.getId`, `IsoChronology.getId`; "Obtains a
    # JapaneseDate from ..."), past the rivals whose types it names by no such word. Docs
    # name the type a method belongs to so, and the words siblings share cannot tell them
    # apart. x1 measured on the nine copies of the retrieval benchmark: at x2 the jdk gains
    # 0.006 MRR@10 more and go-git, javac, django lose 0.002-0.007 (a lifted unit passes
    # what lay between it and its rival); at x0.5 the jdk gains 0.022 less
    holder_named: float = 1.0
    # added, times the share of the identifiers the question writes as code
    # (``terms.code_words``: ``single_precision``, ``MapVisitor``) found in the unit's
    # lines: a commit message or an agent that writes a name means that name, where the
    # vectors meet only the prose around it ("Exclude single_precision flag unless needed").
    # x0.5 and x1 measured the same on the change-request walks; x1 lost a held-out
    # docstring question in three.js and in sqlalchemy
    identifiers: float = 0.5
    # ... counting only the identifiers held by at most this share of the chunks: a name
    # written all over (`show_default` in click's core, `LocalDate` in java.time) tells no
    # definition apart, and lifting every holder buried the one a change was about to
    # begin using, and jdk's answers (0: every identifier counts; 1 % and 2 % measured the
    # same on the walks, 2 % lost jdk questions)
    identifier_share: float = 0.01
