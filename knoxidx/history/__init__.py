"""Each definition's history from git: the commits of the first-parent history of HEAD
(:mod:`.gitlog`), stored beside the graph (:mod:`.store`), traced back from a definition's
lines at HEAD through the diffs (:mod:`.ranges`, :mod:`.trace`), and the answers built on it
(:mod:`.answers`: history, hotspots, a node's evolution)."""
