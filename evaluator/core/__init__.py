"""Core types every layer shares: the rank table, problems and errors, signatures, terminal safety, schemas.

Nothing here reads a file or knows a benchmark: :mod:`~dialeval.core.ranks` (RankTable),
:mod:`~dialeval.core.problems` (Problem, codes), :mod:`~dialeval.core.errors` (exit-code exceptions),
:mod:`~dialeval.core.signature`, :mod:`~dialeval.core.termsafe`, :mod:`~dialeval.core.resources` and
:mod:`~dialeval.core.schemacheck` (the published JSON Schemas).
"""
