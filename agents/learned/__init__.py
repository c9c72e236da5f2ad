"""Learned players: the policy network (:mod:`~agents.learned.policy_net`) and its checkpoint files
(:mod:`~agents.learned.checkpoint`), the agent that plays a checkpoint (:mod:`~agents.learned.policy`), the shipped
policies (:mod:`~agents.learned.shipped`, files in ``data/``), and ``policy+expert``, a policy handing over to
search late in the hand (:mod:`~agents.learned.hybrid`)."""
