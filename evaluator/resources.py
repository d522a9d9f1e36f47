"""Locate files shipped with the package (the published JSON Schemas)."""

from __future__ import annotations

from pathlib import Path


def schemas_dir() -> Path:
    """Directory of the published JSON Schemas.

    Installed, they ship as the package data ``evaluator.schemas`` (mapped from the top-level
    ``schemas/`` folder); in a source checkout imported from the repository root that sub-package
    does not exist, so fall back to the folder itself.
    """
    try:
        from importlib.resources import files

        p = Path(str(files("evaluator.schemas")))
        if p.is_dir():
            return p
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parent.parent / "schemas"
