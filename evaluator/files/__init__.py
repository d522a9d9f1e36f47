"""File access shared by every layer above: :mod:`dialeval.files.read` is the one way dialeval opens an input."""
