"""Benchmark registry: name -> lazily imported Benchmark class (adding one is one line here)."""

from __future__ import annotations

import importlib

from dialeval.benchmarks.base import GENERIC_OPTIONS, Benchmark
from dialeval.core.errors import UsageError, did_you_mean

DEFAULT_BENCHMARK = "dstc6"
"""The benchmark ``--benchmark`` and the API default to (the only place generic code learns its name)."""

BUILTIN: dict[str, str] = {
    "dstc6": "dialeval.benchmarks.dstc6.benchmark:DSTC6",
    "airdialogue": "dialeval.benchmarks.airdialogue:AirDialogue",
    "babi": "dialeval.benchmarks.babi:Babi",
    "movie-dialog": "dialeval.benchmarks.movie_dialog:MovieDialog",
    "ubuntu": "dialeval.benchmarks.ubuntu:Ubuntu",
    "dstc7": "dialeval.benchmarks.dstc7:DSTC7",
    "dstc8": "dialeval.benchmarks.dstc7:DSTC8",
    "douban": "dialeval.benchmarks.douban:Douban",
    "ecommerce": "dialeval.benchmarks.douban:Ecommerce",
    "ubuntu-v1": "dialeval.benchmarks.douban:UbuntuV1",
    "convai2": "dialeval.benchmarks.convai2:ConvAI2",
}

_REGISTRY: dict[str, str] = dict(BUILTIN)


def register(name: str, target: str) -> None:
    """Register ``"package.module:Class"`` under ``name`` (imported on first use)."""
    _REGISTRY[name] = target


def names() -> list[str]:
    return list(_REGISTRY)


def all_benchmarks() -> list[Benchmark]:
    """Every registered benchmark (imports each module)."""
    return [get(n) for n in _REGISTRY]


def declared_options(names: list[str] | None = None) -> dict[str, list]:
    """Each option name the benchmarks ``names`` (None: every registered one) declare ->
    ``[(benchmark name, Option), ...]`` (the CLI builds its flags from this; two benchmarks may share a name
    only with the same kind)."""
    out: dict[str, list] = {}
    for b in all_benchmarks() if names is None else [get(n) for n in names]:
        for o in b.options:
            others = out.setdefault(o.name, [])
            if others and (others[0][1].kind, others[0][1].choices) != (o.kind, o.choices):
                raise RuntimeError(f"option {o.name} is declared twice with different kinds ({others[0][0]}, {b.name})")
            others.append((b.name, o))
    return out


def declared_flags() -> set[str]:
    """The command-line flags (``--lenient``) of every registered benchmark's options."""
    return {o.flag for b in all_benchmarks() for o in b.options if o.cli}


def get(name: str) -> Benchmark:
    target = _REGISTRY.get(name)
    if target is None:
        raise UsageError(f"unknown benchmark {name!r}{did_you_mean(name, _REGISTRY)} (known: {', '.join(_REGISTRY)})")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)()


def check_options(bench: Benchmark, options: dict, keys: object = None) -> None:
    """Refuse options ``bench`` does not declare (naming the benchmarks that do), and declared options' values
    outside their range: an option meant for another benchmark is a usage error, never silently ignored."""
    declared = {o.name: o for o in bench.options}
    for name, value in options.items():
        if name in GENERIC_OPTIONS:
            continue
        o = declared.get(name)
        flag = "--" + str(name).replace("_", "-")
        if o is None:
            takers = ", ".join(b.name for b in all_benchmarks() if any(x.name == name for x in b.options))
            raise UsageError(f"{flag[:60]} does not apply to benchmark {bench.name} (it applies to: {takers or 'none'})")
        if value is None:
            continue
        if o.kind == "choice" and value not in o.choices:
            raise UsageError(f"{flag} must be one of {', '.join(o.choices)}")
        if o.kind == "int" and (not isinstance(value, int) or isinstance(value, bool)
                                or (o.low is not None and value < o.low) or (o.high is not None and value > o.high)):
            raise UsageError(f"{flag} must be a whole number from {o.low} to {o.high}")
    if keys is not None and not bench.separate_keys:
        raise UsageError(f"--keys does not apply to benchmark {bench.name} (its answers are in its data folder)")
