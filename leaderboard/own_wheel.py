"""A wheel of the running dialeval, for the hosting bundles to install (dialeval is not on PyPI).

A bundle must score with exactly the dialeval that made it, and installing ``dialeval==VERSION`` from PyPI would
fetch nothing (it is not published there) or, worse, whatever someone later publishes under that name, onto the
organizer's workers that hold the answer keys. So the bundle carries this wheel: the running package's own files,
pure Python (``py3-none-any``), with the installed distribution's requirements in its METADATA so that pip still
fetches numpy, scipy, pandas... from PyPI.

No build tool makes a wheel from an *installed* package (``build``/``pip wheel`` need the source tree, absent
from a regular install), and a wheel is a documented zip (PEP 427; RECORD as in PEP 376/491), so it is written
here. The files come from the imported packages' folders, which works for a regular install (all under
``site-packages/dialeval``) and an editable one (``dialeval`` is ``evaluator/``, the sub-packages below are other
folders of the checkout). Caches are left out (``__pycache__``, numba's compiled kernels: machine code for the
builder's machine, recompiled on the worker's first use). Deterministic: sorted entries, fixed times and modes.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.metadata
import importlib.util
from pathlib import Path

from dialeval import __version__
from dialeval.core.errors import UsageError

MAPPED_SUBPACKAGES = ("schemas", "baselines", "simulator", "leaderboard", "samples")
LEFT_OUT = ("reference_runs",)
"""Sub-packages the wheel leaves out: the reference runs (3 MB of archives) are read by ``dialeval demo`` only,
which remakes them (:func:`dialeval.baselines.reference.demo_runs`); scoring workers and participants' checks never
read them, and every bundle carries the wheel once per phase plus its starting kit."""
"""dialeval's sub-packages that pyproject.toml maps from folders outside ``evaluator/`` (its package-dir): in an
editable install they are not below ``dialeval``'s own folder."""
DATA_PACKAGES = {"schemas": "schemas_dir", "samples": "samples_dir"}
"""The data-only (namespace) ones, found through :mod:`dialeval.core.resources` (setuptools' editable finder
does not import mapped namespace packages)."""
SKIPPED_DIRS = {"__pycache__", "_kernel_cache"}
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".nbi", ".nbc")  # bytecode, numba's cache index and machine code
BUILD_FILE = "DIALEVAL_BUILD"
"""A dist-info file of the wheel: sha256 of its package files' RECORD lines. Installed, it says which build of a
version is there (a checkout stays at one version through many changes), so the install steps replace another
build of the same version instead of keeping it."""
WHEEL_TAG = "py3-none-any"
WHEEL_FILE = (f"Wheel-Version: 1.0\nGenerator: dialeval {__version__} (bundle)\nRoot-Is-Purelib: true\n"
              f"Tag: {WHEEL_TAG}\n")


def wheel_name(version: str = __version__) -> str:
    return f"dialeval-{version}-{WHEEL_TAG}.whl"


def _folder(package: str) -> Path:
    short = package.rpartition(".")[2]
    if package != "dialeval" and short in DATA_PACKAGES:
        from dialeval.core import resources

        return getattr(resources, DATA_PACKAGES[short])().resolve()
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"cannot bundle dialeval: its package {package} is not installed")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _walk(folder: Path, prefix: str, out: dict[str, bytes]) -> None:
    from dialeval.files.read import read_bytes

    for f in sorted(folder.rglob("*")):
        rel = f.relative_to(folder)
        if (f.is_symlink() or not f.is_file() or any(p in SKIPPED_DIRS or p.startswith(".") for p in rel.parts)
                or f.name.endswith(SKIPPED_SUFFIXES)):
            continue
        out[f"{prefix}/{rel.as_posix()}"] = read_bytes(f, what="a dialeval package file", limit=f.stat().st_size)


def package_files() -> dict[str, bytes]:
    """{path in the wheel: bytes} of the running dialeval's code and package data."""
    root = _folder("dialeval")
    files: dict[str, bytes] = {}
    _walk(root, "dialeval", files)
    left_out = tuple(f"dialeval/{name}/" for name in LEFT_OUT)  # below dialeval's folder in a regular install
    files = {k: v for k, v in files.items() if not k.startswith(left_out)}
    for name in MAPPED_SUBPACKAGES:
        folder = _folder(f"dialeval.{name}")
        if not folder.is_relative_to(root):  # an editable install: the sub-package is another folder
            _walk(folder, f"dialeval/{name}", files)
    return files


def _metadata() -> tuple[str, str]:
    """METADATA (the installed distribution's headers: name, version, Requires-Dist... without the long
    description) and entry_points.txt (the ``dialeval`` command)."""
    try:
        dist = importlib.metadata.distribution("dialeval")
    except importlib.metadata.PackageNotFoundError:
        raise UsageError("cannot bundle dialeval: it is not installed (pip install it, or pip install -e the "
                         "checkout)") from None
    if dist.version != __version__:
        raise UsageError(f"cannot bundle dialeval: the installed metadata says {dist.version}, the code "
                         f"{__version__}: reinstall it")
    headers = [f"{k}: {v}" for k, v in dist.metadata.items() if k.lower() not in ("license-file", "description")]
    return "\n".join(headers) + "\n", dist.read_text("entry_points.txt") or ""


def _record_hash(body: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()


@functools.cache
def wheel_entries() -> dict[str, bytes]:
    """{name: bytes} of the wheel, in archive order: the package files sorted, then the dist-info with RECORD
    last (PEP 427 asks for the .dist-info at the end). :func:`dialeval.leaderboard.hosting.dialeval_wheel` zips it."""
    metadata, entry_points = _metadata()
    info = f"dialeval-{__version__}.dist-info"
    entries = dict(sorted(package_files().items()))
    files = "".join(f"{name},{_record_hash(body)},{len(body)}\n" for name, body in entries.items())
    entries[f"{info}/{BUILD_FILE}"] = (hashlib.sha256(files.encode()).hexdigest() + "\n").encode()
    entries[f"{info}/METADATA"] = metadata.encode()
    entries[f"{info}/WHEEL"] = WHEEL_FILE.encode()
    entries[f"{info}/entry_points.txt"] = entry_points.encode()
    entries[f"{info}/top_level.txt"] = b"dialeval\n"
    record = "".join(f"{name},{_record_hash(body)},{len(body)}\n" for name, body in entries.items())
    entries[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    return entries


def build_id() -> str:
    """The wheel's build: what :data:`BUILD_FILE` says."""
    return wheel_entries()[f"dialeval-{__version__}.dist-info/{BUILD_FILE}"].decode().strip()


def installed_build_check(build: str) -> str:
    """Python code exiting 0 when the dialeval installed is that build, else non-zero (not installed included)."""
    return (f"import importlib.metadata as m, sys; sys.exit((m.distribution('dialeval').read_text('{BUILD_FILE}') "
            f"or '').strip() != '{build}')")
