"""Every test of the package sees one cache directory of its own (built tiny models are
shared by the session; nothing is written to the user's cache)."""

from abduct_testing import session_cache_fixture

session_cache = session_cache_fixture()
