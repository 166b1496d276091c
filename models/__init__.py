"""The model manifest and installer. Weights live in a data directory, never in git."""
