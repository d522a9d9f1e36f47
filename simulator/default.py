"""The embedded default challenge: a small simulated challenge generated on first use and cached.

dialeval ships no real data, yet ``dialeval demo`` and the tests need a challenge with answer keys. It is
generated (in about a second) into ``<cache>/default-challenge-<version>-<hash of the parameters>``, where
``<cache>`` is ``$DIALEVAL_CACHE_DIR`` or ``platformdirs.user_cache_dir("dialeval")``. Changing the generator
or its parameters changes the name, so a stale cache is never reused.

Safety: a :class:`filelock.FileLock` serialises concurrent first uses (two processes yield one directory);
the KBs and simulator.json, then each part (a split's folder, ``airdialogue``) as a command first needs it, are
generated in a temp dir in the same parent, renamed into place atomically and marked complete (``.complete`` once
every part is there); temp dirs left by a crashed attempt are removed by the next one (under the lock, so they cannot be
in use). A final directory without a marker was not made here (ours get theirs before they are renamed into place):
it is never deleted: an empty one is replaced, anything else is refused in one line (exit 2).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from dialeval.files.cache import cache_root

DEFAULT_PARAMS: dict = {
    "seed": 2017,
    "n_train": 1000,
    "n_test": 200,
    "candidates": [7, 10],
    "context_distractors": 0.5,
    "airdialogue_dev": 1000,  # AirDialogue contexts in <default>/airdialogue/dev_{data,kb}.json
}
COMPLETE_MARKER = ".complete"  # every part is there
BASE_MARKER = ".base"  # the KBs and simulator.json are there; the parts' own markers say which parts are
PARTS = ("trn", "tst1", "tst2", "tst3", "tst4", "airdialogue")
"""The folders the default challenge is made of, each generated on its own first use (its own RNGs: byte-identical
to a whole-challenge run)."""
CACHE_ENV = "DIALEVAL_CACHE_DIR"  # see dialeval.files.cache.cache_root


def default_challenge_name(params: dict | None = None) -> str:
    from dialeval.simulator.generate import GENERATOR_VERSION

    p = DEFAULT_PARAMS if params is None else params
    digest = hashlib.sha256(json.dumps(p, sort_keys=True).encode()).hexdigest()[:12]
    return f"default-challenge-{GENERATOR_VERSION}-{digest}"


def _complete(path: Path, parts) -> bool:
    if (path / COMPLETE_MARKER).is_file():
        return True
    return (path / BASE_MARKER).is_file() and all((path / f"{COMPLETE_MARKER}-{part}").is_file() for part in parts)


def ensure_default_challenge(params: dict | None = None, parts=None) -> Path:
    """Path of the default challenge, generating first what is missing of ``parts`` (default: all of
    :data:`PARTS`; a command that reads one split asks for that one only, so the first command after install
    does not build the whole challenge). Safe across processes."""
    from filelock import FileLock

    p = dict(DEFAULT_PARAMS if params is None else params)
    every = tuple(part for part in PARTS if (part != "trn" or p["n_train"]) and
                  (part != "airdialogue" or p.get("airdialogue_dev")))
    wanted = every if parts is None else tuple(part for part in every if part in set(parts))
    root = cache_root()
    name = default_challenge_name(p)
    final = root / name
    if _complete(final, wanted):
        return final
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from dialeval.core.errors import UsageError

        why = ("a file is in the way" if isinstance(e, (FileExistsError, NotADirectoryError))
               else (e.strerror or "I/O error").lower())  # dialeval's words, never Python's "File exists"
        raise UsageError(
            f"cannot create the cache directory {root} for the embedded default challenge ({why}); "
            f"set {CACHE_ENV} to a writable folder, or pass --challenge DIR"
        ) from None
    with FileLock(str(root / f"{name}.lock")):
        if _complete(final, wanted):  # another process finished it while we waited
            return final
        for stale in root.glob(f".{name}.tmp-*"):  # left by a crashed attempt; nobody else holds the lock
            shutil.rmtree(stale, ignore_errors=True)
        if os.path.lexists(final) and not (final / BASE_MARKER).is_file() and not (final / COMPLETE_MARKER).is_file():
            _clear_unmarked(final)
        if not final.exists():
            _in_temp(root, name, lambda tmp: _generate(tmp, p, None), final)
        for part in wanted:
            marker = final / f"{COMPLETE_MARKER}-{part}"
            if (final / COMPLETE_MARKER).is_file() or marker.is_file():
                continue
            if (final / part).exists():  # renamed in, then the process died before the marker: start over
                shutil.rmtree(final / part)
            _in_temp(root, name, lambda tmp, part=part: _generate(tmp, p, part), final / part, inner=part)
            marker.write_text("")
        if all((final / f"{COMPLETE_MARKER}-{part}").is_file() for part in every):
            (final / COMPLETE_MARKER).write_text(json.dumps(p, sort_keys=True) + "\n")
    return final


def _clear_unmarked(final: Path) -> None:
    """Remove ``final`` only when nothing can be lost (an empty folder), else refuse in one line (exit 2).

    Every challenge folder this code made holds a marker (it is written before the folder is renamed into
    place), so one without a marker is not ours: the user's own folder in a cache they pointed at, or a file or
    link. The same rule as :mod:`dialeval.files.outdir` for the folders a command replaces: only an absent, empty
    or marked folder may go."""
    from dialeval.core.errors import UsageError

    if not os.path.islink(final) and final.is_dir():
        try:
            os.rmdir(final)  # fails unless empty: nothing in it is deleted
            return
        except OSError:
            pass
    raise UsageError(f"{final}: in the cache folder but not made by dialeval (no {BASE_MARKER} file); nothing was "
                     f"deleted: move it away, set {CACHE_ENV} to another folder, or pass --challenge DIR")


def _in_temp(root: Path, name: str, make, dest: Path, inner: str | None = None) -> None:
    """``make`` a temp folder beside ``dest``\'s challenge, then rename it (or its ``inner`` folder) into place:
    a reader never sees half of a part."""
    from dialeval.files.outdir import new_folder_beside

    tmp = new_folder_beside(root / name, f".{name}.tmp-")
    try:
        make(tmp)
        os.replace(tmp if inner is None else tmp / inner, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _generate(out: Path, p: dict, part: str | None) -> None:
    """The KBs, simulator.json and the base marker (``part`` None), or one part's folder, into ``out``."""
    from dialeval.simulator.generate import generate_challenge

    if part == "airdialogue":
        from dialeval.simulator.airdialogue import write_airdialogue

        write_airdialogue(out / "airdialogue", seed=p["seed"], n=p["airdialogue_dev"], split="dev")
        return
    generate_challenge(out, seed=p["seed"], n_train=p["n_train"], n_test=p["n_test"],
                       candidates=tuple(p["candidates"]), context_distractors=p["context_distractors"],
                       splits=None if part is None else [part], write_items=part is not None)
    if part is None:
        (out / BASE_MARKER).write_text(json.dumps(p, sort_keys=True) + "\n")
