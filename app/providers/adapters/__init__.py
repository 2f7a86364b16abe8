"""One adapter per provider API (and the HTTP plumbing they share)."""
