"""The soak's script and its judgement, on made-up samples (the run itself is ``python -m bench.drills.soak``)."""

from __future__ import annotations

from pathlib import Path

from bench.drills.soak import SoakSettings, plan, summarize


def fake_audio(suite, scenario) -> list[Path]:
    return [Path(f"/audio/{suite.suite}/{scenario.id}#{n}.wav") for n in range(1 + len(scenario.followups))]


def test_the_script_mixes_the_suites_and_cuts_some_replies_short_within_one_language():
    settings = SoakSettings(turns=300, barge_in=0.15, seed=3)
    script = plan(settings, fake_audio)
    assert len(script) >= 300
    assert {p.suite for p in script} == set(settings.suites)
    assert {p.language for p in script} == {"en", "ko"}
    barges = [i for i, p in enumerate(script) if p.barge_after_s is not None]
    assert 20 <= len(barges) <= 70
    for i in barges:
        assert script[i + 1].language == script[i].language  # the press is made to the same loop
        assert script[i + 1].barge_after_s is None  # never two in a row
        assert settings.barge_in_s[0] <= script[i].barge_after_s <= settings.barge_in_s[1]
    # Every scenario starts a conversation of its own; its follow-ups go on with it.
    assert all(p.new_conversation == ("#" not in p.key) for p in script)
    assert plan(settings, fake_audio) == script  # seeded: the same script every time


def sample(turns: int, rss: float, threads: int = 20, fds: int = 40, rows: int = 0) -> dict:
    db = {"bytes": 4096 * (5 + rows // 40), "file_bytes": 4096, "wal_bytes": 0, "freelist_pages": 0, "page_size": 4096,
          "rows": {"entries": rows}}
    return {"turns": turns, "rss_mb": rss, "hwm_mb": rss, "threads": threads, "fds": fds, "tasks": 6, "py_blocks": 1000,
            "sqlite": {"en/conversation.sqlite3": db}}


def test_flat_memory_threads_and_files_pass():
    samples = [sample(t, 1000 + (t % 7)) for t in range(0, 301)]
    summary = summarize(samples, SoakSettings(), {})
    assert summary["pass"] == {"rss_growth_within_limit": True, "no_thread_growth": True, "no_fd_growth": True, "sqlite_explained": True}


def test_memory_that_keeps_growing_fails_and_its_slope_is_told():
    samples = [sample(t, 1000 + 0.25 * t) for t in range(0, 301)]  # a quarter of a megabyte a turn
    summary = summarize(samples, SoakSettings(), {})
    assert not summary["pass"]["rss_growth_within_limit"]
    assert summary["rss_mb"]["slope_mb_per_100_turns"] == 25.0


def test_a_thread_or_a_file_left_open_now_and_then_fails():
    samples = [sample(t, 1000, threads=20 + t // 50, fds=40 + t // 100) for t in range(0, 301)]
    summary = summarize(samples, SoakSettings(), {})
    assert not summary["pass"]["no_thread_growth"] and not summary["pass"]["no_fd_growth"]


def test_a_wal_that_is_never_checkpointed_is_not_explained_by_the_rows():
    samples = [sample(t, 1000, rows=10 * t) for t in range(0, 301)]
    samples[-1]["sqlite"]["en/conversation.sqlite3"]["wal_bytes"] = 50 * 1024 * 1024
    assert not summarize(samples, SoakSettings(), {})["pass"]["sqlite_explained"]


async def test_the_wav_speaker_lets_go_of_what_it_has_played_but_not_of_what_is_still_due():
    import asyncio

    import numpy as np

    from audio.protocols import AudioChunk
    from audio.wav import WavFileSpeaker

    speaker = WavFileSpeaker(16000)
    heard: list[float] = []
    await speaker.write(AudioChunk(np.ones(160, np.float32), 16000), heard.append)  # 10 ms
    await speaker.drain()
    await asyncio.sleep(0.01)  # its callback has run
    await speaker.write(AudioChunk(np.ones(3200, np.float32), 16000))  # 0.2 s, still playing
    await speaker.write(AudioChunk(np.ones(160, np.float32), 16000), heard.append)  # due after it
    before = len(speaker.recording().samples)
    speaker.forget_played()
    after = len(speaker.recording().samples)
    assert after >= 3200 + 160  # the pieces still due are kept
    assert after <= before - 160  # the one played is gone
    await speaker.drain()
    await asyncio.sleep(0.01)
    assert len(heard) == 2  # the callback still due was kept and ran
