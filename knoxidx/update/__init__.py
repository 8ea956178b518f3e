"""The orchestration of a build or an update, above the graph and retrieval:
discovery -> parse -> store -> resolve -> chunks -> embeddings."""
