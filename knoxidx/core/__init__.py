"""The bottom layer: the vocabulary every other layer shares (errors, facts, the
node/edge model, file state, configuration, paths). It imports nothing above it."""
