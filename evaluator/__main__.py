"""``python -m dialeval``: the same command line as the ``dialeval`` console script."""

from dialeval.cli import run

if __name__ == "__main__":
    run()
