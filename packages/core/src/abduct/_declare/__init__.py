"""Reading what plugins declare: the machinery behind the contract, kept out of it.

``abduct.contract`` is what a plugin author writes against; this package reads what they wrote,
for the registry and the runner: a model's and a task's optional declarations (``traits``), a
factory's options bound from text (``options``), metric declarations matched to the numbers a
run reports (``metrics``) and a task's per-unit data checked (``units``). It imports only the
contract and the standard library. Private: what programs use of it is exported by ``abduct.host``.
"""
