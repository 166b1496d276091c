"""What ``hearth run`` and ``hearth serve`` check before any model loads.

The models take seconds and gigabytes to load (8.6 s and 2.5 GB on a 2-core x86 with the
reasoner); a missing sound card, no GPIO button, a port another program holds or a data folder
that is a file would otherwise be said only after that.  Each check is cheap and opens nothing it
keeps: the real opening comes later and can still fail (a device unplugged meanwhile, a port taken
in between), with its own one-line error.
"""

from __future__ import annotations

import logging
import socket

from firmware_py.config import HearthConfig, wyoming_address
from firmware_py.data_folder import check_folder, data_folder
from firmware_py.gpio import NoButton, check_button
from firmware_py.serve_choice import ServeChoice
from firmware_py.wiring import StartupError, sound_settings

log = logging.getLogger(__name__)


async def preflight(config: HearthConfig, choice: ServeChoice) -> None:
    """Raise ConfigError, StartupError or NoButton (each one line) for the first thing ``choice``
    needs that is not there: the data folder, the ports, the sound devices and the button."""
    check_folder(data_folder(config), create=True)
    if choice.wyoming is not None:
        check_port(*wyoming_address(choice.wyoming), f"the Wyoming server cannot listen on {choice.wyoming}")
    if choice.web is not None:
        host, port = choice.web
        check_port(host, port, f"the companion page cannot listen on {host}:{port}")
    if choice.device:
        await check_device(config)


async def check_device(config: HearthConfig) -> None:
    """The sound devices, then the button; a machine with neither hears of both in one line (it
    would otherwise learn of ``--keyboard`` only once it had a sound card)."""
    from audio.portaudio import check_devices
    from audio.protocols import AudioDeviceError
    from audio.stream_guard import bounded_call, leave_portaudio_at_exit

    microphone, speaker = sound_settings(config)
    try:
        # Bounded: PortAudio asks the sound server, which may hang.
        await bounded_call(lambda: check_devices(microphone, speaker), speaker.loss.open_timeout_s)
    except TimeoutError:
        leave_portaudio_at_exit()
        problem = f"the sound devices cannot be checked: PortAudio did not answer within {speaker.loss.open_timeout_s:.0f} s (is the sound server hung?)"
        raise StartupError(_and_button(problem, config)) from None
    except AudioDeviceError as exc:
        raise StartupError(_and_button(str(exc), config)) from None
    if config.button.kind == "gpio":
        check_button(config.button.pin)


def _and_button(problem: str, config: HearthConfig) -> str:
    if config.button.kind != "gpio":
        return problem
    try:
        check_button(config.button.pin)
    except NoButton as exc:
        return f"{problem}; and {exc}"
    return problem


def check_port(host: str, port: int, what: str) -> None:
    """StartupError (one line, starting with ``what``) when ``host:port`` cannot be listened on:
    bound the way the servers bind it (address reuse on, as asyncio and uvicorn set it, so a port
    in TIME_WAIT is not taken for a busy one), then let go.  Port 0 is any free port: nothing to check."""
    if port == 0:
        return
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupError(f"{what}: {exc.strerror or exc}") from None
    for family, kind, proto, _name, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                raise StartupError(f"{what}: {exc.strerror or exc}") from None
    log.debug("%s:%d is free", host, port)
