"""hearth's configuration: one TOML file read into pydantic models.

Every key has a default, so an empty file (or none) gives the embedded default.
A bad value stops start-up with one line naming the key and what is allowed.
"""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from firmware_py.safe_text import clean

DEFAULT_CONFIG_PATHS = (Path("/etc/hearth/hearth.toml"), Path.home() / ".config" / "hearth" / "hearth.toml")

MAX_CONFIG_BYTES = 1 << 20
"""A configuration file is a few kilobytes; anything past a mebibyte is the wrong file."""


def _expanded(path: Path) -> Path:
    """``path`` with ``~`` or ``~user`` expanded; ValueError (one line) when it cannot be."""
    text = str(path)
    if not text or text == ".":
        # Path("") reads as "."; an empty value is a mistake, not a wish for the working directory.
        raise ValueError("an empty path (leave the key out for the default)")
    if "\x00" in text:
        raise ValueError("a path cannot hold a NUL character")
    try:
        return path.expanduser()
    except RuntimeError:
        user = text.split("/", 1)[0]
        raise ValueError(f"cannot expand {user}: no such user, or no home directory") from None


UserPath = Annotated[Path, AfterValidator(_expanded)]
"""A path from the configuration, ``~`` expanded once here so that no later use can fail on it."""


def _plain(text: str) -> str:
    if clean(text) != text:
        raise ValueError("a name cannot hold control characters, line breaks, bidirectional controls or invisible characters")
    return text


PlainName = Annotated[str, AfterValidator(_plain)]
"""A name hearth says or shows (it may come back in a transcript and be kept): one line of text."""


def expand_path(path: Path, what: str) -> Path:
    """``path`` with ``~`` expanded, for paths given on the command line; ConfigError naming ``what``."""
    try:
        return _expanded(path)
    except ValueError as exc:
        raise ConfigError(f"{what} {_printable(str(path))}: {exc}") from None


class Section(BaseModel):
    # No setting means anything at infinity or NaN; TOML can write both ("inf", "nan").
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class LlmConfig(Section):
    model: str = "smollm2-135m-instruct"
    """Name of an installed LLM in the model manifest (an instruct GGUF with a chat template)."""
    n_threads: int | None = Field(None, ge=1, le=64)
    """CPU threads for decoding; unset: the platform profile's (``hearth run`` prints it)."""
    n_ctx: int = Field(2048, ge=256, le=32768)
    """Context window in tokens."""
    max_tokens: int = Field(120, ge=8, le=2048)
    """Longest spoken reply, in tokens."""
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    """Sampling temperature."""
    kept_heads: int = Field(20, ge=0, le=256)
    """Decision prompt heads (the examples fixed per tool) whose model state is kept in memory, so
    a request's decision reads only its own words; ~7 MB each for SmolLM2-135M, 0 keeps none."""
    jump_forward: bool = True
    """Write what a decision's schema forces (keys, quotes, the rest of a tool's name) in one batch
    instead of a token at a time; false samples every token."""


