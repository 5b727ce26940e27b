"""abduct plugin: registrations only (``abduct video ...`` commands). Nothing heavy imported here."""

from __future__ import annotations
