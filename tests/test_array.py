"""A microphone array: its geometry, the beamformer, the array heard as one microphone."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

from audio.array import BOARDS, ArrayGeometry, load_geometry
from audio.array_microphone import BeamformedMicrophone, WavFileArray
from audio.beamformer import FirstMicrophone, MvdrBeamformer, make_front_end
from audio.protocols import ArrayChunk, TurnAware

RATE = 16000
SQUARE = BOARDS["square-65mm"]


# -- geometry -----------------------------------------------------------------------------------


def test_the_named_boards_are_whole_arrays() -> None:
    for board in BOARDS.values():
        assert board.count >= 2
        assert 0.03 < board.aperture_m < 0.12
        assert max(board.mic_channels) < board.capture_channels
    assert BOARDS["respeaker-6mic"].capture_channels == 8  # two loopback channels after the six
    assert BOARDS["respeaker-usb-4mic"].mic_channels == (1, 2, 3, 4)


def test_a_geometry_file_is_read(tmp_path) -> None:
    path = tmp_path / "line.toml"
    path.write_text('name = "line"\ncapture_channels = 3\nmic_channels = [0, 2]\nmics = [[-0.05, 0, 0], [0.05, 0, 0]]\n')
    geometry = load_geometry(path)
    assert geometry == ArrayGeometry("line", ((-0.05, 0.0, 0.0), (0.05, 0.0, 0.0)), 3, (0, 2))
    assert geometry.aperture_m == pytest.approx(0.1)
    assert load_geometry("respeaker-4mic") is BOARDS["respeaker-4mic"]


@pytest.mark.parametrize(("text", "says"), [
    ("mics = [[0, 0, 0]]\n", "at least two"),
    ("mics = [[0, 0], [1, 0]]\n", "[x, y, z]"),
    ("mics = [[0, 0, 0], [0.05, 0, 0]]\nmic_channels = [0, 2]\n", "0..1"),
    ("mics = [[0, 0, 0], [0.05, 0, 0]]\nmic_channels = [1, 1]\ncapture_channels = 2\n", "two microphones"),
    ("mics = [[0, 0, 0], [5, 0, 0]]\n", "within 1 m"),
    ("mics = [[0, 0, 0], [0.05, 0, 0]]\nspacing = 3\n", "unknown key 'spacing'"),
    ("mics = [[0, 0, 0]", "array file"),
])
def test_a_bad_geometry_file_is_named_in_one_line(tmp_path, text: str, says: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=None) as caught:
        load_geometry(path)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unknown_board_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="respeaker-4mic"):
        load_geometry("respeaker-99mic")


# -- the beamformer -------------------------------------------------------------------------------


def _delayed(signal: np.ndarray, seconds: float) -> np.ndarray:
    """``signal`` late by ``seconds`` (a fractional delay, circular over a long zero tail)."""
    n = len(signal)
    spectrum = np.fft.rfft(signal, 2 * n)
    freqs = np.fft.rfftfreq(2 * n, 1 / RATE)
    return np.fft.irfft(spectrum * np.exp(-2j * np.pi * freqs * seconds), 2 * n)[:n]


def _far_field(signal: np.ndarray, geometry: ArrayGeometry, bearing_deg: float) -> np.ndarray:
    """A plane wave from ``bearing_deg`` across the array: ``(samples, microphones)``."""
    direction = np.array([math.cos(math.radians(bearing_deg)), math.sin(math.radians(bearing_deg)), 0.0])
    lags = [-(np.dot(direction, np.array(m))) / 343.0 for m in geometry.mics]
    base = min(lags)
    return np.stack([_delayed(signal, lag - base + 0.001) for lag in lags], axis=1).astype(np.float32)


def _voice_band(samples: np.ndarray) -> np.ndarray:
    from scipy.signal import butter, sosfilt

    return sosfilt(butter(4, [200, 3800], btype="bandpass", fs=RATE, output="sos"), samples)


def _speechlike(seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Noise in syllable-like bursts, band-limited to the voice: enough of a talker for a beamformer."""
    n = int(seconds * RATE)
    envelope = (np.sin(2 * np.pi * 4 * np.arange(n) / RATE) > -0.3).astype(float)
    return _voice_band(rng.standard_normal(n)) * envelope


def _power(x: np.ndarray) -> float:
    return float(np.mean(np.square(x)))


def test_with_no_talker_found_the_reference_passes_exactly_one_frame_late() -> None:
    rng = np.random.default_rng(1)
    block = rng.standard_normal((RATE, 4)).astype(np.float32) * 0.1
    beam = MvdrBeamformer(4)
    out = beam.process(block)
    late = beam.latency_samples
    assert late == 256
    assert len(out) == RATE // 256 * 256  # whole hops; the rest waits for the next block
    np.testing.assert_allclose(out[late:], block[: len(out) - late, 0], atol=1e-5)


