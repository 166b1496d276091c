VENV ?= .venv
HEARTH := $(VENV)/bin/hearth

.PHONY: setup demo test bench

setup:
	./setup.sh

demo: setup
	$(HEARTH) demo --out out/demo-reply.wav --timeline out/demo-timeline.json

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest -q

bench: setup
	$(VENV)/bin/python -m bench.latency --out out/bench-latency.json
