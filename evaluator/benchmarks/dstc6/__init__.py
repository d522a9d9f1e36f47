"""DSTC6 Track 1 (and the bAbI-format restaurant tasks in the DSTC6 layout) as one benchmark package.

* :mod:`.benchmark` — the :class:`~dialeval.benchmarks.base.Benchmark` (registry line ``dstc6``);
* :mod:`.challenge` — the split layout, the test-file index and its cache, answer keys;
* :mod:`.submission` — a result JSON, a folder in the official layout, a ``.tgz`` of one, or ``-``;
* :mod:`.fastpath` — typed decoding that proves a file valid or hands it on;
* :mod:`.validate` — the full checker (every problem at once) and the one ranking-entry checker that the
  other rank-based benchmarks use too;
* :mod:`.lenient` — emulation of the official scorer (``--lenient``).
"""