def test_the_output_does_not_depend_on_how_the_capture_is_cut_into_blocks() -> None:
    rng = np.random.default_rng(2)
    talker, noise = _speechlike(2.0, rng), _voice_band(rng.standard_normal(3 * RATE))
    capture = 0.3 * _far_field(noise, SQUARE, 20.0) + np.concatenate([np.zeros((RATE, 4)), _far_field(talker, SQUARE, 120.0)])

    def run(size: int) -> np.ndarray:
        beam = MvdrBeamformer(4)
        out = [beam.process(capture[:RATE])]
        beam.turn_began()
        out += [beam.process(capture[i : i + size]) for i in range(RATE, len(capture), size)]
        return np.concatenate(out)

    whole, small = run(2 * RATE), run(100)
    assert len(whole) == len(small)
    np.testing.assert_allclose(small, whole, atol=1e-5)


@pytest.mark.parametrize(("noise_deg", "talker_deg"), [(20.0, 120.0), (200.0, 90.0), (300.0, 45.0)])
def test_a_noise_heard_before_the_press_is_held_off_and_the_talker_kept(noise_deg: float, talker_deg: float) -> None:
    rng = np.random.default_rng(int(noise_deg))
    before, seconds = 2 * RATE, 3.0
    talker = _speechlike(seconds, rng)
    noise = _voice_band(rng.standard_normal(before + len(talker)))  # a fan's hum in the voice's band
    noise_capture = _far_field(noise, SQUARE, noise_deg)
    talker_capture = np.concatenate([np.zeros((before, 4), np.float32), _far_field(talker, SQUARE, talker_deg)])
    mixed = noise_capture + talker_capture

    beam = MvdrBeamformer(4)
    beam.process(mixed[:before])
    beam.turn_began()
    out = beam.process(mixed[before:])
    late = beam.latency_samples
    assert beam.found_share > 0.5

    # The same weights, frame for frame, on each part alone: what the beam did to each.
    reference = mixed[before : before + len(out) - late, 0]
    heard = out[late:]
    kept_talker = talker_capture[before : before + len(heard), 0]
    # After the first second (the talker found), the noise in the output is far below the microphone's.
    settled = slice(RATE, len(heard))
    residual_noise = heard[settled] - kept_talker[settled]
    mic_noise = reference[settled] - kept_talker[settled]
    assert 10 * math.log10(_power(mic_noise) / _power(residual_noise)) > 10.0
    # The talker as the reference microphone had it: distortionless, so the output tracks it.
    correlation = np.corrcoef(heard[settled], kept_talker[settled])[0, 1]
    assert correlation > 0.9


def _plane_wave_rtf(geometry: ArrayGeometry, bearing_deg: float, freqs: np.ndarray) -> np.ndarray:
    direction = np.array([math.cos(math.radians(bearing_deg)), math.sin(math.radians(bearing_deg)), 0.0])
    lags = np.array([-(np.dot(direction, np.array(m))) / 343.0 for m in geometry.mics])
    return np.exp(-2j * np.pi * freqs[:, None] * (lags - lags[0])[None, :])


@pytest.mark.parametrize(("noise_deg", "talker_deg"), [(250.0, 60.0), (0.0, 180.0), (135.0, 300.0)])
def test_the_talker_is_found_where_they_stand_not_where_the_noise_is(noise_deg: float, talker_deg: float) -> None:
    rng = np.random.default_rng(int(talker_deg))
    talker = _speechlike(3.0, rng)
    noise = _voice_band(rng.standard_normal(RATE + len(talker))) * 0.5
    capture = _far_field(noise, SQUARE, noise_deg) + np.concatenate([np.zeros((RATE, 4)), _far_field(talker, SQUARE, talker_deg)])
    beam = MvdrBeamformer(4)
    beam.process(capture[:RATE])
    beam.turn_began()
    beam.process(capture[RATE:])
    freqs = np.fft.rfftfreq(512, 1 / RATE)
    band = (freqs > 1000) & (freqs < 3500)
    found = beam._steering[band]

    def alike(bearing: float) -> float:
        truth = _plane_wave_rtf(SQUARE, bearing, freqs)[band]
        return float(np.mean(np.abs(np.sum(found.conj() * truth, axis=1)) / (np.linalg.norm(found, axis=1) * np.linalg.norm(truth, axis=1))))

    assert alike(talker_deg) > 0.98
    assert alike(talker_deg) > alike(noise_deg) + 0.1


