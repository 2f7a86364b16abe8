"""Request and response models of the HTTP API (wire names pinned by aliases)."""
