"""Fixtures: the test plugin (tiny pair and choice datasets) and a private feature cache."""

from __future__ import annotations

from abduct_regions.testing import cross_encoder_fixtures

private_cache, test_registry, pair_data, choice_data = cross_encoder_fixtures()
