"""A real Home Assistant core on loopback, for the home-control tests and the home suites."""