class AsrConfig(Section):
    model_en: str = "whisper-tiny-en"
    """Recognizer model for English: "whisper-tiny-en" (takes the household's words as a prompt,
    n best) or "moonshine-base-en" (fewer words wrong in a kitchen, no prompt; see docs/hearing.md)."""
    model_ko: str = "whisper-base"
    """Recognizer model for Korean (multilingual Whisper)."""
    second_ear_en: str | None = None
    """A second English recognizer that hears every utterance too ("moonshine-base-en" beside
    whisper tiny.en, or "whisper-tiny-en" beside Moonshine): its whole decode runs beside the first
    one's final, and an act whose values (a number, a length, an item, a place, a device) it did not
    hear is asked back first.  Unset: one ear.  Measured in docs/hearing.md ("Two ears")."""
    n_threads: int | None = Field(None, ge=1, le=64)
    """CPU threads for decoding; unset: the platform profile's."""
    partial_interval_s: float = Field(0.5, ge=0.1, le=5.0)
    """How often the growing utterance is re-decoded for partial transcripts."""
    moonshine_partial_interval_s: float = Field(0.25, ge=0.1, le=5.0)
    """The same for Moonshine, whose partials are cheap: each encodes only the audio there is and
    checks the partial before it in one decoder pass, and the final checks the last one."""
    partial_window_en: Literal["fit", "full"] = "fit"
    """Whisper's encoder window for English partial transcripts: "fit" (the utterance plus 2 s, at
    least 8 s; several times cheaper) or "full" (always 30 s, as Whisper was trained)."""
    partial_window_ko: Literal["fit", "full"] = "full"
    """The same for Korean, where "fit" shifted Whisper base's no-speech scores on real speech."""
    final_window: Literal["fit", "full"] = "full"
    """The window of the final transcript, the one hearth acts on.  "full" is right by
    construction; "fit" is cheaper, and a decode that fails a check (empty, no end, a loop, an
    echo of the prompt) is redone in the full window, but a short window can also lose words
    without failing any check, differently on each CPU."""
    bias: bool = True
    """Give Whisper the kitchen's words and the household's names (timer labels, list items,
    recipe titles, places) as a prompt, so it hears them rather than what sounds alike; and
    choose among a final's best hypotheses by them (see ``hypotheses_en``)."""
    hypotheses_en: int = Field(5, ge=1, le=10)
    """With ``bias``: how many hypotheses an English final keeps (a beam search this wide, about
    25 ms more on tiny.en here, about twice a greedy final with Moonshine); the one that best fits
    the kitchen's words is heard.  1 is greedy."""
    hypotheses_ko: int = Field(5, ge=1, le=10)
    """The same for Korean, weighed by syllable pairs.  Over Kokoro-voiced requests (clean,
    ``bench.kitchen.hear``) 5 against 1 took Whisper base's mean CER from 0.32 to 0.27 on ko-kitchen,
    0.33 to 0.22 on ko-fresh and 0.34 to 0.29 on ko-second, for a final decode about 0.1 s longer
    (docs/hearing.md)."""


class VadConfig(Section):
    threshold: float = Field(0.5, gt=0.0, lt=1.0)
    """Speech probability above which a 32 ms window counts as speech."""
    min_silence_s: float = Field(0.1, ge=0.05, le=3.0)
    """Silence that counts as a pause: where the end of a tapped turn is first weighed."""
    min_speech_s: float = Field(0.15, ge=0.05, le=2.0)
    """Shortest sound that counts as speech."""


class TtsConfig(Section):
    voice_en: str = "piper-en-joe"
    """Neural voice for English (a piper voice in the manifest)."""
    voice_ko: str = "kokoro-82m-ja"
    """Voice for Korean: a Kokoro model in the manifest, read from Korean phonemes, or "espeak-ng".
    When the Kokoro model is not installed, hearth says so in its log and speaks Korean with espeak-ng."""
    kokoro_voice_ko: str = "jf_nezumi"
    """Which of the Kokoro model's voices speaks Korean: jf_alpha, jf_gongitsune, jf_nezumi, jf_tebukuro, jm_kumo.
    jf_nezumi is the one Whisper base understood best (docs/voices.md)."""
    espeak_voice_ko: str = "ko"
    """espeak-ng voice for Korean, when ``voice_ko`` is "espeak-ng" or its model is missing."""
    n_threads: int = Field(1, ge=1, le=64)
    """CPU threads for synthesis (the English voice; Korean's espeak-ng fallback uses one)."""
    n_threads_ko: int = Field(2, ge=1, le=64)
    """CPU threads for the Korean Kokoro voice.  Each sentence is one whole model run before any of
    it plays, so threads shorten first audio directly: the demo's answer came 1.5 s after its text
    on two threads and 2.3 s on one (two x86 cores); and no talker writes beside it in Korean."""
    speed: float = Field(1.0, ge=0.5, le=2.0)
    """Speaking rate; 1.0 is the voice's own."""