def test_front_ends_by_name() -> None:
    assert isinstance(make_front_end("mvdr", 4), MvdrBeamformer)
    assert isinstance(make_front_end("first", 4), FirstMicrophone)
    with pytest.raises(ValueError, match="mvdr"):
        make_front_end("gev", 4)
    with pytest.raises(ValueError, match="two channels"):
        MvdrBeamformer(1)


# -- the array heard as one microphone ------------------------------------------------------------


class _Blocks:
    """An array source of given blocks, each stamped."""

    sample_rate = RATE

    def __init__(self, blocks: list[np.ndarray], t0: float = 100.0) -> None:
        self.channels = blocks[0].shape[1]
        self._blocks = blocks
        self._t0 = t0

    async def chunks(self):
        at = self._t0
        for block in self._blocks:
            yield ArrayChunk(block, RATE, at)
            at += len(block) / RATE

    async def close(self) -> None:
        pass


async def _collect(mic: BeamformedMicrophone) -> list:
    return [chunk async for chunk in mic.chunks()]


def test_the_microphones_are_taken_from_their_channels_and_loopback_left_out() -> None:
    geometry = ArrayGeometry("with-loopback", ((-0.03, 0, 0), (0.03, 0, 0)), 3, (1, 2))
    block = np.stack([np.full(512, 0.9), np.full(512, 0.1), np.full(512, 0.2)], axis=1).astype(np.float32)
    mic = BeamformedMicrophone(_Blocks([block, block]), geometry, FirstMicrophone())
    chunks = asyncio.run(_collect(mic))
    assert [c.captured_at for c in chunks] == [100.0, 100.0 + 512 / RATE]
    np.testing.assert_allclose(np.concatenate([c.samples for c in chunks]), 0.1)
    assert isinstance(mic, TurnAware)


def test_the_beams_chunks_are_stamped_when_their_sound_reached_the_array() -> None:
    rng = np.random.default_rng(3)
    blocks = [rng.standard_normal((n, 4)).astype(np.float32) * 0.1 for n in (512, 300, 700, 512)]
    mic = BeamformedMicrophone(_Blocks(blocks), SQUARE, MvdrBeamformer(4))
    chunks = asyncio.run(_collect(mic))
    out = np.concatenate([c.samples for c in chunks])
    # Each chunk's first sample is the reference microphone's sample from one frame's delay before.
    given = 0
    for chunk in chunks:
        assert round((chunk.captured_at - 100.0) * RATE) == given - 256
        given += len(chunk.samples)
    assert len(out) == sum(len(b) for b in blocks) // 256 * 256


def test_a_capture_of_other_channels_is_refused() -> None:
    with pytest.raises(ValueError, match="4 channels; the capture has 2"):
        BeamformedMicrophone(_Blocks([np.zeros((10, 2), np.float32)]), SQUARE, MvdrBeamformer(4))


def test_a_recorded_array_plays_in_blocks_with_its_channels() -> None:
    samples = np.arange(3 * 1000, dtype=np.float32).reshape(1000, 3) / 3000
    source = WavFileArray(samples, RATE, chunk_s=0.032, realtime=False)

    async def blocks() -> list[ArrayChunk]:
        return [c async for c in source.chunks()]

    got = asyncio.run(blocks())
    assert [len(c.samples) for c in got] == [512, 488]
    np.testing.assert_array_equal(np.concatenate([c.samples for c in got]), samples)
    assert got[1].captured_at - got[0].captured_at == pytest.approx(512 / RATE)


# -- the array in hearth's configuration and its device loop ---------------------------------------


def test_the_configuration_names_an_array_by_board_or_file() -> None:
    from firmware_py.config import ConfigError, parse_config

    assert parse_config({"audio": {"array": "respeaker-4mic"}}).audio.array_front_end == "mvdr"
    assert parse_config({"audio": {"array": "~/kitchen-array.toml", "array_front_end": "first"}}).audio.array == "~/kitchen-array.toml"
    with pytest.raises(ConfigError, match="respeaker-4mic"):
        parse_config({"audio": {"array": "respeaker-99mic"}})
    with pytest.raises(ConfigError):
        parse_config({"audio": {"array": "respeaker-4mic", "array_front_end": "gev"}})


