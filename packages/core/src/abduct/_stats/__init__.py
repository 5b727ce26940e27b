"""Confidence intervals and paired tests over the per-unit data of a run (``UnitScores``);
scipy.stats does the resampling and is imported only when an interval is computed."""
