"""The push-to-talk button and the status LED, on gpiozero.

gpiozero calls its callbacks on its own thread; they are handed to the event
loop with ``call_soon_threadsafe`` so the rest of hearth stays single-threaded.
Tests use gpiozero's mock pin factory (``GPIOZERO_PIN_FACTORY=mock``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from agent.events import State

log = logging.getLogger(__name__)

# Colours chosen so that each state is told apart at a glance across a kitchen.
STATE_COLOURS: dict[State, tuple[float, float, float]] = {
    State.IDLE: (0.0, 0.0, 0.0),
    State.LISTENING: (0.0, 0.0, 1.0),
    State.THINKING: (1.0, 0.6, 0.0),
    State.SPEAKING: (0.0, 1.0, 0.0),
    State.PAUSING: (0.0, 0.3, 0.0),  # dim green: still talking
    State.FAULT: (1.0, 0.0, 0.0),  # blinks slowly: see FAULT_BLINK
}
FAULT_BLINK = (0.25, 1.75)
"""A lost sound device: red for this long, then dark for this long (seconds), over and over;
no other state blinks, so it is told apart from across the room."""


class PushToTalk(Protocol):
    """A button: ``on_press``/``on_release`` get the monotonic time of the edge."""

    def open(self, on_press: Callable[[float], None], on_release: Callable[[float], None]) -> None: ...

    def close(self) -> None: ...


class StatusLight(Protocol):
    def show(self, state: State) -> None: ...

    def close(self) -> None: ...


class NoButton(RuntimeError):
    """The configured GPIO button cannot be opened (a machine without GPIO, a pin in use)."""


@contextmanager
def fallbacks_logged() -> Iterator[None]:
    """gpiozero warns once for each pin library it tries and falls back from: eight lines on a
    machine without GPIO before hearth's own one, and noise on a Pi that found one further down
    its list.  Those go to the debug log; any other warning goes on as it came."""
    from gpiozero.exc import PinFactoryFallback

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            others = []
            for warning in caught:
                if issubclass(warning.category, PinFactoryFallback):
                    log.debug("gpiozero: %s", warning.message)
                else:
                    others.append(warning)
    for warning in others:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)


def _open_button(pin: int, bounce_s: float) -> Any:
    """gpiozero's Button on BCM ``pin``, pulled up; NoButton (one line) when it cannot be opened."""
    from gpiozero import Button

    try:
        with fallbacks_logged():
            return Button(pin, pull_up=True, bounce_time=bounce_s or None)
    except Exception as exc:  # gpiozero raises a family of errors on a machine without GPIO
        raise NoButton(f"no GPIO button found on BCM {pin} ({type(exc).__name__}): use --keyboard") from exc


def check_button(pin: int) -> None:
    """NoButton (one line) unless a button can be opened on BCM ``pin``: opened, then closed again."""
    _open_button(pin, 0.0).close()


class GpioButton:
    """A button on a BCM pin, wired to ground, using the internal pull-up."""

    def __init__(self, pin: int, bounce_s: float, loop: asyncio.AbstractEventLoop) -> None:
        self.pin = pin
        self.bounce_s = bounce_s
        self.loop = loop
        self._button: Any = None

    def open(self, on_press: Callable[[float], None], on_release: Callable[[float], None]) -> None:
        self._button = _open_button(self.pin, self.bounce_s)
        # Stamp the edge on gpiozero's thread: that is when the user pressed.
        self._button.when_pressed = lambda: self.loop.call_soon_threadsafe(on_press, time.monotonic())
        self._button.when_released = lambda: self.loop.call_soon_threadsafe(on_release, time.monotonic())

    def close(self) -> None:
        if self._button is not None:
            self._button.close()
            self._button = None


class KeyboardButton:
    """Push-to-talk on a terminal, for a machine without GPIO: Enter presses, Enter again releases."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stream: Any = None) -> None:
        self.loop = loop
        self.stream = stream
        self._pressed = False
        self._fd: int | None = None

    def open(self, on_press: Callable[[float], None], on_release: Callable[[float], None]) -> None:
        import sys

        stream = self.stream or sys.stdin
        self._fd = stream.fileno()

        def line_ready() -> None:
            if not stream.readline():  # end of input: nothing more will be pressed
                self.close()
                return
            self._pressed = not self._pressed
            (on_press if self._pressed else on_release)(time.monotonic())

        self.loop.add_reader(self._fd, line_ready)
        print("press Enter to talk, Enter again when done; Ctrl-C quits", flush=True)

    def close(self) -> None:
        if self._fd is not None:
            self.loop.remove_reader(self._fd)
            self._fd = None


class RgbStatusLight:
    """An RGB LED showing idle / listening / thinking / speaking, and a slow red blink for a fault."""

    def __init__(self, pins: tuple[int, int, int]) -> None:
        self.pins = pins
        self._led: Any = None
        self._shown: State | None = None

    def show(self, state: State) -> None:
        if self._led is None:
            from gpiozero import RGBLED

            with fallbacks_logged():
                self._led = RGBLED(*self.pins)
        if state == State.FAULT == self._shown:
            return  # blinking already: starting over would break the rhythm
        self._shown = state
        if state == State.FAULT:
            on, off = FAULT_BLINK
            self._led.blink(on_time=on, off_time=off, on_color=STATE_COLOURS[state], off_color=(0.0, 0.0, 0.0))
        else:
            self._led.color = STATE_COLOURS[state]  # also stops a blink

    @property
    def colour(self) -> tuple[float, float, float] | None:
        return None if self._led is None else tuple(self._led.color)

    def close(self) -> None:
        if self._led is not None:
            self._led.close()
            self._led = None


class ConsoleLight:
    """The state as a line on the terminal, for keyboard push-to-talk (no LED to look at)."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self._last: State | None = None

    def show(self, state: State) -> None:
        import sys

        shown = State.SPEAKING if state == State.PAUSING else state  # a pause between units is still speaking
        if shown != self._last:
            self._last = shown
            print(f"[{shown.value}]", file=self.stream or sys.stdout, flush=True)

    def close(self) -> None:
        pass


class NoLight:
    def show(self, state: State) -> None:
        log.debug("state: %s", state.value)

    def close(self) -> None:
        pass
