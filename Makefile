VENV ?= .venv
PREFIX ?= /opt/hearth
HEARTH := $(VENV)/bin/hearth
PYTEST := $(VENV)/bin/python -m pytest -p no:cacheprovider

# The fast lane: every test without a lane mark, against an empty models directory (a test that
# needs a model fails there, loudly).  The real lane: real models, PortAudio, the browser, and a
# real Home Assistant core (its own virtual environment, .ha-venv: make setup-ha).
FAST_LANE := -m "not integration and not audio and not browser and not home_assistant" --timeout=120 --durations=15
REAL_LANE := -m "integration or audio or browser or home_assistant" --timeout=900 --durations=25

.PHONY: setup setup-code setup-ha try-ha demo lint test test-fast lane-fast lane-real bench install

setup:
	./setup.sh

setup-ha:
	./bench/home_assistant/setup-env.sh

setup-code:
	./setup.sh --no-models

# Home control without a household's Home Assistant: the tests' scratch core on loopback, its
# address, a token file and a hearth.toml printed; Ctrl-C stops it (docs/home-control.md).
try-ha: setup-code setup-ha
	$(VENV)/bin/python -m bench.home_assistant.scratch

demo: setup
	$(HEARTH) demo --out out/demo-reply.wav --timeline out/demo-timeline.json

lint:
	$(VENV)/bin/ruff check .

# The edit-test loop: no models needed, a few minutes.
test-fast: setup-code lint lane-fast

# Everything, as CI runs it: set-up with the models, the fast lane first, then the real lane.
test: setup setup-ha lint lane-fast lane-real

lane-fast:
	HEARTH_MODELS_DIR="$$(mktemp -d)" $(PYTEST) -q $(FAST_LANE) tests

lane-real:
	$(PYTEST) -q $(REAL_LANE) tests

bench: setup
	$(VENV)/bin/python -m bench.loop.latency --out out/bench-latency.json

# As root: the user, /opt/hearth with its virtualenv, the models, /etc/hearth/hearth.toml, the units
# (systemd/install.sh).  DESTDIR=DIR lays the files out under DIR and prints the root-only steps.
install:
	DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" ./systemd/install.sh
