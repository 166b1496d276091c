"""Front ends for a microphone array: from its channels to the one signal hearth listens to.

:class:`MvdrBeamformer` is a minimum-variance distortionless beamformer in the short-time Fourier
domain, run block by block on the live capture:

- **The noise is what the kitchen sounds like before the press.** The array is read all the time,
  so while no turn is listening each frame's spatial covariance goes into the noise's (a running
  mean over ``noise_time_s``): the hood fan, the tap, the radio on its shelf, hearth's own voice
  from its speaker.  At the press (:meth:`MvdrBeamformer.turn_began`) that estimate is held, so
  the user's words never become "noise".
- **The talker is found from their first words.** From the press on, every frame's covariance is
  summed; per frequency, the direction that grew most over the held noise (the principal
  eigenvector after whitening by the noise, "covariance whitening") is the talker's relative
  transfer function, with room echoes and the board's own shape in it, and no geometry assumed.
  Where nothing has grown (before the first word, or a band the voice does not reach) the
  reference microphone passes unchanged.
- **The weights** are MVDR's for that direction and that noise: the reference microphone's share
  of the talker kept exactly, everything else made as small as it can be.  A point source such as
  the radio is nulled as far as the room's echoes allow.

The output is the reference microphone's timing, ``latency_samples`` (one frame less one hop)
late.  Between turns the last talker's direction is kept, the weights following the noise, so
the audio kept from before a press is already the beam's.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

log = logging.getLogger(__name__)


class ArrayFrontEnd(Protocol):
    """Channels in (``(samples, channels)`` float32 blocks of any length), one signal out."""

    name: str
    """As configured (``audio.array_front_end``)."""
    latency_samples: int
    """How many samples the output lags the input."""

    def process(self, block: np.ndarray) -> np.ndarray:
        """Take the next block; return the output samples completed by it (any number, float32)."""
        ...

    def turn_began(self) -> None:
        """A turn starts listening now: hold what is known of the noise."""
        ...

    def turn_ended(self) -> None:
        """The turn stopped listening: learn the kitchen's sound again."""
        ...


