"""The speaker's volume by voice ("louder", "volume 5", "소리 줄여") and by a long press.

The level lives in the settings store, so it is the same after a restart, and it is applied
through ``apply`` before the answer is spoken: "Volume 8." is heard at volume 8.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.settings import SettingsStore
from tools.spec import ToolOutput, ToolSpec
from tools.spoken import Language, check_language

log = logging.getLogger(__name__)

MIN_LEVEL = 1
MAX_LEVEL = 10
SETTING = "volume"


class Volume:
    """The current level, kept in ``store``, handed to ``apply`` whenever it changes."""

    def __init__(self, store: SettingsStore, apply: Callable[[int], None], default: int = 7) -> None:
        self.store = store
        self.apply = apply
        self.default = default

    @property
    def level(self) -> int:
        value = self.store.get(SETTING, self.default)
        if not isinstance(value, int) or isinstance(value, bool) or not MIN_LEVEL <= value <= MAX_LEVEL:
            log.error("stored volume %r is not a level from %d to %d; using %d", value, MIN_LEVEL, MAX_LEVEL, self.default)
            return self.default
        return value

    def restore(self) -> int:
        """Apply the stored level (at start-up) and return it."""
        level = self.level
        self.apply(level)
        return level

    def set(self, level: int) -> int:
        level = max(MIN_LEVEL, min(MAX_LEVEL, level))
        self.store.put(SETTING, level)
        self.apply(level)
        return level


class VolumeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    level: int | None = Field(default=None, ge=0, le=100, description="The level to set, 1 (quietest) to 10 (loudest).")
    step: int | None = Field(default=None, ge=-10, le=10, description="Steps up (positive) or down (negative).")
    wrap: bool = Field(default=False, description="Past the loudest, start again from the quietest (the long press).")

    @model_validator(mode="after")
    def _one_of(self) -> VolumeArgs:
        if (self.level is None) == (self.step is None):
            raise ValueError("give either level or step")
        return self


_AT_THE_END = {
    "en": ("Volume {level}.", " That's as loud as I go.", " That's as quiet as I go."),
    "ko": ("볼륨 {level}.", " 가장 큰 소리예요.", " 가장 작은 소리예요."),
}


def _said(level: int, previous: int, wanted: int | None, language: Language) -> str:
    """"Volume 8.", and whether that is as far as it goes (asked past an end, or stepped at one)."""
    said, loudest, quietest = _AT_THE_END[language]
    text = said.format(level=level)
    if wanted is not None and wanted > MAX_LEVEL or (wanted is None and level == previous == MAX_LEVEL):
        text += loudest
    elif wanted is not None and wanted < MIN_LEVEL or (wanted is None and level == previous == MIN_LEVEL):
        text += quietest
    return text


def volume_tools(volume: Volume, language: str = "en") -> list[ToolSpec]:
    """volume_set, bound to ``volume``; called by command words and the long press, not the model."""
    lang = check_language(language)

    async def volume_set(args: VolumeArgs) -> ToolOutput:
        previous = volume.level
        if args.level is not None:
            wanted: int | None = args.level
            target = args.level
        else:
            assert args.step is not None
            wanted = None
            target = previous + args.step
            if args.wrap and previous == MAX_LEVEL and args.step > 0:
                target = MIN_LEVEL
        level = volume.set(target)
        return ToolOutput(_said(level, previous, wanted, lang), {"level": level, "previous": previous})

    return [
        ToolSpec("volume_set", "Set the speaker's volume (1-10) or step it up or down.", VolumeArgs, volume_set,
                 "act", expected_s=0.01, timeout_s=2.0, model_calls=False),
    ]