def test_an_array_opens_its_channels_and_is_heard_through_its_front_end(tmp_path) -> None:
    from audio.array_microphone import BeamformedMicrophone
    from audio.portaudio import SoundDeviceMicrophone
    from firmware_py.config import parse_config
    from firmware_py.wiring import StartupError, make_microphone, sound_settings

    one = parse_config({})
    settings, _ = sound_settings(one)
    assert settings.channels == 1 and isinstance(make_microphone(one, settings), SoundDeviceMicrophone)

    six = parse_config({"audio": {"array": "respeaker-6mic"}})
    settings, _ = sound_settings(six)
    assert settings.channels == 8
    mic = make_microphone(six, settings)  # nothing opened: opening is start()'s
    assert isinstance(mic, BeamformedMicrophone) and isinstance(mic.front_end, MvdrBeamformer)
    assert mic.front_end.channels == 6 and mic.source.channels == 8
    from audio.array_microphone import RecordingArray
    from firmware_py.mic_check_cli import open_microphone

    checked = open_microphone(six)  # hearth mic-check: the same array, every channel's audio kept
    assert isinstance(checked, BeamformedMicrophone) and isinstance(checked.source, RecordingArray)
    assert checked.source.channels == 8 and checked.front_end.name == "mvdr"

    missing = parse_config({"audio": {"array": str(tmp_path / "nowhere.toml")}})
    with pytest.raises(StartupError, match="audio.array: array file .*nowhere.toml"):
        sound_settings(missing)


class _TurnAwareMicrophone:
    sample_rate = RATE

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def chunks(self):
        for _ in range(3):
            await asyncio.sleep(0)
            yield ArrayChunk(np.zeros((512, 1), np.float32), RATE, 0.0)

    async def close(self) -> None:
        pass

    def turn_began(self) -> None:
        self.calls.append("began")

    def turn_ended(self) -> None:
        self.calls.append("ended")


def test_the_device_tells_the_array_when_a_turn_listens_and_when_it_stops() -> None:
    from firmware_py.device import MicrophoneTap

    mic = _TurnAwareMicrophone()
    tap = MicrophoneTap(mic)
    tap.listen()
    assert mic.calls == ["began"]
    tap.listen(preroll=True)  # a new turn ends the one before
    assert mic.calls == ["began", "ended", "began"]
    tap.stop_listening()
    tap.stop_listening()  # nothing listening: nothing to tell
    assert mic.calls == ["began", "ended", "began", "ended"]


def test_the_post_filter_takes_the_beams_leftover_noise_down_and_never_below_its_floor() -> None:
    rng = np.random.default_rng(11)
    noise = _voice_band(rng.standard_normal(3 * RATE))
    diffuse = np.stack([_voice_band(rng.standard_normal(3 * RATE)) for _ in range(4)], axis=1) * 0.5
    capture = (_far_field(noise, SQUARE, 30.0) + diffuse).astype(np.float32)
    outputs = {}
    for name in ("mvdr", "mvdr-pf"):
        front = make_front_end(name, 4)
        front.process(capture[: 2 * RATE])
        front.turn_began()
        outputs[name] = front.process(capture[2 * RATE :])
    plain, filtered = (_power(outputs[n][RATE // 4 :]) for n in ("mvdr", "mvdr-pf"))
    assert filtered < 0.5 * plain  # no talker: the gain goes to its floor
    assert filtered > 0.3**2 * plain * 0.8  # and no further (0.3 in amplitude)
    assert make_front_end("mvdr-pf", 4).name == "mvdr-pf"


def test_the_first_words_wait_for_the_beam_and_come_out_through_it_at_once() -> None:
    rng = np.random.default_rng(5)
    before, lead = 2 * RATE, RATE // 2  # the press, then half a second before the words
    talker = _speechlike(2.0, rng)
    noise = _voice_band(rng.standard_normal(before + lead + len(talker)))
    noise_part = _far_field(noise, SQUARE, 200.0)
    talker_part = np.concatenate([np.zeros((before + lead, 4), np.float32), _far_field(talker, SQUARE, 70.0)])
    capture = noise_part + talker_part

    def heard(name: str) -> tuple[np.ndarray, list[int]]:
        front = make_front_end(name, 4)
        front.process(capture[:before])
        front.turn_began()
        sizes, out = [], []
        for i in range(before, len(capture), 512):
            piece = front.process(capture[i : i + 512])
            sizes.append(len(piece))
            out.append(piece)
        return np.concatenate(out)[front.latency_samples :], sizes

    waited, sizes = heard("mvdr")
    live, live_sizes = heard("mvdr-live")
    assert 0 in sizes and max(sizes) > 512, "the onset is held, then given out at once"
    assert 0 not in live_sizes[:-1]  # (the last block is shorter than a hop)
    assert abs(len(waited) - len(live)) <= 512  # nothing lost: all of it comes out
    first_words = slice(lead, lead + RATE // 3)
    residual = {name: _power(out[first_words] - talker_part[before:, 0][first_words]) for name, out in (("mvdr", waited), ("live", live))}
    assert residual["mvdr"] < 0.5 * residual["live"]
