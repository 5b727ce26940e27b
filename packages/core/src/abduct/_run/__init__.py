"""A run: the runner that tasks receive, ``abduct eval`` from task and model to finished outputs."""
