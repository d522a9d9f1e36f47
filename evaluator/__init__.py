"""dialeval: validate and score submissions for end-to-end dialog benchmarks.

Heavy modules are imported lazily so that ``dialeval --help`` starts fast; the public Python API lives
in :mod:`dialeval.api` (``from dialeval.api import score``).
"""

__version__ = "0.1.0"
