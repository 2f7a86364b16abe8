"""CPU-heavy grading work kept off the event loop: worker threads and processes."""
