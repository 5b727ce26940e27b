"""abduct-launch: ``abduct launch slurm|k8s|ray``, the job files that run a sharded evaluation
(``abduct eval ... --shard auto``) on the engine a cluster already has, then ``abduct merge``;
with ``--submit``, submitted with that engine's own client. Scripts use ``slurm_files``,
``kubernetes_files`` and ``ray_files`` (``abduct_launch.jobs``)."""
