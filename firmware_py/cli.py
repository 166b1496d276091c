"""The ``hearth`` command."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

log = logging.getLogger("hearth")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="TOML configuration file (default: /etc/hearth/hearth.toml or ~/.config/hearth/hearth.toml)")
    parser.add_argument("--language", choices=["en", "ko"], help="override the configured language")
    parser.add_argument("--models-dir", type=Path, help="override where models are installed")


VERBOSE = "verbose_"
"""The prefix of the attributes ``-v`` counts into, one per level of command (see :func:`_verbose_everywhere`)."""


def _verbose_everywhere(parser: argparse.ArgumentParser, depth: int = 0) -> None:
    """``-v`` on ``hearth`` and on every command and sub-command under it, so it may come before
    or after any of them (``hearth -v history``, ``hearth models list -vv``).  Each level counts
    into its own attribute: a command's parser starts a namespace of its own and copies it over
    the program's, which would reset one shared count."""
    parser.add_argument("-v", "--verbose", dest=f"{VERBOSE}{depth}", action="count", default=0,
                        help="log what hearth heard and did (-vv: everything); before or after the command")
    for action in parser._actions:  # argparse lists its commands nowhere public
        if isinstance(action, argparse._SubParsersAction):
            for sub in {id(p): p for p in action.choices.values()}.values():  # an alias is the same parser
                _verbose_everywhere(sub, depth + 1)


