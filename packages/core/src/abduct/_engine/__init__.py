"""The engines: the one place where models score, generate and judge, and the wiring of a model to them (``engine_for``)."""
