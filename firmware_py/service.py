"""systemd's service notifications (sd_notify(3)), spoken with the standard library.

Under ``Type=notify`` systemd waits for ``READY=1`` before it counts hearth as started, shows the
latest ``STATUS=`` line in ``systemctl status``, and, with ``WatchdogSec=``, restarts hearth when
``WATCHDOG=1`` stops arriving.  The pings come from a task on the running event loop, so a loop
that stalls (a blocking call where none belongs, a deadlock) stops them and is restarted.

Outside systemd (no ``$NOTIFY_SOCKET``) every call does nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


def notify_address(environ: Mapping[str, str]) -> str | bytes | None:
    """The address ``$NOTIFY_SOCKET`` names: a path, an abstract name (``@`` becomes a NUL byte),
    or None when unset or of a kind hearth does not speak (systemd's ``vsock:`` addresses)."""
    raw = environ.get("NOTIFY_SOCKET", "")
    if not raw:
        return None
    if raw.startswith("@"):
        return b"\0" + raw[1:].encode()
    if raw.startswith("/"):
        return raw
    log.warning("NOTIFY_SOCKET=%r is neither a path nor an abstract name: systemd is not told hearth's state", raw)
    return None


def watchdog_interval_s(environ: Mapping[str, str], pid: int) -> float | None:
    """Seconds between two pings (half of ``$WATCHDOG_USEC``, as sd_watchdog_enabled(3) advises),
    or None when no watchdog is asked of this process."""
    owner = environ.get("WATCHDOG_PID")
    if owner and owner != str(pid):
        return None  # the watchdog belongs to another process (hearth's parent, say)
    try:
        usec = int(environ.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    return usec / 2e6 if usec > 0 else None


class ServiceNotifier:
    """Tells systemd what state hearth is in; does nothing without an address."""

    def __init__(self, address: str | bytes | None, watchdog_s: float | None = None) -> None:
        self.address = address
        self.watchdog_s = watchdog_s
        """Seconds between two ``WATCHDOG=1`` pings; None: no watchdog."""
        self._stopping = False
        self._failing = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> ServiceNotifier:
        env = os.environ if environ is None else environ
        address = notify_address(env)
        return cls(address, watchdog_interval_s(env, os.getpid()) if address is not None else None)

    @property
    def active(self) -> bool:
        return self.address is not None

    def send(self, *fields: str) -> bool:
        """Send ``KEY=value`` lines as one datagram; False if it was not delivered (no such socket,
        or its queue full).  A failure is logged when it begins, not at every ping after it."""
        if self.address is None:
            return False
        message = "\n".join(fields).encode()
        try:
            # Non-blocking: this runs on the event loop, and a reader that has stopped reading (its
            # queue full) must cost a lost message, never a stalled loop.
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK) as sock:
                sock.sendto(message, self.address)
        except OSError as exc:
            if not self._failing:
                log.warning("could not notify systemd (%s): %s", fields[0].split("=", 1)[0], exc)
            self._failing = True
            return False
        if self._failing:
            log.info("notifying systemd again")
        self._failing = False
        return True

    def status(self, text: str) -> None:
        self.send(f"STATUS={_one_line(text)}")

    def ready(self, text: str = "ready") -> None:
        """Start-up is complete; not said once stopping has begun (a signal while the models loaded)."""
        if self._stopping:
            return
        self.send("READY=1", f"STATUS={_one_line(text)}", f"MAINPID={os.getpid()}")

    def stopping(self, text: str = "stopping") -> None:
        """Once: the first call says so, later ones (a second signal, the final clean-up) do not repeat it."""
        if self._stopping:
            return
        self._stopping = True
        self.send("STOPPING=1", f"STATUS={_one_line(text)}")

    def start_watchdog(self) -> asyncio.Task[None] | None:
        """The pinging task on the running loop, or None when systemd asked for no watchdog."""
        if self.watchdog_s is None:
            return None
        log.info("watchdog: pinging systemd every %.1f s", self.watchdog_s)
        return asyncio.create_task(self._ping(self.watchdog_s), name="watchdog")

    async def _ping(self, interval_s: float) -> None:
        while True:
            self.send("WATCHDOG=1")
            await asyncio.sleep(interval_s)


def _one_line(text: str) -> str:
    return " ".join(text.split())
