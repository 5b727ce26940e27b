"""abduct-lmms: lmms-eval and abduct, both ways.

``lmms:MODEL[,key=value...]`` runs any model registered in lmms-eval through abduct's runner;
``abduct export lmms-eval TASK...`` writes lmms-eval task folders whose documents, prompts and
scoring are abduct's.
"""

__version__ = "0.2.0"
