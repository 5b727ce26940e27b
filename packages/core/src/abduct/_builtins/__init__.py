"""The core's own plugin: baselines (``cascade:`` and ``retrieve:`` among them) and exact match, registered through the same hooks as any plugin's."""
