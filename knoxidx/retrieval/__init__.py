"""Code -> answers: chunking, embedding, vector and lexical search.

Modules, in the order data flows: ``tokens`` (offline token counts), ``chunker`` (definitions ->
chunks), ``store`` (all SQL), ``embedders`` / ``minilm`` / ``voyage`` (vectors),
``resilience`` (retries, circuit breaker), ``pipeline`` (incremental embedding),
``vectors`` (cosine top-k), ``search`` (hybrid fusion). Importing this package imports nothing
heavy: numpy, onnxruntime, tokenizers and voyageai load on first use.
"""
