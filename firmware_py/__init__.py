"""hearth's composition root: configuration, wiring, the device loop and the command line."""
