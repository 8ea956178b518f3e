"""Context accuracy on real change requests: what ``knoxidx context`` packs for a commit's
message, asked at the commit's parent, against the definitions the commit changed.

Tasks are mined from git history (:mod:`.mining`); each repository's tasks are walked in date
order with incremental indexing (:mod:`.run`); four systems are scored with one coverage rule
(:mod:`.systems`, :mod:`.coverage`, :mod:`.bm25`); :mod:`.report` makes the tables. Run with
``python -m bench.context_eval``.
"""
