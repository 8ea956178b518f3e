"""Past commits like a question: the history's subjects ranked against it by BM25.

A change request reads like the commit that will answer it, and a repository's earlier commits
on the same subject ("Use ryu for floats" before "Update to ryu 1.0") changed the code it is
about: bug localization's oldest history signal (similar fixed reports point at the files to
fix). Only subjects are stored, so only subjects are matched: stemmed content words, weighted
by how rare each is among the subjects read.
"""

from __future__ import annotations

import math

from knoxidx.history.store import HistoryRows
from knoxidx.retrieval.terms import STOP_WORDS, stem, unique_terms

K1 = 1.2
B = 0.75
SCAN = 5000  # the newest subjects read: an older precedent is as likely rewritten since


def subject_words(text: str) -> set[str]:
    """The stems of ``text``'s content words (identifiers split, numbers and words of two
    letters or fewer left out)."""
    return {stem(w) for w in unique_terms([text])
            if len(w) > 2 and w not in STOP_WORDS and not w.isdigit()}


def similar_commits(tables: HistoryRows, text: str, count: int, max_files: int | None = None,
                    scan: int = SCAN) -> list[int]:
    """The ``seq`` of the ``count`` commits among the newest ``scan`` whose subjects best
    match ``text``, best first (the newer of equal ones first), passing over a commit that
    changed no source file or more than ``max_files`` (a sweeping change points at
    everything)."""
    asked = subject_words(text)
    if not asked or count < 1:
        return []
    subjects = [(seq, subject_words(subject)) for seq, subject in
                tables.subjects_since(max(0, tables.next_seq() - scan))]
    if not subjects:
        return []
    frequency = dict.fromkeys(asked, 0)
    for _, words in subjects:
        for word in words & asked:
            frequency[word] += 1
    n = len(subjects)
    idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}
    mean_length = sum(len(words) for _, words in subjects) / n or 1.0
    scored = []
    for seq, words in subjects:
        shared = words & asked
        if shared:
            norm = K1 * (1 - B + B * len(words) / mean_length)
            scored.append((-sum(idf[w] for w in shared) * (K1 + 1) / (1 + norm), -seq))
    scored.sort()
    found: list[int] = []
    for _, negative_seq in scored:
        if len(found) == count:
            break
        changed = len(tables.paths_of_commit(-negative_seq))  # files of a language read
        if changed and (max_files is None or changed <= max_files):
            found.append(-negative_seq)
    return found
