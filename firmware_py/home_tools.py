"""The local tools of one hearth device, built from the configuration: stores opened, executor running."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from firmware_py.config import ConfigError, HearthConfig
from firmware_py.data_folder import data_folder
from tools.clock import clock_tools
from tools.convert import convert_tools
from tools.executor import ToolExecutor
from tools.forecast import place_key, place_names
from tools.home_assistant.client import HomeAssistantClient
from tools.home_assistant.control import home_assistant_tools
from tools.home_assistant.home import HomeAssistantHome
from tools.home_assistant.todo import SharedShoppingList
from tools.lists import ListStore, list_tools
from tools.recipe_reading import ReadingPlace, reading_tools
from tools.recipes import RecipeBook, recipe_tools
from tools.settings import SettingsStore
from tools.registry import ToolRegistry
from tools.sensors import Bme280Sensor, Sensor, SensorError
from tools.timers import TimerStore, timer_tools
from tools.volume import Volume, volume_tools
from tools.weather import HOME_WORDS, WeatherSettings, weather_tools

log = logging.getLogger(__name__)

SAMPLE_RECIPES = Path(__file__).resolve().parent.parent / "recipes"
"""The small recipe collection that ships with hearth."""


def data_dir(config: HearthConfig) -> Path:
    """tools.data_dir, else $HEARTH_DATA_DIR, else ~/.local/share/hearth/data (:mod:`firmware_py.data_folder`)."""
    return data_folder(config).path


# Arguments whose values are names the household uses: asked about once, likely said again.
_NAMED_ARGS = ("label", "item", "location", "query")


@dataclass
class HomeTools:
    """The stores behind the tools, the registry the model sees, and the executor that runs calls."""

    registry: ToolRegistry
    executor: ToolExecutor
    timers: TimerStore
    lists: ListStore
    recipes: RecipeBook
    settings: SettingsStore
    volume: Volume
    closers: list[Any] = field(default_factory=list)
    home: str = ""
    """The place weather questions are about when none is named."""
    forecast_path: Path | None = None
    home_assistant: HomeAssistantHome | None = None
    """The household's Home Assistant, when one is configured."""
    shared_list: SharedShoppingList | None = None
    """The shopping list kept in Home Assistant's to-do entity, when one is configured."""
    _watch: asyncio.Task | None = None
    _places: tuple[int, list[str]] = (-1, [])  # (file mtime, names) of the forecast file

    def vocabulary(self) -> list[str]:
        """Names this household uses, most likely first: running timers' labels, the shopping list,
        what was asked about lately, Home Assistant's rooms and devices, the places with a
        forecast, the recipes."""
        names = [t.label for t in self.timers.active() if t.label]
        names += [entry.item for entry in self.lists.items()]
        for _tool, args in reversed(self.executor.recent):
            names += [str(args[key]) for key in _NAMED_ARGS if isinstance(args.get(key), str)]
        if place_key(self.home) not in HOME_WORDS:
            names.append(self.home)
        if self.home_assistant is not None:
            names += self.home_assistant.words()  # the home's rooms and devices, before the recipe book
        names += [*self.forecast_places(), *self.recipes.names()]
        return names

    def end_timers(self) -> int:
        """Cancel every running or paused timer (a new session of the bench: an earlier one's timers
        have rung by then); how many there were."""
        running = self.timers.active()
        if running:
            self.timers.cancel(all=True)
        return len(running)

    def home_devices(self) -> Callable[..., bool] | None:
        """Whether words name something of the household's Home Assistant; None without one."""
        return self.home_assistant.names_something if self.home_assistant is not None else None

    def forecast_places(self) -> list[str]:
        """The names and aliases of the places the forecast file covers (read again when it changes)."""
        path = self.forecast_path
        try:
            mtime = path.stat().st_mtime_ns if path is not None else -1
        except OSError:
            mtime = -1
        if mtime != self._places[0]:
            self._places = (mtime, place_names(path) if path is not None and mtime != -1 else [])
        return self._places[1]

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        await self.executor.close()
        if self.shared_list is not None:
            await self.shared_list.aclose()
        if self.home_assistant is not None:
            await self.home_assistant.close()
        for store in (self.recipes, self.lists, self.timers, self.settings, *self.closers):
            store.close()


