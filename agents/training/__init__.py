"""What ``train.py`` and ``train_rllib.py`` are built from (the scripts themselves are never imported here): the
self-play samplers and GAE (:mod:`~agents.training.self_play`), the shared recipe's flags and checks
(:mod:`~agents.training.recipe`), ``train.py``'s own flag checks (:mod:`~agents.training.trainer_flags`),
``--resume`` (:mod:`~agents.training.resume`), the run folder (:mod:`~agents.training.run_files`), TensorBoard and
evaluation (:mod:`~agents.training.reporting`), the command line (:mod:`~agents.training.command_line`) and the RLlib
module and env runner pieces (:mod:`~agents.training.rllib_module`)."""
