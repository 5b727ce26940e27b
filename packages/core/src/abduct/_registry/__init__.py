"""The registry: plugins discovered through the ``abduct`` entry points, and what they register."""
