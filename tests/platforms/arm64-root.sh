#!/usr/bin/env bash
# Builds a Debian arm64 root under user-mode emulation (qemu-user-static, binfmt_misc) and runs
# hearth's set-up and its fast test lane in it: what a Raspberry Pi 5 or a Jetson's CPU side sees
# from `./setup.sh`, short of the board itself.  As root, on a Debian or Ubuntu x86 machine:
#
#     tests/platforms/arm64-root.sh [ROOT]        # ROOT defaults to /var/tmp/hearth-arm64
#
# Each stage is skipped when it is already done, so an interrupted run goes on where it stopped.
# Emulation is 5-20x slower than the board: nothing here is a timing.  Logs: ROOT/hearth-logs/.
set -euo pipefail
ROOT=${1:-/var/tmp/hearth-arm64}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=${DEBIAN_SUITE:-bookworm}   # Raspberry Pi OS and Debian 12 share it
HERE=$(cd "$(dirname "$0")/../.." && pwd)

need() { command -v "$1" >/dev/null || { echo "needs $1 (apt-get install qemu-user-static debootstrap)" >&2; exit 2; }; }
need debootstrap
need qemu-aarch64-static
[ "$(id -u)" -eq 0 ] || { echo "run as root (debootstrap and chroot)" >&2; exit 2; }
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  update-binfmts --enable qemu-aarch64 2>/dev/null || true
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { echo "binfmt_misc has no qemu-aarch64 handler" >&2; exit 2; }

stamp() { date -u +%FT%TZ; }
if [ ! -e "$ROOT/.debootstrap-done" ]; then
  echo "$(stamp) == debootstrap $SUITE arm64 into $ROOT"
  debootstrap --arch=arm64 --include=ca-certificates,sudo,make "$SUITE" "$ROOT" "$MIRROR"
  touch "$ROOT/.debootstrap-done"
fi
mkdir -p "$ROOT/hearth-logs"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# Certificate authorities this machine added (a network that reaches the registries through a
# TLS proxy): the root trusts them too, and pip is pointed at the system bundle, not its own.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  chroot "$ROOT" update-ca-certificates >/dev/null 2>&1 || true
fi

mounted=()
cleanup() { for ((i=${#mounted[@]}-1; i>=0; i--)); do umount -l "${mounted[i]}" || true; done; }
trap cleanup EXIT
for m in proc sys dev dev/pts; do
  mountpoint -q "$ROOT/$m" && continue
  case $m in proc) mount -t proc proc "$ROOT/proc" ;; sys) mount -t sysfs sys "$ROOT/sys" ;; *) mount --bind "/$m" "$ROOT/$m" ;; esac
  mounted+=("$ROOT/$m")
done

# The checkout's committed state, as a fresh clone would have it.
rm -rf "$ROOT/hearth"
git clone -q "$HERE" "$ROOT/hearth"
echo "$(stamp) == hearth $(git -C "$ROOT/hearth" rev-parse --short HEAD) in the root; uname -m there: $(chroot "$ROOT" uname -m)"

run() {  # run NAME COMMAND: in the root, logged, timed
  local name=$1; shift
  echo "$(stamp) == $name"
  local t0=$SECONDS
  if chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
      bash -lc "cd /hearth && $*" >"$ROOT/hearth-logs/$name.log" 2>&1; then
    echo "$(stamp) == $name passed in $((SECONDS - t0)) s"
  else
    echo "$(stamp) == $name FAILED after $((SECONDS - t0)) s; the end of $ROOT/hearth-logs/$name.log:"
    tail -40 "$ROOT/hearth-logs/$name.log"
    return 1
  fi
}
run setup "./setup.sh --no-models"
run platform ".venv/bin/python firmware_py/platform.py show"
cat "$ROOT/hearth-logs/platform.log"
run lint "make lint"
run lane-fast "make lane-fast"
tail -3 "$ROOT/hearth-logs/lane-fast.log"
