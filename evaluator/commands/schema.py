"""``dialeval schema``: list or print the published JSON Schemas."""

from __future__ import annotations

import click

from dialeval.core.resources import schema_names, schema_path, schemas_dir  # noqa: F401 (re-exported)


@click.command("schema")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the schema names.")
def schema_cmd(name, list_):
    """Print the JSON Schema NAME (2020-12), or list them with --list."""
    if list_ and name:  # never silently ignored: the list or one schema
        from dialeval.core.errors import UsageError

        raise UsageError(f"give a schema NAME or --list, not both (dialeval schema {name} prints it)")
    if list_ or not name:
        for n in schema_names():
            click.echo(n)
        return 0
    click.echo(schema_path(name).read_text(encoding="utf-8").rstrip("\n"))
    return 0
