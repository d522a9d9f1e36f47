"""From a RankTable to what a user reads: :mod:`~dialeval.results.report` (tidy records, signatures),
:mod:`~dialeval.results.stats` (intervals, paired tests, bands) and :mod:`~dialeval.results.render`
(rich table, JSON, CSV, pandas, per-item lines)."""
