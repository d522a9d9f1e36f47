"""Validation against the published JSON Schemas with jsonschema (the slow, general path).

The scorer's own checks (:mod:`dialeval.benchmarks.dstc6.validate`) are a hand-written fast path over the same rules;
this module validates any document against a published schema by name, for tools that consume the
files and for the tests that keep the two paths in agreement.
"""

from __future__ import annotations

from functools import cache

from dialeval.core.problems import Problem, pointer


@cache
def validator(name: str):
    from jsonschema import Draft202012Validator

    from dialeval.core.resources import load_schema

    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_problems(data: object, name: str, file: str | None = None) -> list[Problem]:
    """Every schema violation of ``data`` as a Problem (code ``schema``) with its JSON pointer."""
    out = []
    for err in validator(name).iter_errors(data):
        out.append(Problem("schema", pointer(*err.absolute_path), err.message[:200], "error", file))
    return sorted(out, key=lambda p: p.pointer)
