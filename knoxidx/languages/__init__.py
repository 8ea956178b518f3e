"""The languages knoxidx reads, one folder each (``<family>/``: descriptions, queries, hooks);
``registry`` lists them and answers every question about them."""