class AudioConfig(Section):
    input_device: str | int | None = None
    """PortAudio input device name or index; unset means the system default."""
    output_device: str | int | None = None
    """PortAudio output device name or index; unset means the system default."""
    array: str | None = None
    """A microphone array instead of one microphone: a board's name ("respeaker-2mic",
    "respeaker-4mic", "respeaker-usb-4mic", "respeaker-6mic", "square-65mm") or a geometry file
    ending in .toml (docs/hearing.md, "A microphone array").  The input is opened with the array's
    channels and heard through ``array_front_end``; unset is one microphone."""
    array_front_end: Literal["mvdr", "first"] = "mvdr"
    """What the array's channels become: "mvdr" (a beam toward the user that holds off the
    kitchen's noise as heard before the press) or "first" (its first microphone alone)."""

    @field_validator("array")
    @classmethod
    def _array(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from audio.array import BOARDS

        if value not in BOARDS and not value.endswith(".toml"):
            raise ValueError(f"a board ({', '.join(BOARDS)}) or a geometry file ending in .toml")
        return value
    output_rate: int = Field(22050, ge=8000, le=96000)
    """Sample rate the speaker is opened at (voices at other rates are resampled)."""
    volume: int = Field(8, ge=1, le=10)
    """The level (1 quietest, 10 loudest; 3 dB a step) hearth starts at the first time. After that
    the level last set by voice ("louder", "volume 5") or the long press is kept."""


class ListenConfig(Section):
    end_of_turn_model: str = "smart-turn-v3"
    """The model that hears whether a pause ends the user's turn (a "turn" model in the manifest),
    or "none": then ``tap_silence_s`` of silence ends every tapped utterance."""
    finished_threshold: float = Field(0.5, gt=0.0, lt=1.0)
    """P(finished) from the end-of-turn model at or above which a pause may end the turn at once
    (the words before it must not leave the request open)."""
    end_silence_s: float = Field(1.5, ge=0.3, le=10.0)
    """Silence after which the user has surely finished.  A tapped utterance ends here when the
    sound or the words say it goes on; after an earlier end hearth still listens until here and
    neither speaks nor acts, so a user who only paused is heard whole."""
    sure_end_silence_s: float = Field(0.6, ge=0.2, le=10.0)
    """After an early end that everything agrees on (the end-of-turn model is sure, the final
    words leave nothing open, the hearing is sure, the last partial had the same words), the
    silence after which hearth answers instead of ``end_silence_s``. Set it to ``end_silence_s``
    to always wait that long."""
    tap_silence_s: float = Field(0.5, ge=0.2, le=5.0)
    """After a tap, silence that ends the utterance when there is no end-of-turn model."""
    speculative_silence_s: float = Field(0.25, ge=0.05, le=5.0)
    """A pause this long starts the final decode before the utterance is known to be over."""
    hold_silence_s: float = Field(1.5, ge=0.3, le=10.0)
    """While the button is held, a pause this long ends the utterance anyway."""
    no_speech_timeout_s: float = Field(6.0, ge=1.0, le=60.0)
    """Give up if nobody speaks this long after the press."""
    max_utterance_s: float = Field(28.0, ge=2.0, le=29.0)
    """Longest utterance (Whisper sees at most 30 s)."""
    doubtful_below: float = Field(0.5, ge=0.0, le=1.0)
    """Hearing confidence (0–1: the weakest of the decoder's certainty, its no-speech probability,
    the voice's level above the room, the partials' agreement) below which an act is asked back
    before it is made ("Start a timer for 30 minutes?").  0 never asks."""
    unheard_below: float = Field(0.15, ge=0.0, le=1.0)
    """Hearing confidence below which hearth says it did not catch that and does nothing; at most
    ``doubtful_below``.  0 answers whatever was heard."""
    unsure_word_below: float = Field(0.4, ge=0.0, le=1.0)
    """A word the recognizer gives less probability than this (0–1) is not sure: an act that needs
    it ("five" of a five-second timer) is asked back, however sure the rest was.  English only;
    0 never asks on a word alone."""

    @model_validator(mode="after")
    def _unheard_at_most_doubtful(self) -> ListenConfig:
        if self.unheard_below > self.doubtful_below:
            raise ValueError(f"unheard_below ({self.unheard_below}) must not exceed doubtful_below ({self.doubtful_below})")
        return self


class ButtonConfig(Section):
    kind: Literal["gpio", "keyboard"] = "gpio"
    """"gpio": a button on ``pin``; "keyboard": Enter in the terminal (for a machine without GPIO)."""
    pin: int = Field(17, ge=0, le=27)
    """BCM number of the push-to-talk button (wired to ground; the internal pull-up is used)."""
    bounce_s: float = Field(0.02, ge=0.0, le=0.5)
    """Debounce time."""
    long_press_s: float = Field(1.5, ge=0.5, le=10.0)
    """Holding the button this long without saying anything turns the volume up a step (from the
    loudest, back to the quietest); a press with speech is a request, however long."""
    led: Literal["rgb", "none"] = "rgb"
    """Status LED: an RGB LED on three pins, or none."""
    led_pins: tuple[int, int, int] = (22, 23, 24)
    """BCM pins of the LED's red, green and blue legs."""


class ToolsConfig(Section):
    enabled: bool = True
    """Let the model call the local tools (timers, lists, conversions, recipes, weather)."""
    data_dir: UserPath | None = None
    """Where timers, lists and the recipe index are kept; unset means $HEARTH_DATA_DIR or ~/.local/share/hearth/data."""
    recipes_dir: UserPath | None = None
    """A folder of recipes (Markdown or JSON); unset means the sample collection shipped with hearth."""
    forecast_file: UserPath | None = None
    """The cached forecast the sync job writes; unset means <data_dir>/forecast.json."""
    home: PlainName = "home"
    """The place weather questions are about when none is named (a name or alias in the forecast file)."""
    sensor: Literal["none", "bme280"] = "none"
    """A local temperature/humidity sensor on I2C (``pip install hearth[sensors]``)."""
    sensor_outdoor: bool = False
    """Whether the sensor hangs outside; otherwise its readings are reported as indoor."""
    pretool_threshold_s: float = Field(0.3, ge=0.0, le=10.0)
    """Tools expected to take longer than this get a short line spoken before they run (0: all)."""
    answer: Literal["tool_text", "model"] = "tool_text"
    """After a tool: speak the tool's own answer, or let the model phrase it (bigger models)."""
    tool_first: bool = True
    """The talker names the tool and its arguments first, and writes a line only when no tool
    answers: a call is decided in a handful of tokens, and the line before a slow tool is the
    tool's own ("Let me check the weather.").  False: it writes its line first, then the tool."""
    ring_times: int = Field(5, ge=1, le=60)
    """A finished timer is announced up to this many times, until a press answers it."""
    ring_interval_s: float = Field(15.0, ge=1.0, le=600.0)
    """Silence between two announcements of a finished timer."""


class CadenceConfig(Section):
    enabled: bool = True
    """Speak replies in natural units with short pauses; off: each reply is synthesised whole."""
    weak_open_chars: int = Field(40, ge=10, le=400)
    """A unit longer than this may end at a comma or a connective ending."""
    max_units: int = Field(5, ge=1, le=50)
    """Units per reply at most; the rest of a longer reply is said as one."""
    chars_per_s: float = Field(9.0, gt=0.0, le=100.0)
    """Base typing speed the pauses are derived from."""
    closeness: float = Field(1.0, ge=0.1, le=10.0)
    """Pause weight for closeness to the household: below 1 is quicker."""
    busy: float = Field(1.0, ge=0.1, le=10.0)
    """Pause weight for how busy hearth is: above 1 is slower."""
    mood: float = Field(1.0, ge=0.1, le=10.0)
    """Pause weight for mood: below 1 lively, above 1 calm."""
    budget_s: float = Field(6.0, ge=0.0, le=60.0)
    """Most the typed delays of one reply may add up to (scaled down in proportion beyond)."""
    speech_ratio: float = Field(0.1, ge=0.0, le=1.0)
    """Fraction of the typed delay that becomes silence between spoken units."""
    min_pause_s: float = Field(0.12, ge=0.0, le=5.0)
    """Shortest silence between two units."""
    max_pause_s: float = Field(0.6, ge=0.0, le=5.0)
    """Longest silence between two units."""
    barge_in: Literal["stop", "rush"] = "stop"
    """When the user speaks up during a reply: "stop" it (the rest is kept as unspoken), or
    "rush" through the rest with no pauses.  A button press always stops it."""


class EchoConfig(Section):
    enabled: bool = True
    """Cancel hearth's own voice in the microphone, so the user is heard over a reply (a spoken
    "stop" stops it); off, or while the cancellation measured falls short of ``min_erle_db``,
    hearth hears the user only in the pauses between units."""
    canceller: Literal["apm", "speex"] = "speex"
    """The echo canceller: "speex" is speexdsp's (the ``pyaec`` package, else the system's
    libspeexdsp), "apm" is WebRTC's audio processing (the ``livekit`` package, the ``apm`` extra)."""
    min_erle_db: float = Field(20.0, ge=0.0, le=60.0)
    """Least echo attenuation (ERLE, dB) measured while hearth speaks for listening over its
    voice; below it, pause-only listening (said in the log)."""


class HeartbeatConfig(Section):
    enabled: bool = True
    """Think and fetch on the partial transcripts while the user speaks (needs the tools)."""
    interval_s: float = Field(0.5, ge=0.1, le=5.0)
    """Δ: how often the latest partial transcript is looked at; a look decides only when the words
    changed or an early look-up came back."""
    max_in_flight: int = Field(1, ge=1, le=4)
    """K: decisions under way at once. They share the one model, so a second would wait for the
    first and then decide on words already old."""
    min_words: int = Field(2, ge=1, le=10)
    """A partial with fewer words is not thought about."""
    stop_at_end: bool = True
    """Cut short the decisions under way once the user has finished, so the final decode has the
    CPU (what they evaluated stays cached); false lets them run on to the handoff."""
    finish_newest: bool = True
    """At the end, the decision on the newest partial's words runs on (one is started when none
    had them); the answer takes it when the final transcript has the same words."""


class PlatformConfig(Section):
    profile: Literal["auto", "pi5", "jetson-orin", "x86", "generic"] = "auto"
    """The machine hearth runs on, which picks the reasoner, the thread counts and where each model
    runs (``python3 firmware_py/platform.py show`` prints the choice); "auto" detects it."""


class ReasonerConfig(Section):
    where: Literal["auto", "local", "remote", "off"] = "auto"
    """Where the reasoner runs: "auto" (locally, the model the platform profile picks; none where
    it picks none), "local", "remote" (an OpenAI-compatible server at ``url``, opt-in: nothing
    leaves the home unless set), or "off" (the talker answers everything)."""
    model: str = "auto"
    """The local reasoner (an "llm" model in the manifest), or "auto" for the profile's choice."""
    n_threads: int | None = Field(None, ge=1, le=64)
    """CPU threads of the local reasoner; unset: the profile's."""
    gpu_layers: int | None = Field(None, ge=-1, le=1000)
    """Layers of the local reasoner on the GPU (-1 all); unset: the profile's (all on a Jetson)."""
    n_ctx: int = Field(2048, ge=512, le=32768)
    """Context window of the local reasoner, in tokens."""
    url: str | None = None
    """The server's root address for "remote", e.g. "http://192.168.1.20:8080" (llama.cpp's
    server, Ollama at :11434, vLLM); the API path is added."""
    remote_model: str | None = None
    """The model name the server is asked for (Ollama and vLLM need one)."""
    api_key: str | None = None
    """Sent as a bearer token, for a server that asks for one."""
    id_slot: int | None = Field(None, ge=0, le=255)
    """llama.cpp server slot to pin, so this speaker's prompt stays cached in it."""
    schema_style: Literal["llama_cpp", "openai"] = "llama_cpp"
    """How a JSON schema is asked for: llama.cpp's form, or OpenAI's (Ollama, vLLM)."""
    max_tokens: int = Field(96, ge=8, le=1024)
    """Longest spoken answer, in tokens."""
    max_calls: int = Field(3, ge=1, le=10)
    """Tool calls one request may make."""
    max_s: float = Field(15.0, ge=1.0, le=120.0)
    """Wall time from delegation to the end of the answer; past it the talker says what is known."""
    reference: bool = True
    """Answer questions for knowledge from hearth's vetted kitchen reference where it holds the fact."""


class ServeConfig(Section):
    wyoming: str | None = None
    """Where ``hearth serve`` offers hearth's parts to Home Assistant over Wyoming, e.g.
    "tcp://0.0.0.0:10700" (the machine Home Assistant runs on must reach it); unset: only when
    ``--wyoming`` is given (then tcp://127.0.0.1:10700)."""
    wyoming_programs: tuple[Literal["asr", "tts", "handle"], ...] = ("asr", "tts", "handle")
    """What the Wyoming server offers: speech to text, text to speech, and hearth's answers."""
    wyoming_idle_s: float = Field(30.0, ge=0.1, le=3600.0)
    """A Wyoming client that sends nothing for this many seconds (stopped partway through an event,
    or idle between requests) is disconnected; while hearth is still answering it, it may wait as
    long as the answer takes."""
    wyoming_max_connections: int = Field(32, ge=1, le=1024)
    """Wyoming connections served at once; one more is told it is busy and closed."""
    languages: tuple[Literal["en", "ko"], ...] = ()
    """Languages the Wyoming server offers besides ``language`` (each loads its own recognizer,
    voice and talker; the reasoner only for ``language``)."""
    web: str | None = None
    """Where ``hearth serve`` shows the companion page, "HOST:PORT" (any address but loopback
    needs ``web_token``); unset: only when ``--web`` is given (then 127.0.0.1:8750)."""
    web_token: str | None = Field(None, max_length=256)
    """The secret the page asks for when it is reached from another machine (at least 16
    characters, not guessable as passwords are guessed: no words, keyboard runs, sequences, repeats
    or dates alone, judged by zxcvbn; make one with
    python -c "import secrets; print(secrets.token_urlsafe(24))"); open it once as
    http://HOST:PORT/?token=... and the browser keeps it (a cookie kept for 400 days)."""

    @field_validator("wyoming")
    @classmethod
    def _wyoming_uri(cls, value: str | None) -> str | None:
        if value is not None:
            wyoming_address(value)
        return value

    @field_validator("web")
    @classmethod
    def _web_address(cls, value: str | None) -> str | None:
        if value is not None:
            web_address(value)
        return value

    @field_validator("web_token")
    @classmethod
    def _web_token(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if (problem := web_token_problem(value)) is not None:
            raise ValueError(f"{problem}; make one with {MAKE_TOKEN}")
        # Spaces around it are no part of it: HTTP drops them from a header the token is sent in.
        return value.strip()


WEB_TOKEN_MIN_CHARS = 16
"""The shortest ``serve.web_token``, its surrounding spaces stripped."""
WEB_TOKEN_MIN_GUESSES_LOG10 = 14.0
"""The fewest guesses (as a power of ten) zxcvbn may estimate for a ``serve.web_token``: 10^14 at a
thousand guesses a second over the network is three thousand years.  Any token made as
:data:`MAKE_TOKEN` says is near 10^32."""
MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(24))"'
"""A token of 32 URL-safe characters from 24 random bytes (192 bits)."""
_ZXCVBN_MAX_CHARS = 72
"""zxcvbn judges at most this many characters (its own default; longer takes seconds).  A longer
token is judged by its start, which errs towards refusing."""
_OUR_WORDS = ["hearth", "kitchen", "token", "secret", "page", "home", "assistant"]
"""Words a household would reach for first in a token for this page: guessed like dictionary words."""

_PATTERNS = {"sequence": "a sequence", "spatial": "a keyboard run", "repeat": "a repeat", "date": "a date",
             "regex": "a year"}
"""zxcvbn's patterns, in the words of the refusal ("dictionary" is named by its list, below)."""


def _pattern_name(match: dict[str, Any]) -> str | None:
    pattern = match.get("pattern")
    if pattern == "dictionary":
        return "a common password" if match.get("dictionary_name") == "passwords" else "words"
    return _PATTERNS.get(str(pattern))


def web_token_problem(token: str) -> str | None:
    """Why ``token`` is too weak to guard the page (None when it is not).

    Strength is judged as passwords are guessed, by zxcvbn: dictionaries of words, names and common
    passwords, keyboard runs, sequences, repeats and dates, each costing a guesser only a few
    guesses.  Refused are tokens shorter than 16 characters once the spaces around them are
    stripped, tokens made of nothing but such pieces ("abcdefghijklmnop", "correcthorsebatterystaple"),
    and any other under 10^14 estimated guesses.  The message names what was found, never the token.
    """
    from zxcvbn import zxcvbn  # imported here: only a configuration with a token needs it

    stripped = token.strip()
    if len(stripped) < WEB_TOKEN_MIN_CHARS:
        what = "blank" if not stripped else f"{len(stripped)} characters"
        return f"too short to guard the page ({what}; at least {WEB_TOKEN_MIN_CHARS} needed)"
    judged = zxcvbn(stripped[:_ZXCVBN_MAX_CHARS], user_inputs=_OUR_WORDS)
    pieces = judged["sequence"]
    found = list(dict.fromkeys(name for m in pieces if (name := _pattern_name(m)) is not None))
    made_of = " and ".join(found)
    if found and all(m.get("pattern") != "bruteforce" for m in pieces):
        return f"too easy to guess: nothing in it but {made_of}, which guessers try first (zxcvbn)"
    if float(judged["guesses_log10"]) < WEB_TOKEN_MIN_GUESSES_LOG10:
        holds = f"; it holds {made_of}" if found else ""
        return f"too easy to guess: zxcvbn estimates fewer than 10^{WEB_TOKEN_MIN_GUESSES_LOG10:.0f} guesses{holds}"
    return None


def wyoming_address(uri: str) -> tuple[str, int]:
    """("host", port) of a "tcp://HOST:PORT" address; ValueError (one line) for anything else."""
    if not uri.startswith("tcp://"):
        raise ValueError(f"a Wyoming address is tcp://HOST:PORT, not {uri!r}")
    return _host_port(uri.removeprefix("tcp://"), "tcp://HOST:PORT")


def web_address(address: str) -> tuple[str, int]:
    """("host", port) of "HOST:PORT"; ValueError (one line) for anything else."""
    return _host_port(address, "HOST:PORT")


def _host_port(text: str, form: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"an address is {form} with a port from 0 to 65535, not {text!r}")
    return host, int(port)


class HomeAssistantConfig(Section):
    url: str | None = None
    """The household's Home Assistant, e.g. "http://192.168.1.10:8123"; unset: no home control.
    hearth reaches this address and no other (see systemd/hearth-home-assistant.conf)."""
    token_file: UserPath | None = None
    """A file holding a long-lived access token, made by an administrator in Home Assistant
    (your profile → Security → Long-lived access tokens); unset: $HEARTH_HA_TOKEN.  Never logged."""
    area: str | None = None
    """The Home Assistant area this speaker stands in ("Kitchen"): "turn on the light" means this
    area's light, as a switch by the door would."""
    timeout_s: float = Field(5.0, ge=0.5, le=30.0)
    """How long one request to Home Assistant may take before hearth says it cannot reach it."""
    shopping_list: str | None = None
    """A to-do entity of Home Assistant ("todo.shopping_list") that holds the household's shopping
    list: every speaker and the family's app see the same list. hearth keeps working on its own
    copy while Home Assistant is down and catches up when it is back. Unset: hearth's own list."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.strip().lower().startswith(("http://", "https://")):
            raise ValueError('an http:// or https:// address, e.g. "http://192.168.1.10:8123"')
        return value.strip() if value else None

    @field_validator("shopping_list")
    @classmethod
    def _todo(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("todo."):
            raise ValueError('a to-do entity of Home Assistant, e.g. "todo.shopping_list"')
        return value


class HearthConfig(Section):
    language: Literal["en", "ko"] = "en"
    """Language hearth listens and speaks in."""
    models_dir: UserPath | None = None
    """Where models are installed; unset means $HEARTH_MODELS_DIR or ~/.local/share/hearth/models."""
    history_turns: int = Field(4, ge=0, le=32)
    """Previous exchanges the model sees."""
    system_prompt: str | None = None
    """Replaces the built-in system prompt for the language."""
    llm: LlmConfig = LlmConfig()
    asr: AsrConfig = AsrConfig()
    vad: VadConfig = VadConfig()
    tts: TtsConfig = TtsConfig()
    audio: AudioConfig = AudioConfig()
    listen: ListenConfig = ListenConfig()
    button: ButtonConfig = ButtonConfig()
    tools: ToolsConfig = ToolsConfig()
    cadence: CadenceConfig = CadenceConfig()
    echo: EchoConfig = EchoConfig()
    heartbeat: HeartbeatConfig = HeartbeatConfig()
    platform: PlatformConfig = PlatformConfig()
    reasoner: ReasonerConfig = ReasonerConfig()
    serve: ServeConfig = ServeConfig()
    home_assistant: HomeAssistantConfig = HomeAssistantConfig()


class ConfigError(ValueError):
    """A configuration problem, described in one line."""


_SHOWN_CHARS = 60
"""How much of a bad value a message repeats: enough to recognise it, never a screenful."""


def _printable(text: str) -> str:
    """``text`` safe inside a one-line message: line breaks and other control characters escaped."""
    return text if text.isprintable() else repr(text)[1:-1]


def _shown(value: Any) -> str:
    """A bad value as a message repeats it: its repr, on one line, shortened when long."""
    text = _printable(repr(value))
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


_SECRET_KEYS = frozenset({"serve.web_token"})
"""Keys whose value a message must not repeat: it would go to the terminal and the journal."""


def _describe(error: dict[str, Any], model: type[BaseModel]) -> str:
    key = ".".join(str(part) for part in error["loc"]) or "(top level)"
    if error["type"] == "extra_forbidden":
        section: Any = model
        for part in error["loc"][:-1]:
            section = section.model_fields[str(part)].annotation
        allowed = ", ".join(section.model_fields)
        return f"{_printable(key)}: unknown key (allowed here: {allowed})"
    if error["type"] == "model_type":
        return f"{key}: should be a table of settings (a [{key}] section), got {_shown(error.get('input'))}"
    message = error["msg"].removeprefix("Value error, ")
    if key in _SECRET_KEYS:
        return f"{_printable(key)}: {_printable(message)}"
    return f"{_printable(key)}: {_printable(message)} (got {_shown(error.get('input'))})"


def parse_config(data: dict[str, Any], source: str = "configuration", overridden: frozenset[str] = frozenset()) -> HearthConfig:
    """``data`` as a config; ConfigError of one line naming ``source`` (or the command line, for
    a key in ``overridden``) and the first bad key."""
    try:
        return HearthConfig.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        where = "command line" if ".".join(str(p) for p in errors[0]["loc"]) in overridden else source
        raise ConfigError(f"{where}: {_describe(errors[0], HearthConfig)}{more}") from None


def read_config_file(path: Path) -> dict[str, Any]:
    """The TOML table in ``path``; ConfigError, one line naming the file, for anything else."""
    source = _printable(str(path))
    try:
        path = path.expanduser()
    except RuntimeError:
        raise ConfigError(f"{source}: cannot expand {_printable(str(path).split('/', 1)[0])}: no such user") from None
    try:
        # Looked at before it is opened: opening a FIFO would wait for a writer forever.
        mode = path.stat().st_mode
        kind = "a regular file" if stat.S_ISREG(mode) else "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raw = b""
        if kind == "a regular file":
            with path.open("rb") as file:
                raw = file.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{source}: no such configuration file") from None
    except PermissionError:
        raise ConfigError(f"{source}: cannot be read (permission denied)") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        raise ConfigError(f"{source}: cannot be read ({_printable(getattr(exc, 'strerror', None) or str(exc))})") from None
    if kind == "a directory":
        raise ConfigError(f"{source}: is a directory, not a configuration file")
    if kind != "a regular file":
        raise ConfigError(f"{source}: not a regular file")
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: larger than {MAX_CONFIG_BYTES // 1024} KiB, not a configuration file")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark from a Windows editor is harmless
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{source}: not UTF-8 text (line {line}: byte 0x{raw[exc.start]:02x})") from None
    try:
        return tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
        raise ConfigError(f"{source}: not valid TOML ({_printable(str(exc))})") from None
    except RecursionError:
        raise ConfigError(f"{source}: not valid TOML (nested too deeply)") from None


def load_config(path: Path | None = None, overrides: dict[str, Any] | None = None) -> HearthConfig:
    """Read ``path`` (or the first default location that exists; or nothing) into a config.

    ``overrides`` are dotted keys ("button.kind") from the command line.  Every problem, with the
    file or with a value, is a ConfigError of one line naming the file.
    """
    candidates = [path] if path is not None else [p for p in DEFAULT_CONFIG_PATHS if p.exists()]
    data: dict[str, Any] = {}
    source = "built-in defaults"
    if candidates:
        source = _printable(str(candidates[0]))
        data = read_config_file(candidates[0])
    for dotted, value in (overrides or {}).items():
        *parents, leaf = dotted.split(".")
        section: Any = data
        for part in parents:
            section = section.setdefault(part, {})
            if not isinstance(section, dict):
                # "llm = 3" in the file: validation names that key; an override has nowhere to go.
                break
        else:
            section[leaf] = value
    return parse_config(data, source, frozenset(overrides or ()))
