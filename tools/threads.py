"""A tool's own thread for its blocking work (a database search, a forecast file, a sensor read).

Not the event loop's shared pool (``asyncio.to_thread``): a call that hangs there, on a stuck
sensor or disk, keeps a worker that the language model's streaming needs too, and a handful of
such calls leave none, so hearth would stop answering altogether.  Here a hung call holds this one
thread; later calls wait behind it until the executor's timeout gives them up, and a call given
up before it started is dropped unrun.  The thread is a daemon, so a hung one never holds up the
process's exit, and it ends after ``idle_s`` with nothing to do (started again when needed).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[Callable[..., Any], tuple[Any, ...], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


class ToolThread:
    """Runs blocking calls one at a time, in order, on one thread of its own."""

    def __init__(self, name: str, idle_s: float = 30.0) -> None:
        self.name = name
        self.idle_s = idle_s
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the tool's thread; cancelling the wait drops the call if it has not started."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((fn, args, future, loop))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=f"tool-{self.name}", daemon=True)
                self._thread.start()
        return await future

    @property
    def alive(self) -> bool:
        """Whether the thread is running now (busy, or idle for less than ``idle_s``)."""
        with self._lock:
            return self._thread is not None

    def _work(self) -> None:
        while True:
            try:
                fn, args, future, loop = self._jobs.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:  # a job put after the timeout but before this finds the thread still here
                    if self._jobs.empty():
                        self._thread = None
                        return
                continue
            if future.cancelled():
                continue  # given up while it waited behind a slow call
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:
                pass  # the event loop is gone (shutdown): nobody is waiting any more


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
