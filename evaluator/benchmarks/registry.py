"""Benchmark registry: name -> lazily imported Benchmark class (adding one is one line here)."""

from __future__ import annotations

import importlib

from dialeval.benchmarks.base import Benchmark
from dialeval.core.errors import UsageError

BUILTIN: dict[str, str] = {
    "dstc6": "dialeval.benchmarks.dstc6.benchmark:DSTC6",
    "airdialogue": "dialeval.benchmarks.airdialogue:AirDialogue",
    "babi": "dialeval.benchmarks.babi:Babi",
    "movie-dialog": "dialeval.benchmarks.movie_dialog:MovieDialog",
    "ubuntu": "dialeval.benchmarks.ubuntu:Ubuntu",
}

_REGISTRY: dict[str, str] = dict(BUILTIN)


def register(name: str, target: str) -> None:
    """Register ``"package.module:Class"`` under ``name`` (imported on first use)."""
    _REGISTRY[name] = target


def names() -> list[str]:
    return list(_REGISTRY)


def get(name: str) -> Benchmark:
    target = _REGISTRY.get(name)
    if target is None:
        raise UsageError(f"unknown benchmark {name!r} (known: {', '.join(_REGISTRY)})")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)()
