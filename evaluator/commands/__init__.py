"""CLI sub-commands, one module each (imported lazily by dialeval.cli)."""

_notices: list[str] = []


def notice(text: str) -> None:
    """Say TEXT on stderr when the command ends, unless it ends in a usage error (whose one line says it all: a
    "using the default data" notice above "no such split" would only mislead)."""
    _notices.append(text)


def flush_notices(usage_error: bool) -> None:
    import sys

    pending = [] if usage_error else list(_notices)
    _notices.clear()
    for text in pending:
        try:
            sys.stderr.write(text + "\n")
        except OSError:
            pass
