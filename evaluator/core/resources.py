"""Locate files shipped with the package (the published JSON Schemas, reference runs, sample data)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dialeval.core.errors import UsageError

_REPO = Path(__file__).resolve().parents[2]
"""The source checkout (``evaluator/core/`` is two levels down), for running from a checkout without installing."""


def _data_package_dir(name: str, marker: str, fallback: Path) -> Path:
    """Where a data-only namespace package's files are (installed), else the repository folder it maps."""
    from importlib.util import find_spec

    try:
        spec = find_spec(name)
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        p = Path(location)
        if any(p.glob(marker)):
            return p
    return fallback


@cache
def reference_runs_dir() -> Path:
    """The reference baselines' submissions on the embedded default challenge (``<name>/submission.tgz``), as
    installed (pip's wheel) or in the checkout. The wheel bundles carry leaves them out:
    :func:`dialeval.baselines.reference.demo_runs` remakes them there."""
    return _data_package_dir("dialeval.reference_runs", "*/submission.tgz", _REPO / "submissions" / "baselines" / "default")


@cache
def samples_dir() -> Path:
    """dialeval's sample data, one folder per benchmark (``<benchmark>/sample.json`` + its data files)."""
    return _data_package_dir("dialeval.samples", "*/sample.json", _REPO / "submissions" / "samples")


@cache
def schemas_dir() -> Path:
    """Directory of the published JSON Schemas.

    Installed, they ship as the data-only namespace package ``dialeval.schemas`` (mapped from the
    top-level ``schemas/`` folder); in a source checkout that sub-package may not exist, so fall back to
    the folder itself.
    """
    return _data_package_dir("dialeval.schemas", "*.schema.json", _REPO / "schemas")


def schema_names() -> list[str]:
    return sorted(p.name[: -len(".schema.json")] for p in schemas_dir().glob("*.schema.json"))


def schema_path(name: str) -> Path:
    """The file of a published schema; a name that is not one of :func:`schema_names` is a usage error."""
    names = schema_names()
    if name not in names:
        raise UsageError(f"unknown schema {name!r} (available: {', '.join(names)})")
    return schemas_dir() / f"{name}.schema.json"


def load_schema(name: str) -> dict:
    """A published schema by name (``dstc6-result``, ``dstc6-dataset``, ``score-report``, ...)."""
    import json

    return json.loads(schema_path(name).read_text(encoding="utf-8"))
