"""abduct-compose: models built from other models, each part built by the registry that builds
the whole (a factory's third positional parameter).

- ``cascade:DUAL+CROSS[,k=50]`` (``abduct_compose.cascade``): a dual encoder ranks every pair, a
  cross-encoder re-scores each row's and column's top ``k``;
- ``retrieve:<scoring model>`` (``abduct_compose.retrieval``): the retrieval baseline of
  generation tasks, the pool text the scoring model ranks first.
"""
