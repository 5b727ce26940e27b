"""Confidence intervals over the per-unit data of a run (``UnitScores``): a percentile bootstrap
written out in numpy (the tests check it against scipy.stats.bootstrap); abduct-report's paired
tests draw through the same functions."""