def home_assistant_token(config: HearthConfig) -> str:
    """The access token: ``home_assistant.token_file``'s content, else $HEARTH_HA_TOKEN.  A
    ConfigError (one line, never the token) when neither gives one."""
    path = config.home_assistant.token_file
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"home_assistant.token_file: cannot read {path}: {type(exc).__name__}") from None
        if not token:
            raise ConfigError(f"home_assistant.token_file: {path} is empty")
        return token
    token = os.environ.get("HEARTH_HA_TOKEN", "").strip()
    if not token:
        raise ConfigError("home_assistant.url is set but there is no token: set home_assistant.token_file, or $HEARTH_HA_TOKEN")
    return token


def _home_assistant(config: HearthConfig) -> HomeAssistantHome | None:
    ha = config.home_assistant
    if ha.url is None:
        return None
    client = HomeAssistantClient(ha.url, home_assistant_token(config), timeout_s=ha.timeout_s)
    return HomeAssistantHome(client, own_area=ha.area)


def _no_volume(level: int) -> None:
    log.info("volume %d (no speaker to apply it to)", level)


async def open_home_tools(config: HearthConfig, apply_volume: Callable[[int], None] = _no_volume) -> HomeTools:
    """Open the stores (indexing the recipe folder if it changed) and start the executor.

    ``apply_volume`` sets the speaker's level; it is called at once with the level kept from
    the last run.
    """
    folder = data_dir(config)
    folder.mkdir(parents=True, exist_ok=True)
    language = config.language
    timers = TimerStore(folder / "hearth.db")
    lists = ListStore(folder / "hearth.db")
    settings = SettingsStore(folder / "hearth.db")
    recipes = RecipeBook(config.tools.recipes_dir.expanduser() if config.tools.recipes_dir else SAMPLE_RECIPES, folder / "recipes.db")
    t0 = time.monotonic()
    timers.open()
    lists.open()
    settings.open()
    volume = Volume(settings, apply_volume, default=config.audio.volume)
    volume.restore()
    stats = await asyncio.to_thread(recipes.open)
    closers: list[Any] = []
    sensor: Sensor | None = None
    if config.tools.sensor == "bme280":
        bme = Bme280Sensor()
        try:
            bme.open()
            sensor = bme
            closers.append(bme)
        except SensorError as exc:
            # A missing sensor must not keep the speaker from starting: the forecast still answers.
            log.error("no BME280 sensor: %s; weather comes from the forecast file", exc)
    weather = WeatherSettings(
        forecast_path=config.tools.forecast_file.expanduser() if config.tools.forecast_file else folder / "forecast.json",
        home=config.tools.home,
        language=language,
        sensor_outdoor=config.tools.sensor_outdoor,
    )
    log.info("tools ready in %.2f s (recipes: %s)", time.monotonic() - t0, stats)
    home_assistant = _home_assistant(config)
    shared = None
    if home_assistant is not None and config.home_assistant.shopping_list:
        shared = SharedShoppingList(home_assistant.api, config.home_assistant.shopping_list, lists, folder / "hearth.db")
        shared.open()
    registry = ToolRegistry([
        *timer_tools(timers, language),
        *list_tools(lists, language, shared),
        *clock_tools(language=language),
        *convert_tools(language=language),
        *recipe_tools(recipes, language),
        *reading_tools(recipes, ReadingPlace(settings), language),
        *volume_tools(volume, language),
        *weather_tools(weather, sensor),
        *(home_assistant_tools(home_assistant, language) if home_assistant is not None else ()),
    ])
    executor = ToolExecutor(registry)
    executor.start()
    tools = HomeTools(registry, executor, timers, lists, recipes, settings, volume, closers, home=config.tools.home,
                      forecast_path=weather.forecast_path, home_assistant=home_assistant, shared_list=shared)
    if home_assistant is not None:
        # Read in the background: Home Assistant being down must not hold up the speaker.
        tools._watch = asyncio.create_task(home_assistant.watch(also=shared.sync if shared else None), name="home-assistant-watch")
    return tools
