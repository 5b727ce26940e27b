"""The core's own plugin: baselines, cascade, retrieve and exact match, registered through the same hooks as any plugin's."""
