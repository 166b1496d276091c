VENV ?= .venv
PREFIX ?= /opt/hearth
HEARTH := $(VENV)/bin/hearth

.PHONY: setup demo test bench install

setup:
	./setup.sh

demo: setup
	$(HEARTH) demo --out out/demo-reply.wav --timeline out/demo-timeline.json

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest -q

bench: setup
	$(VENV)/bin/python -m bench.loop.latency --out out/bench-latency.json

# As root: the user, /opt/hearth with its virtualenv, the models, /etc/hearth/hearth.toml, the units
# (systemd/install.sh).  DESTDIR=DIR lays the files out under DIR and prints the root-only steps.
install:
	DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" ./systemd/install.sh
