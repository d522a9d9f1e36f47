"""Benchmarks: one reader per benchmark turns (data, submission) into a RankTable and problems.

See :mod:`dialeval.benchmarks.base` for the protocol and :mod:`dialeval.benchmarks.registry` for the list.
"""
