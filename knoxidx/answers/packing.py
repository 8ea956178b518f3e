"""Packing a context: ranked candidates into a token budget, as markdown blocks.

Greedy in rank order, counted with the real tokenizer (:mod:`.tokens`): whole definitions while
they are ranked high enough, signatures for the rest, overlapping or adjacent ranges of a file
merged into one block, nothing shown twice. No block takes more than ``block_share`` of the
budget: a longer definition is shown *elided*, its signature and the window of its lines that
best matches the question, with ``…`` lines saying which line numbers were left out; a class
that is not itself a hit is shown as its *outline* (its first line and its members' first
lines); the top hit's whole file is shown only while it counts at most ``top_file_share`` of
the budget, never cut. What budget the greedy pass leaves goes to the graph neighbours it
passed over for ranking too low, in rank order, and what that leaves to the longer of them,
whole within a hit's ``block_share``; and what is still left to search's own results, in its
order, each less what is shown of its ends, whole within a hit's share or passed over (as they
alone would be packed: the hits come from search's first chunks only); and only then to the
neighbours that ``after_search`` relations alone brought in (used types, imports), as to the
neighbours waiting before. The pack ends with the
best candidates it left out, one line each, so that an agent can ask for them. The rendered
markdown is counted once more at the end, so it never exceeds the budget. The ranking itself
is :mod:`.context`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from knoxidx.answers.blocks import Block
from knoxidx.answers.pack_files import Files
from knoxidx.parse.file_index import TYPE_KINDS
from knoxidx.retrieval.tokens import TokenCounter

if TYPE_CHECKING:
    from knoxidx.answers.context_candidates import Candidate, ContextWeights

FILE_KIND = "file"  # the candidate standing for the top hit's whole file
MIN_HEAD_LINES = 6  # the top hit's head is shown rather than its signature if this much fits
MIN_FILL_TOKENS = 48  # a block of a line or two, its header and fences: less left, no fill
_MERGE_GAP = 2  # ranges of a file this few lines apart are shown as one block (one header)
MIN_BLOCK_CAP = 512  # the per-block share never cuts below this many tokens (small budgets)
_CONTIGUOUS = frozenset({"full", "excerpt", "truncated"})  # blocks that show start..end whole
_MAX_LEAD_IN = 200  # doc comment and decorator lines above a signature, searched at most
_LEAD_IN = ("//", "/*", "*", "#", "@", "--")  # comments, attributes, decorators, annotations
_MAX_HEAD_LINES = 5  # an elided definition's head: its signature, at most this many lines
_LEFT_OUT_TITLE = "Left out (the next best; ask for any of them by path and lines):"


class Packer:
    def __init__(self, files: Files, counter: TokenCounter, budget: int,
                 w: ContextWeights, wanted: frozenset[str] = frozenset()) -> None:
        self.files = files
        self.counter = counter
        self.total = budget
        # room kept for the list of what was left out
        self.budget = budget - (min(budget // 10, 160) if w.left_out else 0)
        self.cap = max(MIN_BLOCK_CAP, int(budget * w.block_share))
        self.w = w
        self.wanted = wanted
        self.blocks: list[Block] = []  # in the order they were first placed
        self.used = 0
        self.final_tokens = 0
        self.left_out: list[tuple[int, Candidate]] = []
        self.shown_fill: set[int] = set()  # search results the fill found shown already

    # ---- the greedy pass ---------------------------------------------------------------

    def pack(self, ranked: list[Candidate],
             fill: Callable[[], list[Candidate]] | None = None) -> None:
        """``ranked`` in their order, then what budget is left to the results of ``fill``
        (search's own, in its order; read only if a block still fits)."""
        if not ranked:
            return
        top_score = ranked[0].score or 1.0
        waiting: list[tuple[int, Candidate]] = []
        last: list[tuple[int, Candidate]] = []  # packed after search's own results
        for position, cand in enumerate(ranked):
            if self._covered(cand):
                continue
            if cand.hit_rank is None and cand.links and all(
                    relation in self.w.after_search for relation, _ in cand.links):
                last.append((position, cand))
                continue
            if not any(self._place(cand, mode) for mode in self._modes(cand, position,
                                                                          top_score)):
                waiting.append((position, cand))
        # budget the greedy pass left unused (neighbours below the cut-off were not shown
        # whole nor elided) goes to them, in rank order; what that still leaves, to those
        # longer than their share, whole within a hit's (after, so it displaces none)
        for stretched in (False, True) if self.w.fill_neighbours else ():
            for position, cand in waiting:
                if cand.hit_rank is None and not self._covered(cand):
                    any(self._place(cand, mode) for mode in self._modes(
                        cand, position, top_score, filling=True, stretched=stretched))
        if fill is not None and self.budget - self.used >= MIN_FILL_TOKENS:
            self._fill(fill())
            for _, cand in waiting:  # what the fill now shows is in the pack, not left out
                if not self.placed(cand):
                    self._covered(cand)
        for stretched in (False, True):  # as the neighbours waiting above, in rank order
            for position, cand in last:
                if not self.placed(cand) and not self._covered(cand):
                    any(self._place(cand, mode) for mode in self._modes(
                        cand, position, top_score, filling=True, stretched=stretched))

    def _fill(self, fill: list[Candidate]) -> None:
        """The budget still unused: search's own results in its order (its deeper ones are
        candidates of no other pass), each less what blocks placed show of its ends, whole
        within a hit's share or passed over, as search's results alone would be packed."""
        for cand in fill:
            if self.budget - self.used < MIN_FILL_TOKENS:
                return
            if self._holding(cand) is not None:  # shown already: neither listed nor left out
                self.shown_fill.add(id(cand))
                continue
            start, end = self._trimmed(cand)
            room = min(self.cap, self.budget - self.used)
            if start <= end and self.files.fits(cand.path, start, end, room):
                self._place(cand, "full", (start, end))

    def _trimmed(self, cand: Candidate) -> tuple[int, int]:
        """``cand``'s lines less what the blocks placed show of its ends (a block wholly
        inside them is merged into it, or replaced by it: :meth:`_place`)."""
        start, end = cand.start, min(cand.end, len(self.files.lines(cand.path)))
        for s, e in sorted(r for b in self.blocks if b.path == cand.path
                           and not (cand.start <= b.start and b.end <= cand.end)
                           for r in b.shown()):
            if s <= start <= e:
                start = e + 1
            if s <= end <= e:
                end = s - 1
        return start, end

    def placed(self, cand: Candidate) -> bool:
        return id(cand) in self.shown_fill or any(
            item is cand for block in self.blocks for item in block.items)

    def _modes(self, cand: Candidate, position: int, top_score: float,
               filling: bool = False, stretched: bool = False) -> list[str]:
        if cand.kind == FILE_KIND:  # whole within its share, or not at all
            room = min(self.total * self.w.top_file_share, self.budget - self.used)
            return ["full"] if self.files.fits(cand.path, cand.start, cand.end, room) else []
        lines = cand.end - cand.start + 1
        hit = cand.hit_rank is not None
        limit = self.w.type_full_lines if cand.kind in TYPE_KINDS else self.w.max_full_lines
        ranked_high = filling or cand.relevance >= self.w.full_cutoff * top_score
        full_ok = not cand.forced_signature and (
            hit or cand.kind == "imports" or (ranked_high and lines <= limit)
        )
        if cand.match is not None:  # a chunk of a longer definition: whole if it is short
            room = self.total * self.w.hit_full_share
        elif hit or cand.kind == "imports":
            room = self.cap
        else:
            room = self.total * self.w.neighbour_share
        if stretched:  # the budget nothing else wants: whole within a hit's share, or not
            room = min(max(room, self.cap), self.budget - self.used)
            return ["full"] if full_ok and self.files.fits(cand.path, cand.start, cand.end,
                                                           room) else []
        if filling:  # what no longer fits is not counted
            room = min(room, self.budget - self.used)
        modes = ["full"] if full_ok and self.files.fits(cand.path, cand.start, cand.end,
                                                         room) else []
        if cand.kind != "imports" and (hit or (
                self.w.neighbour_elided and cand.kind not in TYPE_KINDS
                and not cand.forced_signature and ranked_high)):
            modes.append("elided")  # too long for its share: signature and matching lines
        if position == 0 and cand.kind != "imports":
            modes.append("truncated")  # the top hit: its head rather than only its signature
        if not hit and cand.outline and not cand.forced_signature:
            modes.append("outline")
        if cand.kind != "imports" and cand.node_id is not None and (
                hit or position == 0 or self.w.neighbour_signatures):
            modes.append("signature")
        if position == 0 and cand.kind != "imports":
            modes.append("truncated-short")  # and always shown, in part if need be
        return modes

    def _covered(self, cand: Candidate) -> bool:
        """Inside a range already shown: recorded there (not in its header), costs
        nothing."""
        block = self._holding(cand)
        if block is not None:
            block.items.append(cand)
        return block is not None

    def _holding(self, cand: Candidate) -> Block | None:
        """The block showing all of ``cand``'s lines, if one does."""
        return next((block for block in self.blocks if block.path == cand.path
                     and block.mode != "signature" and any(
                         start <= cand.start and cand.end <= end
                         for start, end in block.shown())), None)

    def _place(self, cand: Candidate, mode: str, span: tuple[int, int] | None = None) -> bool:
        lines = self.files.lines(cand.path)
        if mode == "signature":
            text = cand.signature.strip() or (
                lines[cand.start - 1].strip() if cand.start <= len(lines) else "")
            masked: Counter[str] = Counter()
            if self.files.mask is not None and cand.signature.strip():  # the graph's copy
                shown = self.files.mask(text)
                text, masked = shown.text, shown.counts()
            block = Block(cand.path, cand.start, cand.end, mode, [cand], cand.language,
                           body=text.split("\n") if text else [], masked=masked)
            return bool(text) and self._commit(block, [])
        if mode in ("truncated", "truncated-short"):
            short = mode == "truncated-short"
            head = self._truncated(cand, 1 if short else MIN_HEAD_LINES, terse=short)
            return head is not None and self._commit(head, [])
        if mode in ("elided", "outline"):
            gapped = self._elided(cand) if mode == "elided" else self._outline(cand)
            return gapped is not None and self._commit(gapped, [])
        start, end = span or (cand.match if mode == "excerpt" and cand.match
                              else (cand.start, cand.end))
        end = min(end, len(lines))
        if start > end or (mode == "excerpt" and
                           self.files.span_tokens(cand.path, start, end) > self.cap):
            return False
        # what this range overlaps or touches in the same file is merged into one block; a
        # signature, outline or elided block wholly inside it is replaced by it
        touching = [b for b in self.blocks if b.path == cand.path and (
            (b.mode in _CONTIGUOUS and start <= b.end + 1 + _MERGE_GAP
             and end >= b.start - 1 - _MERGE_GAP)
            or (b.mode not in _CONTIGUOUS and start <= b.start and b.end <= end))]
        ranged = [b for b in touching if b.mode in _CONTIGUOUS]
        start = min([start] + [b.start for b in ranged])
        end = max([end] + [b.end for b in ranged])
        if ranged and not (mode == "full" and all(b.mode == "full" for b in ranged)):
            mode = "excerpt"
        items = [i for b in touching for i in b.items] + [cand]
        block = Block(cand.path, start, end, mode, items,
                       cand.language or (touching[0].language if touching else ""),
                       body=lines[start - 1:end])
        return self._commit(block, touching)

    def _elided(self, cand: Candidate) -> Block | None:
        """The definition's signature, then the window of its lines that holds the most of
        the question's words (and of its chunks that search hit) within the room left and the
        block's share; at least ``MIN_HEAD_LINES`` lines of it."""
        lines = self.files.lines(cand.path)
        last = min(cand.end, len(lines))
        signature_at = self._signature_line(cand, last)
        head_end = min(last, signature_at - 1 + max(1, min(
            _MAX_HEAD_LINES, len(cand.signature.strip().split("\n")) if cand.signature else 1)))
        low, high = head_end + 1, last
        if low > high:
            return None
        head = [(cand.start, cand.start), (signature_at, head_end)]
        probe = Block(cand.path, cand.start, last, "elided", [cand], cand.language,
                      ranges=[(cand.start, cand.start)])  # no body: the header and fences
        room = min(self.budget - self.used, self.cap) - self._tokens(probe) \
            - sum(self.files.span_tokens(cand.path, s, e) for s, e in head) \
            - 3 * self.files.count(_elision(1, 2))
        if cand.matches:  # a hit inside the definition: about as much as its chunk
            room = min(room, max(self.files.span_tokens(cand.path, s, e)
                                 for s, e in cand.matches))
        elif cand.hit_rank is None:  # a graph neighbour: its share
            room = min(room, int(self.total * self.w.neighbour_share))
        if room < MIN_HEAD_LINES:  # no window fits: the long body is not counted
            return None
        counts = self.files.tokens(cand.path, cand.start, last)
        # a line's worth: the question's words on it, and half a word inside a chunk search hit
        on_lines = self.files.wanted_on_lines(cand.path, low, high, self.wanted)
        weight = [len(found) + 0.5 * any(s <= i <= e for s, e in cand.matches)
                  for i, found in enumerate(on_lines, low)]
        best, best_at, total, spent, left = -1.0, (low, low - 1), 0.0, 0, low
        for right in range(low, high + 1):  # the best window of at most ``room`` tokens
            spent += counts[right - 1]
            total += weight[right - low]
            while spent > room and left <= right:
                spent -= counts[left - 1]
                total -= weight[left - low]
                left += 1
            if left <= right and total > best:
                best, best_at = total, (left, right)
        start, end = best_at
        if best > 0:  # the matching lines in the middle of the window, not at one edge
            least = 1 if any(weight[i - low] >= 1 for i in range(start, end + 1)) else 0.5
            weighted = [i for i in range(start, end + 1) if weight[i - low] >= least]
            start, end = weighted[0], weighted[-1]
            spent = self.files.span_tokens(cand.path, start, end)
            grown = True
            while grown:
                grown = False
                for step in ((start - 1, start - 1), (end + 1, end + 1)):
                    line = step[0]
                    if low <= line <= high and spent + counts[line - 1] <= room:
                        spent += counts[line - 1]
                        start, end = min(start, line), max(end, line)
                        grown = True
        if end - start + 1 < MIN_HEAD_LINES:
            return None
        return self._gapped(cand, "elided", [*head, (start, end)], last)

    def _signature_line(self, cand: Candidate, last: int) -> int:
        """The line the definition's signature starts on: below its doc comments and
        decorators (an elided block shows the signature, not the second line of a doc)."""
        first = cand.signature.strip().split("\n")[0].strip()[:40]
        if not first:
            return cand.start
        lines = self.files.lines(cand.path)
        for at in range(cand.start, min(last, cand.start + _MAX_LEAD_IN) + 1):
            line = lines[at - 1].strip()
            if line.startswith(first):
                return at
            if line and not line.startswith(_LEAD_IN):
                break  # code that is not the signature: the signature is not known here
        if cand.key.startswith("range:"):  # a chunk holding smaller definitions above its own
            for at in range(cand.start, last + 1):
                if lines[at - 1].strip().startswith(first):
                    return at
        return cand.start

    def _outline(self, cand: Candidate) -> Block | None:
        """A type's first lines and its members' first lines, as many as the room allows."""
        last = min(cand.end, len(self.files.lines(cand.path)))
        head_end = min(last, cand.start + max(0, len(cand.signature.strip().split("\n")) - 1))
        ranges = [(cand.start, head_end)] + [(line, line) for line in
                                             cand.outline[:self.w.outline_members]
                                             if head_end < line <= last]
        while len(ranges) > 1:
            block = self._gapped(cand, "outline", ranges, last)
            if block.tokens <= min(self.total * self.w.neighbour_share, self.budget - self.used):
                return block
            ranges.pop()
        return None

    def _gapped(self, cand: Candidate, mode: str, ranges: list[tuple[int, int]],
                last: int) -> Block:
        """A block of ``ranges`` of the definition (in order, not overlapping), with an
        elision line for every gap."""
        lines = self.files.lines(cand.path)
        merged: list[tuple[int, int]] = []
        for start, end in ranges:
            if merged and start <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        body: list[str] = []
        for n, (start, end) in enumerate(merged):
            if n:
                body.append(_elision(merged[n - 1][1] + 1, start - 1))
            body.extend(lines[start - 1:end])
        if merged[-1][1] < last:
            body.append(_elision(merged[-1][1] + 1, last))
        block = Block(cand.path, cand.start, last, mode, [cand], cand.language, body=body,
                      ranges=merged)
        block.named = 1
        block.tokens = self._tokens(block)
        return block

    def _truncated(self, cand: Candidate, at_least: int, terse: bool = False) -> Block | None:
        """As many leading lines of the definition as fit, if that is ``at_least`` lines (or
        the whole of a shorter one)."""
        lines = self.files.lines(cand.path)
        last = min(cand.end, len(lines))
        counts = self.files.tokens(cand.path, cand.start, last)
        probe = Block(cand.path, cand.start, last, "truncated", [cand], cand.language,
                       terse=terse)
        overhead = self._tokens(probe) - self.files.span_tokens(cand.path, cand.start, last)
        room = min(self.budget - self.used, self.cap) - overhead
        end = cand.start - 1
        while end < last and room >= counts[end]:
            room -= counts[end]
            end += 1
        if end - cand.start + 1 < min(at_least, last - cand.start + 1):
            return None
        return Block(cand.path, cand.start, end, "truncated", [cand], cand.language,
                      body=lines[cand.start - 1:end], terse=terse)

    def _commit(self, block: Block, replaced: list[Block]) -> bool:
        block.named = len(block.items)
        block.tokens = self._tokens(block)
        cost = block.tokens - sum(b.tokens for b in replaced)
        if self.used + cost > self.budget:
            return False
        if replaced:
            at = self.blocks.index(replaced[0])  # keeps the place of the best-ranked part
            self.blocks[at] = block
            self.blocks = [b for b in self.blocks if not any(b is r for r in replaced)
                           or b is block]
        else:
            self.blocks.append(block)
        self.used += cost
        return True

    def _tokens(self, block: Block) -> int:
        if block.mode == "signature" or block.ranges:
            body = sum(self.files.count(line) for line in block.body)
        else:
            body = self.files.span_tokens(block.path, block.start, block.end)
        fence = block.fence()
        return (self.files.count(block.header()) + self.files.count(fence + block.language)
                + self.files.count(fence) + body)

    # ---- output ------------------------------------------------------------------------

    def render(self, ranked: list[Candidate]) -> str:
        """The blocks as markdown, then what was left out, as many lines of it as fit;
        should the whole text count more than the budget (the per-block sums make that
        unlikely, not impossible), the last blocks are dropped."""
        while True:
            text = "\n\n".join(b.text() for b in self.blocks)
            tokens = self.files.count(text)
            if tokens <= self.total or not self.blocks:
                break
            self.blocks.pop()
        placed = {id(item) for block in self.blocks for item in block.items} | self.shown_fill
        missing = [(rank, c) for rank, c in enumerate(ranked, 1)
                   if id(c) not in placed and c.kind != FILE_KIND]  # a file: too long to list
        # each line counted alone (counting the whole text again per line made this the
        # slowest part of a build); the sum is checked by one count of the result below
        lines: list[str] = []
        estimate = tokens + (self.files.count(_LEFT_OUT_TITLE) + 1 if missing else 0)
        for rank, cand in missing[:self.w.left_out]:
            line = f"- {cand.path}:{cand.start}-{cand.end} {cand.kind} " \
                f"{cand.local_name or cand.name}"
            cost = self.files.count(line) + 1
            if estimate + cost > self.total:
                break
            lines.append(line)
            self.left_out.append((rank, cand))
            estimate += cost
        while lines:
            listed = "\n\n".join(p for p in (text, "\n".join([_LEFT_OUT_TITLE, *lines])) if p)
            counted = self.files.count(listed)
            if counted <= self.total:
                text, tokens = listed, counted
                break
            lines.pop()
            self.left_out.pop()
        self.final_tokens = tokens
        return text

    def masked(self) -> Counter[str]:
        """The secrets masked in the blocks placed, by kind."""
        total: Counter[str] = Counter()
        for block in self.blocks:
            total.update(block.masked if block.mode == "signature"
                         else self.files.masked_in(block.path, block.start, block.end))
        return total

    def describe(self, cand: Candidate, rank: int) -> dict[str, Any]:
        block_index, how = None, None
        for i, block in enumerate(self.blocks):
            if any(item is cand for item in block.items):
                block_index = i
                how = block.mode if block.primary is cand else "merged"
                break
        return {
            "rank": rank,
            "path": cand.path,
            "start_line": cand.start,
            "end_line": cand.end,
            "kind": cand.kind,
            "qualified_name": cand.name,
            "id": cand.node_id,
            "included": how,
            "block": block_index,
            "score": round(cand.score, 6),
            "scores": {"semantic": round(cand.semantic, 6), "lexical": round(cand.lexical, 6),
                       "proximity": round(cand.proximity, 6),
                       "centrality": round(cand.centrality, 6)},
            "relation": cand.relation,
            "reasons": cand.reasons,
        }


def _elision(start: int, end: int) -> str:
    """The line standing for lines ``start``..``end`` left out of an elided block."""
    return f"… (lines {start}-{end} not shown)" if end > start else f"… (line {start} not shown)"