class FirstMicrophone:
    """One microphone of the array, as if the board had only that one: the baseline to beat."""

    name = "first"
    latency_samples = 0

    def __init__(self, channel: int = 0) -> None:
        self.channel = channel

    def process(self, block: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(block[:, self.channel], dtype=np.float32)

    def turn_began(self) -> None:
        pass

    def turn_ended(self) -> None:
        pass


@dataclass(frozen=True)
class BeamSettings:
    """How the MVDR beamformer frames and estimates."""

    frame: int = 512
    """STFT frame at 16 kHz (32 ms), square-root Hann windows in and out."""
    hop: int = 256
    """Frame advance; half a frame, so the windows add up to one."""
    noise_time_s: float = 2.0
    """Time constant of the noise's running covariance between turns."""
    found_above: float = 2.0
    """A frequency's talker counts as found once the whitened covariance's largest eigenvalue (the
    talker's power over the noise's, plus one) reaches this; below it the reference passes."""
    loading: float = 1e-3
    """Diagonal loading of the noise covariance, as a share of its mean power per microphone: keeps
    the weights finite where the noise is nearly rank-deficient (a quiet kitchen)."""
    update_frames: int = 2
    """Frames between weight updates during a turn (between turns every 16)."""
    reference: int = 0
    """The microphone whose timing and share of the talker the output keeps."""
    hold_s: float = 0.5
    """When a turn's first words begin, the beam waits up to this long for the talker to be found,
    holding those frames, then gives them out through the weights it found, at once: the first
    word is heard through the beam as well as the rest, for a moment's delay at the onset (none at
    the end).  0 gives every frame out as it comes."""
    onset_above: float = 2.0
    """A frame of the turn stands out of the noise where its power over the held noise (whitened,
    over the voice band) is this many times the noise's own; the first such frame is where the
    words begin."""
    steer_after_frames: int = 16
    """The wait at the first words ends once this many frames (256 ms) stood out of the noise."""
    post_filter_floor: float | None = None
    """With a value, a Wiener post-filter after the beam: each frequency's gain is one less the
    beam's own noise (its weights on the held noise covariance) over the output's smoothed power,
    never under this floor.  None: no post-filter."""


class MvdrBeamformer:
    """MVDR with the noise from before the press and the talker from covariance whitening."""

    def __init__(self, channels: int, settings: BeamSettings | None = None, rate: int = 16000, name: str = "mvdr") -> None:
        self.name = name
        if channels < 2:
            raise ValueError("a beamformer needs at least two channels")
        self.settings = s = settings or BeamSettings()
        if s.frame % s.hop or s.frame // s.hop != 2:
            raise ValueError("the frame must be two hops")
        self.channels = channels
        self.latency_samples = s.frame - s.hop
        bins = s.frame // 2 + 1
        self._window = np.sqrt(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(s.frame) / s.frame)).astype(np.float32)
        self._alpha = math.exp(-s.hop / rate / s.noise_time_s)
        self._input = np.zeros((s.frame, channels), np.float32)
        self._filled = s.frame - s.hop  # samples of the current frame already in (the first frame starts on zeros)
        self._output = np.zeros(s.frame, np.float32)
        self._noise = np.tile(np.eye(channels, dtype=np.complex128), (bins, 1, 1)) * 1e-9
        self._noise_frames = 0
        self._speech = np.zeros_like(self._noise)
        self._speech_frames = 0
        self._steering: np.ndarray | None = None  # (bins, channels): the talker's relative transfer function
        self._found = np.zeros(bins, bool)
        self._passthrough = np.zeros((bins, channels), np.complex128)
        self._passthrough[:, s.reference] = 1.0
        self._weights = self._passthrough.copy()
        self._listening = False
        self._since_update = 0
        self._out_power: np.ndarray | None = None
        freqs = np.fft.rfftfreq(s.frame, 1 / rate)
        self._voice_band = (freqs >= 200) & (freqs <= 3500)
        self._noise_inverse: np.ndarray | None = None
        self._onset = False
        self._waited = False
        self._spoken_frames = 0
        self._held: list[np.ndarray] = []
        self._hold_frames = int(round(s.hold_s * rate / s.hop))

    # -- the stream -------------------------------------------------------------------------------

    def process(self, block: np.ndarray) -> np.ndarray:
        block = np.asarray(block, dtype=np.float32)
        if block.ndim != 2 or block.shape[1] != self.channels:
            raise ValueError(f"expected (samples, {self.channels}) samples, got {block.shape}")
        s = self.settings
        out: list[np.ndarray] = []
        taken = 0
        while taken < len(block):
            room = s.frame - self._filled
            piece = block[taken : taken + room]
            self._input[self._filled : self._filled + len(piece)] = piece
            self._filled += len(piece)
            taken += len(piece)
            if self._filled == s.frame:
                out.append(self._frame())
                self._input[: s.frame - s.hop] = self._input[s.hop :]
                self._filled = s.frame - s.hop
        return np.concatenate(out) if out else np.zeros(0, np.float32)

    def _frame(self) -> np.ndarray:
        s = self.settings
        spectrum = np.fft.rfft(self._input * self._window[:, None], axis=0)  # (bins, channels)
        outer = spectrum[:, :, None] * spectrum[:, None, :].conj()
        # Only the wait at the first words asks which frames stand out: none of it after the wait.
        speaking = self._listening and bool(self._hold_frames) and not self._waited and self._words_begin(spectrum)
        if self._listening:
            self._speech += outer
            self._speech_frames += 1
            self._spoken_frames += speaking
        else:
            self._noise = self._alpha * self._noise + (1 - self._alpha) * outer
            self._noise_frames += 1
        self._since_update += 1
        if self._since_update >= (s.update_frames if self._listening else 16):
            self._since_update = 0
            self._update_weights()
        if speaking:
            self._onset = True
        if self._listening and self._onset and not self._waited:
            self._held.append(spectrum)
            if len(self._held) < self._hold_frames and self._spoken_frames < s.steer_after_frames:
                return np.zeros(0, np.float32)
        if self._held:  # the talker is found (or the wait is over, or the turn): the held words, through the beam
            self._update_weights()
            self._waited = True
            held, self._held = self._held, []
            return np.concatenate([self._beam(h) for h in held] + ([] if held[-1] is spectrum else [self._beam(spectrum)]))
        return self._beam(spectrum)

    def _words_begin(self, spectrum: np.ndarray) -> bool:
        if self._noise_inverse is None:
            return False
        band = spectrum[self._voice_band]
        power = np.real(np.einsum("fc,fcd,fd->f", band.conj(), self._noise_inverse[self._voice_band], band)) / self.channels
        return float(np.mean(power)) >= self.settings.onset_above

    def _beam(self, spectrum: np.ndarray) -> np.ndarray:
        s = self.settings
        beam = np.einsum("fc,fc->f", self._weights.conj(), spectrum)
        if s.post_filter_floor is not None:
            beam = beam * self._post_gain(beam)
        frame = np.fft.irfft(beam, n=s.frame).astype(np.float32) * self._window
        self._output += frame
        done = self._output[: s.hop].copy()
        self._output[: s.frame - s.hop] = self._output[s.hop :]
        self._output[s.frame - s.hop :] = 0.0
        return done

    def _post_gain(self, beam: np.ndarray) -> np.ndarray:
        power = np.abs(beam) ** 2
        self._out_power = power if self._out_power is None else 0.7 * self._out_power + 0.3 * power
        residual = np.real(np.einsum("fc,fcd,fd->f", self._weights.conj(), self._noise, self._weights))
        floor = self.settings.post_filter_floor or 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = 1.0 - residual / np.maximum(self._out_power, 1e-20)
        return np.clip(np.nan_to_num(gain, nan=1.0), floor, 1.0)

    # -- turns ------------------------------------------------------------------------------------

    def turn_began(self) -> None:
        self._listening = True
        self._speech[:] = 0.0
        self._speech_frames = 0
        self._since_update = 0
        self._onset = False
        self._waited = False
        self._spoken_frames = 0
        self._noise_inverse = np.linalg.inv(self._loaded_noise()) if self._noise_frames else None

    def turn_ended(self) -> None:
        self._listening = False

    @property
    def found_share(self) -> float:
        """The share of frequencies whose talker is found (for the record and the tests)."""
        return float(self._found.mean())

    # -- the weights ------------------------------------------------------------------------------

    def _loaded_noise(self) -> np.ndarray:
        power = np.real(np.trace(self._noise, axis1=1, axis2=2)) / self.channels
        eye = np.eye(self.channels)[None]
        return self._noise + (self.settings.loading * power + 1e-12)[:, None, None] * eye

    def _update_weights(self) -> None:
        if self._noise_frames == 0:
            return
        noise = self._loaded_noise()
        if self._listening and self._speech_frames > 0:
            self._find_talker(noise, self._speech / self._speech_frames)
        if self._steering is None:
            return
        # MVDR: w = N⁻¹d / (dᴴN⁻¹d), with d's reference share one.
        solved = np.linalg.solve(noise, self._steering[:, :, None])[:, :, 0]
        gain = np.einsum("fc,fc->f", self._steering.conj(), solved)
        with np.errstate(divide="ignore", invalid="ignore"):
            mvdr = solved / gain[:, None].conj()
        usable = self._found & np.isfinite(mvdr).all(axis=1)
        self._weights = np.where(usable[:, None], mvdr, self._passthrough)

    def _find_talker(self, noise: np.ndarray, heard: np.ndarray) -> None:
        """The talker's direction per frequency, where it stands out of the noise."""
        lower = np.linalg.cholesky(noise)  # N = L Lᴴ
        inverse = np.linalg.inv(lower)
        whitened = inverse @ heard @ inverse.conj().transpose(0, 2, 1)
        values, vectors = np.linalg.eigh(whitened)
        principal = vectors[:, :, -1]
        direction = np.einsum("fij,fj->fi", lower, principal)
        ref = direction[:, self.settings.reference]
        found = (values[:, -1] >= self.settings.found_above) & (np.abs(ref) > 1e-12)
        with np.errstate(divide="ignore", invalid="ignore"):
            direction = direction / ref[:, None]
        if self._steering is None:
            self._steering = np.where(found[:, None], direction, self._passthrough)
        else:
            self._steering = np.where(found[:, None], direction, self._steering)
        self._found = self._found | found


FRONT_ENDS = ("first", "mvdr", "mvdr-live", "mvdr-pf")
"""The array front ends by name (``audio.array_front_end``)."""


def make_front_end(name: str, channels: int) -> ArrayFrontEnd:
    """The front end ``name`` for an array of ``channels`` microphones."""
    if name == "first":
        return FirstMicrophone(0)
    if name == "mvdr":
        return MvdrBeamformer(channels)
    if name == "mvdr-live":
        return MvdrBeamformer(channels, BeamSettings(hold_s=0.0), name="mvdr-live")
    if name == "mvdr-pf":
        return MvdrBeamformer(channels, BeamSettings(post_filter_floor=0.3), name="mvdr-pf")
    raise ValueError(f"no array front end {name!r} (known: {', '.join(FRONT_ENDS)})")
