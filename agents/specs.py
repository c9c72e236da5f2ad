"""Agent specs (a name, ``name:key=value``, a ``.pt`` path, a factory, an agent object): the resolver lives in
:mod:`schnapsen_env.agent_specs`, beside the registry, so that the envs take exactly the forms the arena takes; this
module is its name in the agents package."""

from schnapsen_env.agent_specs import (
                                       CallableFactory,
                                       CheckpointFactory,
                                       Fixed,
                                       NameFactory,
                                       act_fn,
                                       build,
                                       check_options,
                                       fits_hint,
                                       parse_value,
                                       resolve_agent,
                                       spec_forms,
)

__all__ = ["CallableFactory", "CheckpointFactory", "Fixed", "NameFactory", "act_fn", "build", "check_options",
           "fits_hint", "parse_value", "resolve_agent", "spec_forms"]