def verbosity(args: argparse.Namespace) -> int:
    """How many ``-v`` were given, wherever on the command line."""
    return sum(value for name, value in vars(args).items() if name.startswith(VERBOSE))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hearth")
    except PackageNotFoundError:
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    from firmware_py.cadence_cli import add_command as add_cadence_command
    from models.cli import add_commands as add_model_commands

    parser = argparse.ArgumentParser(prog="hearth", description="hearth: an offline voice assistant for the kitchen")
    parser.add_argument("--version", action="version", version=f"hearth {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="play a bundled spoken request through the whole loop")
    _common(demo)
    demo.add_argument("--input", type=Path, help="a WAV file to use instead of the bundled request")
    demo.add_argument("--out", type=Path, default=Path("out/demo-reply.wav"), help="where to write the spoken reply")
    demo.add_argument("--timeline", type=Path, help="write the turn's timeline as JSON here")
    demo.add_argument("--hold", action="store_true", help="hold the button for the whole recording instead of tapping it")
    demo.add_argument("--data-dir", metavar="DIR",
                      help="timers, lists, notes and the turn's record go here, as `hearth history --data-dir DIR` reads them "
                           "(default: a scratch folder, removed afterwards, and the turn not recorded)")

    run = sub.add_parser("run", help="the appliance: microphone, speaker and push-to-talk button")
    _common(run)
    run.add_argument("--keyboard", action="store_true", help="push-to-talk with Enter instead of the GPIO button")

    serve = sub.add_parser("serve", help="the appliance, and hearth offered to Home Assistant (Wyoming) and on a web page")
    _common(serve)
    serve.add_argument("--wyoming", nargs="?", const="", metavar="URI",
                       help="run the Wyoming server (default address: serve.wyoming, else tcp://127.0.0.1:10700)")
    serve.add_argument("--web", nargs="?", const="", metavar="HOST:PORT",
                       help="show the companion page (default address: serve.web, else 127.0.0.1:8750)")
    serve.add_argument("--no-device", action="store_true", help="no microphone, speaker or button: only serve")
    serve.add_argument("--keyboard", action="store_true", help="push-to-talk with Enter instead of the GPIO button")

    bench = sub.add_parser("bench", help="play a scenario suite through the whole loop and measure it")
    _common(bench)
    bench.add_argument("--suite", required=True, help="en-kitchen, ko-kitchen, en-human, ha-en, ha-ko, or a YAML file")
    bench.add_argument("--ablate", nargs="*", default=[], metavar="FEATURE", help="switch a feature off in a paired variant")
    bench.add_argument("--out", type=Path, required=True, help="output directory")
    bench.add_argument("--limit", type=int, help="only the first N scenarios")
    bench.add_argument("--category", nargs="*", default=[], help="only scenarios of these categories (e.g. recipe weather air)")
    bench.add_argument("--rounds", type=int, default=1, help="play every scenario this many times")
    bench.add_argument("--no-pictures", action="store_true", help="skip the PNG/HTML timelines")
    bench.add_argument("--text", action="store_true", help="give each request as its words (a text turn) instead of playing it")
    bench.add_argument("--kitchen", nargs="+", default=[], metavar="COND",
                       help="play every scenario under each kitchen condition: clean, room, fan@10, tap@5, noise-only:fan@10, …")
    bench.add_argument("--room", default="kitchen-a", help="the kitchen's room preset (kitchen-a, kitchen-small, kitchen-near, kitchen-open)")
    bench.add_argument("--seed", type=int, default=0, help="seeds the kitchen's sounds")
    bench.add_argument("--array", metavar="NAME|FILE.toml",
                       help="hear each kitchen take as a microphone array's capture (respeaker-4mic, respeaker-6mic, … or a geometry file)")
    bench.add_argument("--array-front-end", nargs="+", default=["mvdr"], metavar="NAME",
                       help="with --array, the front ends to hear through, an arm each: mvdr, first (its first microphone alone)")
    bench.add_argument("--press", nargs="+", choices=["tap", "hold"], default=["tap"],
                       help="how the button is pressed, each an arm interleaved with the others: tap (the voice "
                            "detector ends the request) or hold (released as the words end)")

    history = sub.add_parser("history", help="print the conversation record, turn by turn")
    _common(history)
    history.add_argument("--last", type=int, default=20, help="how many of the latest turns (default 20)")
    history.add_argument("--data-dir", metavar="DIR",
                         help="the data folder whose record to read (default: tools.data_dir, else $HEARTH_DATA_DIR, "
                              "else ~/.local/share/hearth/data)")

    mic = sub.add_parser("mic-check", help="measure whether hearth will hear you from where you cook, and what would help")
    _common(mic)
    mic.add_argument("--device", help="the input device to check (a part of its name, or its index; default: audio.input_device)")
    mic.add_argument("--seconds", type=float, default=5.0, metavar="S",
                     help="how long to listen to the quiet room (default 5; the sentence may take twice that, at least 8 s)")

    add_cadence_command(sub)
    add_model_commands(sub)
    _verbose_everywhere(parser)
    return parser


def _load_config(args: argparse.Namespace):
    from firmware_py.config import load_config

    overrides = {}
    if getattr(args, "language", None):
        overrides["language"] = args.language
    if getattr(args, "models_dir", None):
        overrides["models_dir"] = str(args.models_dir)
    if getattr(args, "keyboard", False):
        overrides["button.kind"] = "keyboard"
        overrides["button.led"] = "none"
    return load_config(args.config, overrides)


def main(argv: list[str] | None = None) -> int:
    """Run one ``hearth`` command; its exit status."""
    try:
        status = _main(argv)
        # Written out here, not at exit: a reader that went away (`hearth history | head -1`) is
        # then found inside this try, where it can be let go quietly.
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_nowhere()
        return 0  # the reader took what it wanted; nothing went wrong here
    return status


def _stdout_to_nowhere() -> None:
    """Point standard output at /dev/null, so the interpreter's own flush at exit finds no closed pipe."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing is flushed to a pipe at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # A speaker's console shows what it says and hears, not its logs: warnings only, unless asked.
    verbose = verbosity(args)
    logging.basicConfig(
        level=logging.DEBUG if verbose > 1 else logging.INFO if verbose == 1 else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # faster-whisper logs every decode at INFO; that is noise on a speaker's console.
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)
    if args.command == "models":
        return _run_models(args)
    if args.command == "cadence":
        # Its own config handling: the weights are overrides, and it needs no model.
        from firmware_py.cadence_cli import run as run_cadence

        return run_cadence(args)
    if args.command == "mic-check":
        # Its own exit statuses: 2 says the microphone hears poorly, so a bad configuration is 4.
        from firmware_py.mic_check_cli import run as run_mic_check

        return run_mic_check(args)

    from firmware_py.config import ConfigError
    from firmware_py.data_folder import check_folder, data_folder
    from firmware_py.gpio import NoButton
    from firmware_py.safe_text import printable
    from firmware_py.wiring import StartupError

    try:
        if args.command == "history" and args.last < 1:
            raise ConfigError(f"--last {args.last}: give how many of the latest turns to show, 1 or more")
        config = _load_config(args)
        if args.command == "demo":
            from firmware_py.demo import run_demo

            data_dir = None
            if args.data_dir is not None:
                # Checked before any model loads: a wrong folder is said at once, not after them.
                folder = data_folder(config, args.data_dir)
                check_folder(folder, create=True)
                data_dir = folder.path
            return asyncio.run(run_demo(config, args.input, args.out, args.timeline, hold=args.hold, data_dir=data_dir))
        if args.command in ("run", "serve"):
            from firmware_py.serve import start
            from firmware_py.serve_choice import ServeChoice, serve_choice

            try:
                choice = serve_choice(config, args.wyoming, args.web, not args.no_device) if args.command == "serve" else ServeChoice()
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
            return asyncio.run(start(config, choice))
        if args.command == "bench":
            return asyncio.run(_run_bench(config, args, sys.argv[1:] if argv is None else argv))
        if args.command == "history":
            from firmware_py.history_cli import print_history

            folder = data_folder(config, args.data_dir)
            check_folder(folder, create=False)
            return print_history(folder.record, args.last)
    except (ConfigError, StartupError, NoButton) as exc:
        print(f"hearth: {printable(str(exc))}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command}")
    return 2


def _run_models(args: argparse.Namespace) -> int:
    """``hearth models``: the models directory comes from --models-dir, else $HEARTH_MODELS_DIR,
    else the configuration file's ``models_dir`` (the same place ``hearth run`` looks)."""
    from firmware_py.config import ConfigError, load_config

    if getattr(args, "models_dir", None) is None and not os.environ.get("HEARTH_MODELS_DIR"):
        try:
            configured = load_config().models_dir
        except ConfigError as exc:
            print(f"hearth: {exc}", file=sys.stderr)
            return 2
        if configured is not None:
            args.models_dir = configured.expanduser()
    return args.handler(args)


async def _run_bench(config, args: argparse.Namespace, argv: list[str]) -> int:
    from agent.features import FEATURES
    from bench.loop.runner import BenchSettings, SuiteRun, parse_kitchen

    unknown = [name for name in args.ablate if name not in FEATURES]
    if unknown:
        print(f"hearth bench: unknown feature {', '.join(unknown)}; known: {', '.join(sorted(FEATURES))}", file=sys.stderr)
        return 2
    if args.text and args.press != ["tap"]:
        print("hearth bench: --text gives the words with no button at all; leave out --press", file=sys.stderr)
        return 2
    try:
        kitchen = parse_kitchen(args.kitchen, args.room) if args.kitchen else ()
        if args.array:
            from audio.array import load_geometry
            from audio.beamformer import make_front_end

            if not kitchen:
                raise ValueError("--array hears the kitchen's takes; give --kitchen conditions")
            geometry = load_geometry(args.array)
            for name in args.array_front_end:
                make_front_end(name, geometry.count)
    except ValueError as exc:
        print(f"hearth bench: {exc}", file=sys.stderr)
        return 2
    settings = BenchSettings(
        suite=args.suite,
        out=args.out,
        ablate=tuple(args.ablate),
        limit=args.limit,
        categories=tuple(args.category),
        rounds=args.rounds,
        pictures=not args.no_pictures,
        kitchen=kitchen,
        room=args.room,
        seed=args.seed,
        array=args.array,
        array_front_ends=tuple(dict.fromkeys(args.array_front_end)),
        text=args.text,
        presses=tuple(dict.fromkeys(args.press)),
        module="firmware_py.cli",
        arguments=tuple(argv),
    )
    report = await SuiteRun(config, settings).run()
    if kitchen:
        for name, figures in report["kitchen"]["conditions"].items():
            if figures["speech"]:
                print(f"{name}: transcript error {figures['transcript_error']}; right tool and arguments {figures['tool_args_accuracy']}; "
                      f"acts unasked {figures['acting_without_request']}, on wrong arguments {figures['wrong_acts']}, incomplete {figures['incomplete_acts']}; "
                      f"first audio median {figures['first_audio_s']} s; lost an ending {figures['dropped_tail_turns']}")
            else:
                print(f"{name}: {figures['turns']} presses, {figures['turns_started']} heard speech, {figures['acts']} acted")
        print(f"{report['suite']} in {report['kitchen']['room']}: written to {args.out}")
        return 0
    for name, base in report["variants"].items():
        released = base["release_first_audio_s"]["median"]
        since = f"; release → first audio median {released} s" if released is not None else ""
        print(f"{report['suite']} [{name}]: {base['turns']} turns ({report['audio']}); "
              f"end of listening median {base['endpoint_s']['median']} s; first audio median {base['first_audio_s']['median']} s{since}; "
              f"cut off {base['cut_off_turns']}, lost an ending {base['dropped_tail_turns']}; "
              f"right tool {base['tool_accuracy']['share']}, with arguments {base['tool_args_accuracy']['share']}; "
              f"pre-tool line in time {base['pretool_coverage']['share']}")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
