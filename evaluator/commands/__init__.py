"""CLI sub-commands, one module each (imported lazily by dialeval.cli)."""
