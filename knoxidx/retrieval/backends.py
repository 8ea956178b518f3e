"""The embedders and the reranker there are, and the choice between them.

- ``local`` (default, offline): all-MiniLM-L6-v2 from an installed package, run by onnxruntime
  (see ``minilm.py`` and ``MODELS.md`` for why). MiniLM reads 256 tokens at ~7 chunks/s on two
  cores, so by default it embeds a *condensed view* of each chunk (``condensed-v2``: what the
  chunk defines and what holds it, in words, then file, signature, doc and the chunk's
  identifiers split into words, syntax keywords left out), which measured better and ~2x
  faster than the raw text cut at 256 tokens (``full``; MODELS.md has the figures).
  ``$KNOXIDX_LOCAL_VIEW`` or ``[local] view`` in ``knoxidx.toml`` chooses. A low-rank adapter fitted to doc comment ->
  code pairs (``code-v1``, ``adapters/``) is merged into the weights at load; ``none`` (or
  ``[local] adapter``, ``$KNOXIDX_LOCAL_ADAPTER``) leaves the plain model.
- ``voyage``: ``voyage-code-3`` through the official ``voyageai`` client (see ``voyage.py``);
  opt-in with ``KNOXIDX_EMBEDDER=voyage`` and ``VOYAGE_API_KEY``, because it sends code off the
  machine.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.embedder import Embedder
from knoxidx.retrieval.errors import EmbeddingConfigError
from knoxidx.retrieval.model_files import adapter_digest
from knoxidx.retrieval.terms import readable_identifiers
from knoxidx.retrieval.text_views import condensed_view, full_view

if TYPE_CHECKING:
    import numpy as np

    from knoxidx.retrieval.egress import Egress
    from knoxidx.retrieval.minilm import MiniLM

log = logging.getLogger(__name__)
EMBEDDER_ENV = "KNOXIDX_EMBEDDER"
# "condensed-v2" keeps its name: indexes record it in their model id and settings files name it
LOCAL_VIEWS = ("condensed-v2", "full")
DEFAULT_VIEW = "condensed-v2"
LOCAL_VIEW_ENV = "KNOXIDX_LOCAL_VIEW"
# A low-rank adapter merged into MiniLM's weights (``minilm.merge_adapter``): ``code-v1`` was
# fitted to doc comment -> code pairs of projects outside the benchmark (MODELS.md;
# ``bench/finetune``). ``$KNOXIDX_LOCAL_ADAPTER`` or ``[local] adapter``: a bundled name, a
# .safetensors file of ``bench/finetune/train.py``, or ``none`` for the plain model.
LOCAL_ADAPTER_ENV = "KNOXIDX_LOCAL_ADAPTER"
DEFAULT_ADAPTER = "code-v1"
# The weights' precision: ``int8`` (default) quantises the matrix products' weights per
# channel, made once from the shipped fp32 weights and cached (``minilm._int8_session``): ~2x
# less CPU per chunk, retrieval within a question of fp32's on django (MODELS.md).
LOCAL_PRECISIONS = ("int8", "fp32")
DEFAULT_PRECISION = "int8"
LOCAL_PRECISION_ENV = "KNOXIDX_LOCAL_PRECISION"
ADAPTERS_DIR = Path(__file__).with_name("adapters")


def adapter_path(choice: str | None) -> Path | None:
    """The adapter file for a choice: None means the default (``DEFAULT_ADAPTER``), ``none``
    the plain model, a name one of the bundled adapters, else a ``.safetensors`` file."""
    choice = (choice or DEFAULT_ADAPTER).strip()
    if choice.lower() == "none":
        return None
    bundled = ADAPTERS_DIR / f"{choice}.safetensors"
    if "/" not in choice and bundled.is_file():
        return bundled
    path = Path(choice).expanduser()
    if path.suffix == ".safetensors" and path.is_file():
        return path
    names = sorted(p.stem for p in ADAPTERS_DIR.glob("*.safetensors"))
    raise EmbeddingConfigError(
        f"unknown local adapter {choice!r}: use none, a bundled one ({', '.join(names)}) or a "
        ".safetensors file written by bench/finetune/train.py")


class LocalEmbedder:
    """The bundled MiniLM (with its adapter); loads lazily on first use (about 1-2 s)."""

    base_model = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(
        self,
        view: str = DEFAULT_VIEW,
        *,
        adapter: str | None = None,
        max_tokens: int = 256,
        batch_size: int = 64,
        threads: int = 0,
        precision: str | None = None,
    ) -> None:
        if view not in LOCAL_VIEWS:
            raise EmbeddingConfigError(f"unknown local view {view!r}; use one of {LOCAL_VIEWS}")
        # None: $KNOXIDX_LOCAL_PRECISION, else the default (``select_embedder`` passes its choice)
        precision = (precision or os.environ.get(LOCAL_PRECISION_ENV)
                     or DEFAULT_PRECISION).strip().lower()
        if precision not in LOCAL_PRECISIONS:
            raise EmbeddingConfigError(
                f"unknown local precision {precision!r}; use one of {LOCAL_PRECISIONS}")
        self.precision = precision
        self.view = view
        # None: $KNOXIDX_LOCAL_ADAPTER, else the default (``select_embedder`` passes its choice)
        self.adapter = adapter_path(adapter if adapter is not None
                                    else os.environ.get(LOCAL_ADAPTER_ENV))
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads
        self.model_name = self.base_model
        if self.adapter is not None:  # the content, not the name: a refit re-embeds
            try:
                digest = adapter_digest(self.adapter)[:8]
            except OSError as exc:
                raise EmbeddingConfigError(
                    f"cannot read the local adapter {self.adapter}: {exc.strerror or exc}"
                ) from exc
            self.model_name = f"{self.base_model}+{self.adapter.stem}.{digest}"
        if precision != "fp32":  # other numbers: vectors of another model
            self.model_name += f"@{precision}"
        self.model_id = f"local/{self.model_name}/{view}/{max_tokens}"
        self._model: MiniLM | None = None

    @property
    def model(self) -> MiniLM:
        """The model for documents: ``threads`` (0: all cores) onnxruntime threads."""
        if self._model is None:
            self._model = _shared_model(self.max_tokens, self.threads, self.adapter,
                                        self.precision)
        return self._model

    def query_model(self) -> MiniLM:
        """The model for queries: one already loaded in this process if any, else a
        single-threaded one. A one-line query gains nothing from more threads, and on a busy
        machine waking them costs more than the query (measured: 17 ms vs 33 ms median)."""
        if self._model is not None:
            return self._model
        for threads in (self.threads, QUERY_THREADS):
            if (self.max_tokens, threads, self.adapter, self.precision) in _LOADED:
                return _shared_model(self.max_tokens, threads, self.adapter, self.precision)
        return _shared_model(self.max_tokens, QUERY_THREADS, self.adapter, self.precision)

    def document_text(self, chunk: Chunk) -> str:
        if self.view == "condensed-v2":
            return condensed_view(chunk)
        return full_view(chunk)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=self.batch_size)

    def query_text(self, text: str) -> str:
        """What the model reads of a query: for the condensed view, the query followed by its
        identifiers split into words, as the documents have theirs."""
        if self.view.startswith("condensed"):
            return f"{text}\n{readable_identifiers(text)}"
        return text

    def embed_query(self, text: str) -> np.ndarray:
        return self.query_model().encode([self.query_text(text)])[0]


QUERY_THREADS = 1
_LOADED: dict[tuple[int, int, Path | None, str], MiniLM] = {}


def _shared_model(max_tokens: int, threads: int, adapter: Path | None,
                  precision: str = DEFAULT_PRECISION) -> MiniLM:
    """One loaded model per process and setting (for the model folder of the first load): a
    server with several indexes open, or a search after an embedding run, does not pay the
    load twice."""
    key = (max_tokens, threads, adapter, precision)
    if key not in _LOADED:
        from knoxidx.retrieval.minilm import MiniLM

        _LOADED[key] = MiniLM(max_tokens=max_tokens, threads=threads, adapter=adapter,
                              precision=precision)
    return _LOADED[key]


_offline_noted: list[bool] = []
OFFLINE_NOTE = ("offline: using the local embedder and no reranker (Voyage is configured; no "
                "network call is made)")


def is_offline(config: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    from knoxidx.core.config import offline_from_env

    return bool(config.get("offline")) or offline_from_env(env)


def _note_offline() -> None:
    """Say once per process that a remote service was configured but offline mode won."""
    if not _offline_noted:
        _offline_noted.append(True)
        log.warning(OFFLINE_NOTE)


def select_embedder(
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    egress: Egress | None = None,
    interactive: bool = False,
) -> Embedder:
    """``config["embedder"]``, else ``$KNOXIDX_EMBEDDER``, else ``local``; always ``local`` when
    offline (``config["offline"]`` or ``$KNOXIDX_OFFLINE``): the Voyage client is then never
    created, whatever key is set.

    Keys read: ``embedder`` (local | voyage), ``local_view`` (condensed-v2 | full;
    ``$KNOXIDX_LOCAL_VIEW`` overrides it), ``local_adapter`` (``adapter_path``;
    ``$KNOXIDX_LOCAL_ADAPTER`` overrides it),
    ``voyage_model``, ``voyage_dimension``, ``voyage_base_url``, ``offline``,
    ``query_deadline``. ``egress``: the gate (never-send, masking, ledger) a remote embedder
    sends through. ``interactive``: someone waits for the answer (a query's embedding): a
    remote call gives up after ``query_deadline`` seconds, retries included, where indexing's
    bulk embedding keeps its long retries.
    """
    config = config or {}
    env = os.environ if env is None else env
    choice = (config.get("embedder") or env.get(EMBEDDER_ENV) or "local").strip().lower()
    if choice == "voyage" and is_offline(config, env):
        _note_offline()
        choice = "local"
    if choice == "local":
        view = env.get(LOCAL_VIEW_ENV) or config.get("local_view") or DEFAULT_VIEW
        adapter = env.get(LOCAL_ADAPTER_ENV) or config.get("local_adapter") or DEFAULT_ADAPTER
        precision = (env.get(LOCAL_PRECISION_ENV) or config.get("local_precision")
                     or DEFAULT_PRECISION)
        return LocalEmbedder(view=view, adapter=adapter, precision=precision)
    if choice == "voyage":
        from knoxidx.retrieval.voyage import VoyageEmbedder

        dimension = config.get("voyage_dimension") or env.get("KNOXIDX_VOYAGE_DIMENSION")
        return VoyageEmbedder(
            api_key=env.get("VOYAGE_API_KEY"),
            model=config.get("voyage_model", "voyage-code-3"),
            output_dimension=int(dimension) if dimension else None,
            base_url=config.get("voyage_base_url"),
            egress=egress,
            resilient=_query_resilience(config, "Voyage embeddings") if interactive else None,
        )
    raise EmbeddingConfigError(f"unknown embedder {choice!r}; use 'local' or 'voyage'")


def select_reranker(
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    egress: Egress | None = None,
    interactive: bool = False,
) -> Any:
    """Voyage ``rerank-2.5`` when Voyage is the chosen embedder (or ``config["reranker"]`` is
    ``voyage``) and a key is set; otherwise None, and hybrid search uses the offline
    definition rerank (``rerank.py``; see MODELS.md). Always None when offline.
    ``interactive``: give up after ``query_deadline`` seconds, as :func:`select_embedder`."""
    config = config or {}
    env = os.environ if env is None else env
    embedder = (config.get("embedder") or env.get(EMBEDDER_ENV) or "local").strip().lower()
    choice = (config.get("reranker") or ("voyage" if embedder == "voyage" else "none")).lower()
    if choice == "none":
        return None
    if is_offline(config, env):
        _note_offline()
        return None
    if choice != "voyage":
        raise EmbeddingConfigError(f"unknown reranker {choice!r}; use 'voyage' or 'none'")
    from knoxidx.retrieval.voyage import VoyageReranker

    return VoyageReranker(
        api_key=env.get("VOYAGE_API_KEY"), base_url=config.get("voyage_base_url"), egress=egress,
        resilient=_query_resilience(config, "Voyage rerank") if interactive else None,
    )


def _query_resilience(config: Mapping[str, Any], name: str) -> Any:
    from knoxidx.retrieval.resilience import QUERY_DEADLINE, query_resilience

    return query_resilience(name, config.get("query_deadline") or QUERY_DEADLINE)
