"""The agent contract (API.md), shared by every agent of this package and by every caller that builds one.

**Factory.** An agent is built by a factory with the signature ``(rules: RuleSet, seed: int | None, **options)``:

* ``rules``: the env's :class:`~schnapsen_env.ruleset.RuleSet`, knobs included (``env.rules``; a ruleset name such
  as ``"schnapsen20"`` is accepted for convenience and means that ruleset's default knobs). It is required: an
  agent never guesses the rules from the observation (its length tells only the deck, not the knobs), so a
  factory given no rules raises :class:`TypeError` at construction, and an agent that cannot play the given
  ruleset (a shipped policy plays its own ruleset only) raises :class:`ValueError` there.
* ``seed``: the seed of the agent's ``numpy.random.Generator`` (``None``: fresh entropy); all of an agent's
  randomness comes from it.
* ``**options``: the agent's own keyword arguments (``n_samples=``, ``depth=``, ``greedy=``, ...).

Every registered factory (:func:`agents.make_agent`) and every agent class (``RandomAgent``, ``HeuristicAgent``,
``RolloutAgent``, ``PIMCAgent``; ``PolicyAgent`` through ``make_agent("trained", rules)``) takes ``rules`` and
``seed`` this way; callers (the arena, ``schnapsen-play``, the Gymnasium env's ``opponent=``, ``train.py``)
always pass the env's own rules.

**Agent.** The object built has

* ``act(observation_dict) -> int``: the env's ``{"observation", "action_mask"}`` dict of the player to move in,
  a legal action id out. An agent sees only that dict, so it cannot peek at hidden cards;
* ``reset()`` (optional): called between hands;
* ``observe_hand(observations, actions)`` (optional, :class:`ObservesHand`): the hand's history, for a caller that
  builds the agent afresh for a decision (the web app) where another keeps it through the hand (the arena);
* ``name``: a short label (``"random"``, ``"pimc"``, ...);
* ``rules``: the :class:`RuleSet` it plays (the one it was given).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from schnapsen_env.agent_specs import as_rules


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(observation: dict) -> int`` (and optionally ``reset()`` between hands, a ``name``)."""

    def act(self, observation: dict) -> int: ...


@runtime_checkable
class ObservesHand(Protocol):
    """An agent that reads the hand's history (its world inference weighs worlds by the opponent's actions).

    ``observe_hand(observations, actions)`` gives it this hand's earlier observations of the player (each the env's
    ``"observation"`` vector, float32 ``(obs_size,)``, or the env's dict) and the action id it took on each, oldest
    first: all the player may know (RULES.md R27), never the opponent's cards. They replace whatever history the agent
    kept, and the next :meth:`act` is the decision that follows them, so that an agent built afresh, given them, then
    acting decides as the same agent kept through the hand would (with the same generator state). An agent kept through
    the hand needs no call: its ``act`` records the history itself. Callers that rebuild an agent per decision call
    :func:`observe_hand`, which does nothing for an agent without the method (it reads no history).

    Raises:
        ValueError: ``observations`` and ``actions`` of different lengths.
    """

    def observe_hand(self, observations, actions) -> None: ...


def observe_hand(agent, observations, actions) -> bool:
    """Give ``agent`` the hand's history (:class:`ObservesHand`) where it reads one; True if it does.

    Args:
        agent: any agent.
        observations: the player's earlier observations of the hand (vectors float32 ``(obs_size,)`` or the env's
            dicts), oldest first.
        actions: the action id taken on each.

    Raises:
        ValueError: ``observations`` and ``actions`` of different lengths.
    """
    if len(observations) != len(actions):
        raise ValueError(f"the hand's history needs one action per observation, got {len(observations)} observations "
                         f"and {len(actions)} actions")
    if not isinstance(agent, ObservesHand):
        return False
    agent.observe_hand(observations, actions)
    return True


def legal_ids(observation: dict) -> np.ndarray:
    """Action ids whose mask entry is 1: ``np.ndarray`` int64 of shape ``(k,)``, k >= 1.

    Raises:
        ValueError: the mask is missing or has no legal action (the agent is not to move).
    """
    try:
        mask = observation["action_mask"]
    except (KeyError, TypeError, IndexError):
        raise ValueError("observation must be the env's dict with an 'action_mask' entry") from None
    ids = np.flatnonzero(np.asarray(mask))
    if ids.size == 0:
        raise ValueError("the action mask has no legal action: this agent is not to move")
    return ids


def best_action(values: dict[int, float]) -> int:
    """The action id with the highest value; ties go to the lowest id."""
    return max(values, key=lambda a: (values[a], -a))




__all__ = ["Agent", "ObservesHand", "as_rules", "best_action", "legal_ids", "observe_hand"]
