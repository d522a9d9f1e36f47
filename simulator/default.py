"""The embedded default challenge: a small simulated challenge generated on first use and cached.

dialeval ships no real data, yet ``dialeval demo`` and the tests need a challenge with answer keys. It is
generated (in about a second) into ``<cache>/default-challenge-<version>-<hash of the parameters>``, where
``<cache>`` is ``$DIALEVAL_CACHE_DIR`` or ``platformdirs.user_cache_dir("dialeval")``. Changing the generator
or its parameters changes the name, so a stale cache is never reused.

Safety: a :class:`filelock.FileLock` serialises concurrent first uses (two processes yield one directory);
generation goes to a temp dir in the same parent, gets a completion marker, then is renamed into place
atomically; temp dirs left by a crashed attempt are removed by the next one (under the lock, so they cannot be
in use), and a final directory without the marker is regenerated.
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
COMPLETE_MARKER = ".complete"
CACHE_ENV = "DIALEVAL_CACHE_DIR"  # see dialeval.files.cache.cache_root


def default_challenge_name(params: dict | None = None) -> str:
    from dialeval.simulator.generate import GENERATOR_VERSION

    p = DEFAULT_PARAMS if params is None else params
    digest = hashlib.sha256(json.dumps(p, sort_keys=True).encode()).hexdigest()[:12]
    return f"default-challenge-{GENERATOR_VERSION}-{digest}"


def _complete(path: Path) -> bool:
    return (path / COMPLETE_MARKER).is_file()


def ensure_default_challenge(params: dict | None = None) -> Path:
    """Path of the default challenge, generating it first if needed (safe across processes)."""
    from filelock import FileLock

    from dialeval.simulator.generate import generate_challenge, make_temp_dir

    p = dict(DEFAULT_PARAMS if params is None else params)
    root = cache_root()
    name = default_challenge_name(p)
    final = root / name
    if _complete(final):
        return final
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from dialeval.core.errors import UsageError

        raise UsageError(
            f"cannot create the cache directory {root} for the embedded default challenge ({e.strerror or e}); "
            f"set {CACHE_ENV} to a writable folder, or pass --challenge DIR"
        ) from None
    with FileLock(str(root / f"{name}.lock")):
        if _complete(final):  # another process finished it while we waited
            return final
        for stale in root.glob(f".{name}.tmp-*"):  # left by a crashed attempt; nobody else holds the lock
            shutil.rmtree(stale, ignore_errors=True)
        if final.exists():  # no marker: half-written by something else than us; start over
            shutil.rmtree(final)
        tmp = make_temp_dir(root, f".{name}.tmp-")
        try:
            generate_challenge(tmp, seed=p["seed"], n_train=p["n_train"], n_test=p["n_test"],
                               candidates=tuple(p["candidates"]), context_distractors=p["context_distractors"])
            if p.get("airdialogue_dev"):
                from dialeval.simulator.airdialogue import write_airdialogue

                write_airdialogue(tmp / "airdialogue", seed=p["seed"], n=p["airdialogue_dev"], split="dev")
            (tmp / COMPLETE_MARKER).write_text(json.dumps(p, sort_keys=True) + "\n")
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return final
