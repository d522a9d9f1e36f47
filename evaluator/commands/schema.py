"""``dialeval schema``: list or print the published JSON Schemas."""

from __future__ import annotations

from pathlib import Path

import click

from dialeval.errors import UsageError
from dialeval.resources import schemas_dir


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


@click.command("schema")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the schema names.")
def schema_cmd(name, list_):
    """Print the JSON Schema NAME (2020-12), or list them with --list."""
    if list_ or not name:
        for n in schema_names():
            click.echo(n)
        return 0
    click.echo(schema_path(name).read_text(encoding="utf-8").rstrip("\n"))
    return 0
