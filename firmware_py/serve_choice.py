"""What one ``hearth run`` / ``hearth serve`` process runs besides the assistant, read from the
flags and the configuration.

Its own module because two others need it and neither owns it: :mod:`firmware_py.preflight`
checks what the choice needs before any model loads, and :mod:`firmware_py.serve` then runs it.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware_py.config import HearthConfig, web_address, wyoming_address

DEFAULT_WYOMING = "tcp://127.0.0.1:10700"
"""The Wyoming server's address for ``--wyoming`` given with none and none configured."""
DEFAULT_WEB = "127.0.0.1:8750"
"""The companion page's address for ``--web`` given with none and none configured."""


@dataclass(frozen=True)
class ServeChoice:
    """What one ``hearth`` process runs besides the assistant."""

    device: bool = True
    """The microphone, speaker and push-to-talk button (``--no-device``: none of them)."""
    wyoming: str | None = None
    """The Wyoming server's address ("tcp://HOST:PORT"), or None for none."""
    web: tuple[str, int] | None = None
    """The companion page's (host, port), or None for none."""


def serve_choice(config: HearthConfig, wyoming: str | None, web: str | None, device: bool = True) -> ServeChoice:
    """What ``hearth serve`` runs: ``wyoming``/``web`` are the flags ("" for a flag given with no
    address: the configured one, else the default), None for a flag not given (the configured one,
    if any).  ValueError, one line, when there is nothing to serve or the page would be open."""
    from firmware_py.web.security import is_loopback  # the page's own test, not loaded for `hearth run`

    s = config.serve
    uri = (s.wyoming or DEFAULT_WYOMING) if wyoming == "" else (wyoming if wyoming is not None else s.wyoming)
    page = (s.web or DEFAULT_WEB) if web == "" else (web if web is not None else s.web)
    if uri is None and page is None:
        raise ValueError("nothing to serve: give --wyoming and/or --web, or set serve.wyoming / serve.web in the configuration")
    if uri is not None:
        wyoming_address(uri)
    web_at = web_address(page) if page is not None else None
    if web_at is not None and not is_loopback(web_at[0]) and not s.web_token:
        raise ValueError(f"the companion page on {page} could be opened from other machines: set serve.web_token "
                         "(16 or more characters) in the configuration, or serve it on 127.0.0.1")
    return ServeChoice(device=device, wyoming=uri, web=web_at)
