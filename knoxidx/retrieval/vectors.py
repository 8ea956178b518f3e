"""Brute-force cosine top-k over unit-length float32 vectors (numpy, imported lazily).

Exact search is fast enough here: 100k chunks x 1024 dims is one 400 MB matrix-vector product,
well under a second; at MiniLM's 384 dims, tens of milliseconds.

Reading every vector out of SQLite is not: at 44k vectors it cost a fresh ``knoxidx search``
~0.6 s of CPU (a Python object per row, then two copies to normalise). ``load_matrix`` keeps the
normalised matrix beside the index as ``.npy`` files named by a token that changes with every
write to the vectors, and memory-maps them: a later process pays a page-cache read.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knoxidx.core.errors import decoding_stored

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)
# what a kept matrix holds: the chunks' vectors, or their declarations' (``names``)
MATRIX_NAMES = ("vectors", "declarations")


def normalize(matrix: np.ndarray) -> np.ndarray:
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def to_blob(vector: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def from_blobs(blobs: Sequence[bytes], dimension: int) -> np.ndarray:
    import numpy as np

    if not blobs:
        return np.zeros((0, dimension), dtype=np.float32)
    with decoding_stored("the stored vectors"):
        return (
            np.frombuffer(b"".join(blobs), dtype="<f4")
            .reshape(len(blobs), dimension)
            .astype(np.float32)
        )


class VectorIndex:
    """Ids and their unit vectors; ``top_k`` returns (id, cosine) best first."""

    def __init__(self, ids: Sequence[int] | np.ndarray, matrix: np.ndarray, *,
                 normalized: bool = False) -> None:
        import numpy as np

        self.ids = np.asarray(ids, dtype=np.int64)
        if normalized:
            self.matrix = matrix  # as given: a memory map stays one
        elif not len(ids):
            self.matrix = np.asarray(matrix, dtype=np.float32)
        else:
            self.matrix = normalize(matrix)
        if self.matrix.shape[0] != self.ids.shape[0]:
            raise ValueError("one vector per id")
        self._order: np.ndarray | None = None  # see ``cosines``

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def top_k(
        self, query: np.ndarray, k: int, allowed: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` ids nearest ``query``; with ``allowed``, only among those ids."""
        import numpy as np

        if len(self) == 0 or k <= 0:
            return []
        # einsum, not BLAS: OpenBLAS wakes its thread pool for a matrix-vector product, which
        # costs 10-20 ms on a busy machine against well under 1 ms single-threaded
        scores = np.einsum("ij,j->i", self.matrix, normalize(query).reshape(-1))
        if allowed is not None:
            keep = np.isin(self.ids, np.asarray(allowed, dtype=np.int64))
            k = min(k, int(keep.sum()))
            if k == 0:
                return []
            scores = np.where(keep, scores, -np.inf)
        if k < len(scores):
            best = np.argpartition(-scores, k - 1)[:k]
        else:
            best = np.arange(len(scores))
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in best]

    def cosines(self, query: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """The cosine of ``query`` with each of ``ids`` that has a vector here."""
        import numpy as np

        if len(self) == 0 or not len(ids):
            return {}
        if self._order is None:  # made once: the ids in order, to find rows by binary search
            self._order = np.argsort(self.ids, kind="stable")
        wanted = np.asarray(ids, dtype=np.int64)
        at = np.searchsorted(self.ids, wanted, sorter=self._order)
        at = np.minimum(at, len(self) - 1)
        rows = self._order[at]
        present = self.ids[rows] == wanted
        rows = rows[present]
        scores = np.einsum("ij,j->i", self.matrix[rows], normalize(query).reshape(-1))
        return {int(i): float(c) for i, c in zip(wanted[present], scores, strict=True)}

    def top_groups(
        self, query: np.ndarray, k: int, group: int, allowed: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` groups (id // ``group``: a declaration's chunk) with the vectors nearest
        ``query``, each scored by its best cosine, best first; with ``allowed``, only those
        groups."""
        import numpy as np

        if len(self) == 0 or k <= 0:
            return []
        scores = np.einsum("ij,j->i", self.matrix, normalize(query).reshape(-1))
        groups = self.ids // group
        if allowed is not None:
            keep = np.isin(groups, np.asarray(allowed, dtype=np.int64))
            if not keep.any():
                return []
            scores = np.where(keep, scores, -np.inf)
        # the best few times k vectors usually hold k groups; all of them when they do not
        head = min(len(scores), max(8 * k, 64))
        while True:
            if head < len(scores):
                best = np.argpartition(-scores, head - 1)[:head]
            else:
                best = np.arange(len(scores))
            best = best[np.argsort(-scores[best], kind="stable")]
            out: dict[int, float] = {}
            for i in best:
                if scores[i] == -np.inf:
                    break
                out.setdefault(int(groups[i]), float(scores[i]))
                if len(out) == k:
                    return list(out.items())
            if head >= len(scores):
                return list(out.items())
            head = len(scores)


Reader = Callable[[], tuple[list[int], list[bytes]]]


def load_matrix(
    folder: Path | None, token: str, dimension: int, read: Reader, name: str = "vectors"
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, normalised matrix) for the vectors named by ``token``: memory-mapped from
    ``folder`` when a copy for this token is there, else from ``read()`` (and saved there for
    the next process; best effort, older copies of the same ``name`` removed). No folder or
    token: ``read()``."""
    import numpy as np

    if folder is not None and token:
        ids_path, matrix_path = _matrix_paths(folder, token, name)
        try:
            ids = np.load(ids_path)
            matrix = np.load(matrix_path, mmap_mode="r")
            if matrix.shape == (len(ids), dimension) and matrix.dtype == np.float32:
                return ids, matrix
            log.warning("vector matrix copy %s does not match the index; rebuilding", matrix_path)
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:  # damaged: made again below
            log.warning("vector matrix copy %s unreadable (%s); rebuilding", matrix_path, exc)
    raw_ids, blobs = read()
    ids = np.asarray(raw_ids, dtype=np.int64)
    matrix = normalize(from_blobs(blobs, dimension))
    if folder is not None and token:
        _save_matrix(folder, token, ids, matrix, name)
    return ids, matrix


def forget_matrices(folder: Path) -> None:
    """Remove every kept matrix (a rebuilt index starts without vectors: the copies of the
    old one, 67 MB on the benchmark corpus, would otherwise stay until the next search)."""
    for name in MATRIX_NAMES:
        for old in folder.glob(f"{name}-*"):
            old.unlink(missing_ok=True)


def _matrix_paths(folder: Path, token: str, name: str) -> tuple[Path, Path]:
    return folder / f"{name}-{token}.ids.npy", folder / f"{name}-{token}.f32.npy"


def _save_matrix(folder: Path, token: str, ids: np.ndarray, matrix: np.ndarray,
                 name: str) -> None:
    import numpy as np

    ids_path, matrix_path = _matrix_paths(folder, token, name)
    try:
        for path, array in ((matrix_path, matrix), (ids_path, ids)):  # ids last: the marker
            partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            with open(partial, "wb") as f:
                np.save(f, array)
            os.replace(partial, path)
        for old in folder.glob(f"{name}-*"):  # older copies, and partial ones of a crash
            if token not in old.name:
                old.unlink(missing_ok=True)
    except OSError as exc:  # a read-only index still searches, from SQLite each time
        log.debug("could not keep the vector matrix in %s: %s", folder, exc)
