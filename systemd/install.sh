#!/usr/bin/env bash
# Installs hearth as a service on a Raspberry Pi (or any Debian machine with systemd):
#   the system user `hearth` (groups audio and gpio), the code and its virtualenv in /opt/hearth
#   (./setup.sh), the models in /var/lib/hearth/models, a commented /etc/hearth/hearth.toml (never
#   replacing one that exists), the units, and the service enabled and started.
#
#   sudo ./systemd/install.sh           (what `sudo make install` runs; safe to run again)
#   DESTDIR=/tmp/stage ./systemd/install.sh
#       lays the files out under /tmp/stage and prints, without running them, the steps that
#       need root (the user, the virtualenv, the models, ownership, systemctl).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/opt/hearth}
STATE=/var/lib/hearth
CONFIG=/etc/hearth
UNITS=/etc/systemd/system
USER_NAME=hearth
GROUPS_WANTED=(audio gpio)

say() { printf '== %s\n' "$*"; }
# A step that changes the system: run it, or in a DESTDIR run only print it.
step() {
  if [ -n "$DESTDIR" ]; then
    printf 'would run: %s\n' "$*"
  else
    "$@"
  fi
}

if [ -z "$DESTDIR" ] && [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (sudo ./systemd/install.sh), or set DESTDIR to lay the files out elsewhere" >&2
  exit 2
fi

say "user $USER_NAME in ${GROUPS_WANTED[*]}"
for group in "${GROUPS_WANTED[@]}"; do
  # The unit names both groups; a missing one (no gpio group off the Pi) would stop it starting.
  if ! getent group "$group" >/dev/null; then
    step groupadd --system "$group"
  fi
done
if id "$USER_NAME" >/dev/null 2>&1; then
  step usermod --append --groups "$(IFS=,; echo "${GROUPS_WANTED[*]}")" "$USER_NAME"
else
  step useradd --system --user-group --groups "$(IFS=,; echo "${GROUPS_WANTED[*]}")" \
    --home-dir "$STATE" --no-create-home --shell /usr/sbin/nologin "$USER_NAME"
fi

say "code in $DESTDIR$PREFIX"
mkdir -p "$DESTDIR$PREFIX"
if [ "$(cd "$DESTDIR$PREFIX" && pwd)" != "$SRC" ]; then
  # The working files only: no virtualenv, outputs or caches of this checkout.
  tar -C "$SRC" --exclude=./.venv --exclude=./.git --exclude=./out --exclude=./.data \
    --exclude=__pycache__ --exclude=.pytest_cache --exclude=.hypothesis --exclude='*.egg-info' \
    -cf - . | tar -C "$DESTDIR$PREFIX" -xf -
fi

say "virtualenv and models (./setup.sh; llama-cpp-python compiles the first time: many minutes on a Pi)"
step env VENV="$PREFIX/.venv" HEARTH_MODELS_DIR="$STATE/models" "$PREFIX/setup.sh"
# The service cannot write to /opt/hearth (ProtectSystem=strict): compile hearth's own modules now
# rather than at every start.
step "$PREFIX/.venv/bin/python" -m compileall -q "$PREFIX/agent" "$PREFIX/audio" "$PREFIX/tools" \
  "$PREFIX/firmware_py" "$PREFIX/models"

say "data in $DESTDIR$STATE"
mkdir -p "$DESTDIR$STATE/models" "$DESTDIR$STATE/data"
# systemd's StateDirectory= gives the folder to hearth at every start; this covers what setup.sh
# wrote into it as root before the first.
step chown -R "$USER_NAME:$USER_NAME" "$STATE"
step chmod 0750 "$STATE"

say "configuration in $DESTDIR$CONFIG"
mkdir -p "$DESTDIR$CONFIG"
if [ -e "$DESTDIR$CONFIG/hearth.toml" ]; then
  echo "kept $DESTDIR$CONFIG/hearth.toml; every key with its current default is in $PREFIX/firmware_py/assets/hearth.toml"
else
  install -m 0644 "$SRC/firmware_py/assets/hearth.toml" "$DESTDIR$CONFIG/hearth.toml"
  echo "wrote $DESTDIR$CONFIG/hearth.toml (every key commented out with its default)"
fi

say "units in $DESTDIR$UNITS"
mkdir -p "$DESTDIR$UNITS"
for unit in hearth.service hearth-forecast-sync.service hearth-forecast-sync.timer; do
  install -m 0644 "$SRC/systemd/$unit" "$DESTDIR$UNITS/$unit"
done
step systemctl daemon-reload
# The forecast timer does nothing until /etc/hearth/forecast.toml names places (ConditionPathExists).
step systemctl enable hearth.service hearth-forecast-sync.timer
step systemctl restart hearth.service
if [ -z "$DESTDIR" ]; then
  say "done: \`systemctl status hearth\` says \"ready\" once the models are warm; \`journalctl -u hearth -f\` shows what it hears"
fi
