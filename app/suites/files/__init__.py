"""The files a suite refers to: resolved, listed, read as cases, sources and references."""
