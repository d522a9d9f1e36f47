"""Locate files shipped with the package (the published JSON Schemas)."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def schemas_dir() -> Path:
    """Directory of the published JSON Schemas.

    Installed, they ship as the data-only namespace package ``dialeval.schemas`` (mapped from the
    top-level ``schemas/`` folder); in a source checkout imported from the repository root that
    sub-package does not exist, so fall back to the folder itself.
    """
    from importlib.util import find_spec

    try:
        spec = find_spec("dialeval.schemas")
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        p = Path(location)
        if any(p.glob("*.schema.json")):
            return p
    return Path(__file__).resolve().parent.parent / "schemas"
