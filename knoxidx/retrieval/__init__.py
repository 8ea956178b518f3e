"""Code -> answers: chunking, embedding, vector and lexical search.

Modules, in the order data flows: ``tokens`` (offline token counts), ``chunker`` (definitions ->
chunks), ``store`` (all SQL), ``indexing`` (which files to re-chunk, worker processes, one
transaction), ``embedder`` (the protocol), ``text_views`` (what of a chunk is embedded),
``backends`` / ``minilm`` / ``voyage`` (vectors), ``resilience`` (retries, circuit breaker), ``pipeline`` (incremental embedding), ``vectors`` (cosine top-k), ``search``
(hybrid fusion), ``searcher`` (validated arguments, graph symbol hits, the result shape) and
``api`` (what :class:`knoxidx.index.Index` calls). Importing this package imports nothing
heavy: numpy, onnxruntime, tokenizers and voyageai load on first use.
"""
