"""CLI sub-commands, one module each (imported lazily by evaluator.cli)."""
