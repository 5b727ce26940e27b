"""The core's own plugin: baselines and exact match, registered through the same hooks as any plugin's."""
