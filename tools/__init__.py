"""Local tools hearth can call. Imports nothing else of hearth."""
