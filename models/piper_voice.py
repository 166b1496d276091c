"""Turn a piper voice (ONNX model + JSON config) into a directory sherpa-onnx can load.

sherpa-onnx reads everything it needs from the model's ONNX metadata and from
a ``tokens.txt`` symbol table; a piper voice ships neither, so we add them:

* ``model.onnx``: the piper model with metadata added (``comment=piper`` makes
  sherpa-onnx feed ``input``/``input_lengths``/``scales`` the way piper does).
* ``tokens.txt``: one ``symbol id`` line per entry of ``phoneme_id_map``.
* ``model.onnx.json``: the untouched voice config (the synthesizer reads the
  espeak voice and inference scales from it).

This module imports only the standard library and ``onnx``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

MODEL_NAME = "model.onnx"
TOKENS_NAME = "tokens.txt"
CONFIG_NAME = "model.onnx.json"


def prepare_piper_voice(onnx_src: Path, json_src: Path, dest_dir: Path) -> None:
    """Write ``model.onnx``, ``tokens.txt`` and ``model.onnx.json`` for sherpa-onnx into ``dest_dir``.

    Each file is written under a temporary name and renamed into place, and
    ``model.onnx`` is renamed last, so its presence means the voice is complete.
    Running it again over an existing conversion replaces it.
    """
    import onnx  # imported here: loading onnx costs ~0.3 s and only the installer needs it

    onnx_src, json_src, dest_dir = Path(onnx_src), Path(json_src), Path(dest_dir)
    config = json.loads(json_src.read_text(encoding="utf-8"))
    metadata = voice_metadata(config)
    tokens = tokens_text(config)

    dest_dir.mkdir(parents=True, exist_ok=True)

    model = onnx.load(str(onnx_src))
    existing = {prop.key: prop for prop in model.metadata_props}
    for key, value in metadata.items():
        # Replace rather than append: sherpa-onnx reads the first match, and a
        # voice converted twice (or shipped with stale keys) must not keep old values.
        prop = existing.get(key) or model.metadata_props.add()
        prop.key = key
        prop.value = value

    _write_atomic(dest_dir / TOKENS_NAME, lambda path: path.write_text(tokens, encoding="utf-8"))
    _write_atomic(dest_dir / CONFIG_NAME, lambda path: shutil.copyfile(json_src, path))
    _write_atomic(dest_dir / MODEL_NAME, lambda path: onnx.save(model, str(path)))
    logger.info("prepared piper voice %s in %s (%s)", onnx_src.name, dest_dir, metadata)


def voice_metadata(config: dict[str, Any]) -> dict[str, str]:
    """The ONNX metadata sherpa-onnx 2.x requires for a piper voice, as strings.

    ``sample_rate``, ``n_speakers``, ``language`` and ``comment`` are mandatory
    (sherpa-onnx exits the process if one is missing); ``voice`` is the espeak
    voice, kept for reference since phonemization happens outside sherpa-onnx.
    """
    if config.get("phoneme_type", "espeak") != "espeak":
        raise ValueError(
            f"piper voice uses phoneme_type {config.get('phoneme_type')!r}; only espeak voices are supported"
        )
    language = config.get("language") or {}
    name = language.get("name_english") or language.get("code") or "English"
    sample_rate = int(config["audio"]["sample_rate"])
    return {
        "model_type": "vits",
        "comment": "piper",
        "language": str(name),
        "voice": str(config["espeak"]["voice"]),
        "has_espeak": "1",
        "n_speakers": str(int(config.get("num_speakers", 1))),
        "sample_rate": str(sample_rate),
        "add_blank": "0",
    }


def tokens_text(config: dict[str, Any]) -> str:
    """``tokens.txt`` for sherpa-onnx's piper token reader.

    The reader splits each line on whitespace and treats a line holding only a
    number as the space symbol, so the space is written as `` 3`` (leading
    space).  It accepts only one codepoint per symbol and aborts the whole
    process on anything else, so symbols it cannot represent (the newline,
    other whitespace, multi-codepoint vowel clusters) are left out with a
    warning: the phonemizer never produces them for espeak voices without
    ``vowel_clusters``.
    """
    lines: list[str] = []
    for symbol, ids in config["phoneme_id_map"].items():
        if isinstance(ids, int):
            ids = [ids]
        if not ids:
            logger.warning("phoneme %r has no id; left out of tokens.txt", symbol)
            continue
        if len(ids) > 1:
            # sherpa-onnx maps a codepoint to exactly one id; piper voices in
            # practice never use more, so keep the first rather than fail.
            logger.warning("phoneme %r maps to ids %s; tokens.txt keeps only %d", symbol, ids, ids[0])
        if symbol == " ":
            lines.append(f" {int(ids[0])}")
        elif symbol == "\n":
            continue
        elif len(symbol) != 1 or symbol.isspace():
            logger.warning("phoneme %r cannot be expressed in tokens.txt; left out", symbol)
        else:
            lines.append(f"{symbol} {int(ids[0])}")
    return "\n".join(lines) + "\n"


def _write_atomic(target: Path, write: Any) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file over ``target``."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        # mkstemp creates 0600 files; the voice is read by the service user too.
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
