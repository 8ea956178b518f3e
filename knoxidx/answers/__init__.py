"""What an agent asks, built over the whole index: questions, context, packing,
centrality, questions across repositories."""
