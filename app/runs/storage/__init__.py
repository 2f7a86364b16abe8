"""The store: runs, cases, results, events, reviews, tags and the response cache."""
