"""Where numba keeps the embedding kernels' machine code: a folder dialeval controls, seeded at install.

numba compiles :mod:`dialeval.metrics.embedding_kernels` in about 7 s of CPU; loading the cached machine code
takes about 0.4 s. So that no user run pays the compile:

* **At install**, ``setup.py`` (``build_py``) compiles every kernel signature scoring uses
  (:func:`dialeval.metrics.embedding.warm_kernels`) into ``dialeval/metrics/_kernel_cache`` inside the built
  package (the build's own numba; skipped, with a warning, when it cannot).
* **On first use**, :func:`cache_dir` (``<dialeval cache>/kernels/<source hash>-numba<version>``, under
  ``$DIALEVAL_CACHE_DIR`` or the platform's user cache, e.g. ``~/.cache/dialeval``) is seeded from that
  prebuilt folder when it is still empty, and numba loads from it.
* numba checks every entry against its own version, the Python version, the CPU and a hash of the kernels'
  source, and compiles (once, into the same folder) whatever does not match: a wheel built on another CPU or
  with another numba still works, it just compiles on its first use.

The folder is chosen by a numba cache *locator* registered ahead of numba's own (``NUMBA_CACHE_DIR`` does
not move these kernels); when it cannot be written, numba's own locators take over (``__pycache__`` beside
the module, or numba's user cache). ``$DIALEVAL_KERNEL_CACHE`` names the folder outright (the install step
uses it to write into the built package).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from pathlib import Path

KERNEL_CACHE_ENV = "DIALEVAL_KERNEL_CACHE"
PREBUILT = Path(__file__).with_name("_kernel_cache")
"""Machine code compiled when the package was built (absent in a source checkout)."""
KERNELS_FILE = Path(__file__).with_name("embedding_kernels.py")


def source_digest() -> bytes:
    """sha256 of the kernels' source: numba's freshness stamp for their cache (content, not mtime: an
    install copies files with new times)."""
    return hashlib.sha256(KERNELS_FILE.read_bytes()).digest()


def cache_dir() -> Path:
    """The folder the kernels' machine code is loaded from and saved to."""
    env = os.environ.get(KERNEL_CACHE_ENV)
    if env:
        return Path(env)
    import numba

    from dialeval.files.cache import cache_root

    return cache_root() / "kernels" / f"{source_digest().hex()[:16]}-numba{numba.__version__}"


def seed(target: Path, prebuilt: Path = PREBUILT) -> int:
    """Copy the prebuilt machine code into ``target`` when ``target`` holds none yet; returns the files copied.
    Each file is written under a temporary name and renamed, so a concurrent run sees it whole or not at all."""
    if not prebuilt.is_dir() or target.resolve() == prebuilt.resolve():
        return 0
    target.mkdir(parents=True, exist_ok=True)
    if any(target.glob("*.nbi")):
        return 0
    copied = 0
    for f in sorted(prebuilt.iterdir()):
        if f.suffix not in (".nbi", ".nbc"):
            continue
        tmp = target / f".{f.name}.{uuid.uuid4().hex[:8]}.tmp"
        shutil.copyfile(f, tmp)
        os.replace(tmp, target / f.name)
        copied += 1
    return copied


def install_locator() -> None:
    """Register the locator (before the kernels are decorated: numba picks a function's cache at decoration)
    and seed its folder. Idempotent; a folder that cannot be made or written leaves numba's own locators."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.61
    base = caching._CacheLocator
    kernels_file = os.path.normcase(os.path.abspath(KERNELS_FILE))
    folder = cache_dir()
    stamp = source_digest()
    try:
        seed(folder)
    except OSError:
        pass  # read-only cache: numba's locators below compile where they can

    class DialevalKernelLocator(base):
        dialeval_kernels = True

        def __init__(self, py_func):
            self._lineno = py_func.__code__.co_firstlineno

        def get_cache_path(self):
            return str(folder)

        def get_source_stamp(self):
            return stamp

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.normcase(os.path.abspath(py_file)) != kernels_file:
                return None
            self = cls(py_func)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    classes = [c for c in impl._locator_classes if not getattr(c, "dialeval_kernels", False)]
    impl._locator_classes[:] = [DialevalKernelLocator, *classes]
