"""What ``train.py`` and ``train_rllib.py`` are built from: the self-play samplers and GAE
(:mod:`~agents.training.self_play`) and the RLlib module and env runner pieces (:mod:`~agents.training.rllib_module`)."""
