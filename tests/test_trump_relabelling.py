"""The game is the same under any relabelling of the suits (no rule names a suit), so the observation and action
tables of :func:`schnapsen_env.encoding.trump_relabelling` turn every hand into one of clubs trumps exactly: a
hand dealt from the relabelled deck, played with the relabelled actions, shows at every step the relabelled
observations and masks and ends with the same result. Property tests over random hands of every ruleset and the
knob variants of the rules' property tests; then the network that sees hands relabelled (``canonical_trump``)
answers the same for a hand and its relabelling."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from test_properties import RULES, SEEDS, _settings

from agents.learned.policy_net import ActorCritic
from helpers.play import random_positions
from schnapsen_env import GameState, RuleSet, encoding

ALL_RULES = [*RULES, RuleSet.make("schnapsen10")]


def relabelled_hand(rules: RuleSet, rng: np.random.Generator):
    """A random hand and the same hand with trump relabelled to clubs: ``(hand, relabelled, trump)``."""
    deck = list(rules.deck.codes)
    rng.shuffle(deck)
    dealer = int(rng.integers(2))
    hand = GameState.from_deck(rules, deck, dealer)
    t = hand.trump
    swap = {0: t, t: 0}
    d = rules.deck
    codes = [d.codes[d.card(swap.get(d.suit[c], d.suit[c]), d.rank[c])] for c in map(d.index, deck)]
    return hand, GameState.from_deck(rules, codes, dealer), t


@_settings(300)
@given(seed=SEEDS, variant=st.integers(0, len(ALL_RULES) - 1))
def test_a_hand_relabelled_to_clubs_trumps_shows_the_relabelled_observations_masks_and_result(seed, variant):
    rules = ALL_RULES[variant]
    rng = np.random.default_rng(seed)
    obs_index, action_index = encoding.trump_relabelling(rules)
    hand, relabelled, t = relabelled_hand(rules, rng)
    assert relabelled.trump == 0
    while hand.result is None:
        for seat in (0, 1):
            np.testing.assert_array_equal(encoding.observation(hand, seat)[obs_index[t]],
                                          encoding.observation(relabelled, seat))
        mask = hand.action_mask()
        np.testing.assert_array_equal(mask[action_index[t]], relabelled.action_mask())
        action = int(rng.choice(np.flatnonzero(mask)))
        hand.step(action)
        relabelled.step(int(action_index[t][action]))  # the table is its own inverse
    assert relabelled.result == hand.result


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_relabelling_tables_are_their_own_inverse_and_clubs_is_the_identity(ruleset):
    rules = RuleSet.make(ruleset)
    obs_index, action_index = encoding.trump_relabelling(rules)
    assert obs_index.shape == (4, encoding.obs_size(rules)) and action_index.shape == (4, rules.n_actions)
    for table in (obs_index, action_index):
        np.testing.assert_array_equal(table[0], np.arange(table.shape[1]))
        for row in table:
            np.testing.assert_array_equal(row[row], np.arange(len(row)))
        assert len({tuple(r) for r in table[:rules.deck.n_suits]}) == rules.deck.n_suits


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_the_canonical_trump_network_answers_a_hand_and_its_relabelling_alike(ruleset):
    rules = RuleSet.make(ruleset)
    torch.manual_seed(0)
    net = ActorCritic(encoding.obs_size(rules), rules.n_actions, hidden=32, canonical_trump=True).eval()
    plain = ActorCritic(encoding.obs_size(rules), rules.n_actions, hidden=32).eval()
    plain.load_state_dict(net.state_dict())  # the relabelling adds no weights
    _, action_index = encoding.trump_relabelling(rules)
    rng = np.random.default_rng(3)
    rows, tried = [], 0
    while len(rows) < 40:
        hand, relabelled, t = relabelled_hand(rules, rng)
        tried += t != 0
        for _ in range(int(rng.integers(0, 6))):
            if hand.result is not None:
                break
            a = int(rng.choice(np.flatnonzero(hand.action_mask())))
            hand.step(a)
            relabelled.step(int(action_index[t][a]))
        if hand.result is None:
            rows.append((encoding.observation(hand, hand.to_move), encoding.observation(relabelled, hand.to_move),
                         t))
    assert tried > 10
    obs = torch.from_numpy(np.stack([r[0] for r in rows]))
    obs_relabelled = torch.from_numpy(np.stack([r[1] for r in rows]))
    index = torch.from_numpy(np.stack([action_index[r[2]] for r in rows]))
    with torch.no_grad():
        logits, value = net(obs)
        logits_c, value_c = plain(obs_relabelled)  # clubs trumps: what the canonical network computes inside
        torch.testing.assert_close(logits, logits_c.gather(1, index))
        torch.testing.assert_close(value, value_c)
        torch.testing.assert_close(net(obs_relabelled)[0], logits_c)  # clubs trumps are left as they are
        torch.testing.assert_close(net.act_logits(obs), logits)
    assert not torch.allclose(plain(obs)[0], logits)  # without the relabelling the answers differ


@pytest.mark.parametrize("flag", ["canonical_trump", "canonical_suits"])
def test_a_relabelling_run_writes_a_policy_that_loads_relabelled_and_plays_legally(tmp_path, flag):
    from agents.learned.checkpoint import load_checkpoint
    from agents.learned.policy import PolicyAgent
    from agents.learned.policy_net import load_policy
    from helpers.play import assert_legal_hands
    from helpers.scripts import load_script
    from helpers.training import tiny_args

    train = load_script("train.py")
    relabelling = {"canonical_trump": flag == "canonical_trump", "canonical_suits": flag == "canonical_suits"}
    train.main(tiny_args(tmp_path, total_steps=1500, **relabelling))
    policy = tmp_path / "tiny" / "policy.pt"
    assert load_checkpoint(policy)["net"][flag] is True
    model, rules, _ = load_policy(policy, "schnapsen20")
    assert getattr(model, flag) and model.canonical_trump
    assert rules.name == "schnapsen20"
    assert_legal_hands(PolicyAgent.load(policy, seed=0), hands=10)
    # a plain network's config is as it always was, so the policies written before load unchanged
    plain = {"canonical_trump": False, "canonical_suits": False}
    train.main(tiny_args(tmp_path, run_name="plain", total_steps=1500, **plain))
    assert set(load_checkpoint(tmp_path / "plain" / "policy.pt")["net"]) == {
        "obs_size", "n_actions", "hidden", "layers", "critic_extra"}
    name = "--" + flag.replace("_", "-")
    with pytest.raises(ValueError, match=f"--init-from .* trained with {name}, this run's without it"):
        train.main(tiny_args(tmp_path, run_name="init", init_from=str(policy), **plain))


def suit_features(o: np.ndarray, rules: RuleSet, s: int) -> tuple:
    """What the observation ``o`` shows of suit ``s``: its cards in every card plane, trump, marriages, announcement."""
    lay, deck = encoding.layout(rules), rules.deck
    cards = [deck.card(s, r) for r in range(deck.ranks_per_suit)]
    return (tuple(tuple(o[lay[name]][cards].tolist()) for name in encoding.PLANES), o[lay["trump"]][s],
            o[lay["marriages"]][s], o[lay["marriages"]][4 + s], o[lay["announced"]][s])


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_the_canonical_suits_network_answers_every_relabelling_of_a_hand_alike(ruleset):
    """Any relabelling of the suits (not only trump's) leaves the canonical_suits network's answer the same, mapped
    to the relabelled actions: the trunk sees one observation for all of them."""
    rules = RuleSet.make(ruleset)
    torch.manual_seed(0)
    net = ActorCritic(encoding.obs_size(rules), rules.n_actions, hidden=32, canonical_suits=True).eval()
    trump_only = ActorCritic(encoding.obs_size(rules), rules.n_actions, hidden=32, canonical_trump=True).eval()
    trump_only.load_state_dict(net.state_dict())
    rng = np.random.default_rng(5)
    obs, obs_relabelled, index = [], [], []
    for _ in range(60):
        hand = GameState.new_hand(rules, rng)
        for _ in range(int(rng.integers(0, 8))):
            if hand.result is None:
                hand.step(int(rng.choice(np.flatnonzero(hand.action_mask()))))
        if hand.result is not None:
            continue
        perm = rng.permutation(rules.deck.n_suits)
        obs_index, action_index = encoding.suit_relabelling(rules, perm)
        o = encoding.observation(hand, hand.to_move)
        obs.append(o)
        obs_relabelled.append(o[obs_index])
        index.append(action_index)
    obs, obs_relabelled = torch.from_numpy(np.stack(obs)), torch.from_numpy(np.stack(obs_relabelled))
    index = torch.from_numpy(np.stack(index))
    with torch.no_grad():
        torch.testing.assert_close(net.relabel(obs_relabelled)[0], net.relabel(obs)[0], rtol=0, atol=0)
        logits, value = net(obs)
        logits_r, value_r = net(obs_relabelled)
        torch.testing.assert_close(value_r, value, rtol=0, atol=1e-6)
        # Two suits the observation shows alike may go in either order: their cards' logits may then swap (the
        # actions are alike too); every other row answers the same.
        distinct = torch.tensor([len({suit_features(o, rules, s) for s in range(rules.deck.n_suits)})
                                 == rules.deck.n_suits for o in obs.numpy()])
        assert distinct.float().mean() > 0.8
        torch.testing.assert_close(logits_r.gather(1, index)[distinct], logits[distinct], rtol=0, atol=1e-6)
        if rules.deck.n_suits > 2:  # with two suits, trump first leaves nothing to order
            assert not torch.allclose(trump_only(obs_relabelled)[0].gather(1, index), trump_only(obs)[0])


@pytest.mark.parametrize("init", [{}, {"canonical_trump": True}, {"canonical_suits": True}])
def test_rows_relabelled_once_for_a_whole_batch_give_the_answers_of_rows_relabelled_alone(init):
    """The PPO update relabels a batch once for all its epochs (the relabelling depends on the observations only):
    any minibatch of its rows, passed as ``relabelled``, gets bit for bit the actions' log-probabilities, entropy,
    values and every action's log-probability that relabelling the minibatch itself gives."""
    rules = RuleSet.make("schnapsen20")
    torch.manual_seed(0)
    net = ActorCritic(encoding.obs_size(rules), rules.n_actions, hidden=32, **init)
    rng = np.random.default_rng(11)
    obs, masks = random_positions(rules, 200, rng)
    actions = torch.from_numpy(np.array([rng.choice(np.flatnonzero(m)) for m in masks.numpy()]))
    batch_obs, table = net.relabel(obs)
    assert (table is None) == (not init)
    rows = torch.from_numpy(rng.permutation(len(obs))[:64])
    once = net.get_action_and_value(batch_obs[rows], masks[rows], actions[rows], return_log_probs=True,
                                    relabelled=None if table is None else table[rows])
    alone = net.get_action_and_value(obs[rows], masks[rows], actions[rows], return_log_probs=True)
    for a, b in zip(once, alone):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    once[1].sum().backward()  # the gradient flows through the relabelled rows alike
    assert net.trunk[0].weight.grad is not None and bool(net.trunk[0].weight.grad.abs().sum() > 0)


@pytest.mark.parametrize("init", [{}, {"canonical_trump": True}, {"canonical_suits": True},
                                  {"canonical_trump": True, "canonical_suits": True}])
@pytest.mark.parametrize("run", [(False, False), (True, False), (False, True), (True, True)])
def test_init_from_names_every_flag_that_makes_the_run_fit_its_network(tmp_path, init, run):
    """--init-from a network of another relabelling is refused with the flags to pass, all of them at once: passing
    them makes the run's network the init's (a --canonical-trump policy under the default --canonical-suits needs
    --canonical-trump and --no-canonical-suits, not one and then the other)."""
    import re
    from types import SimpleNamespace

    from agents.learned.policy_net import save_policy
    from agents.training import trainer_flags

    rules = RuleSet.make("schnapsen20")
    size = encoding.obs_size(rules), rules.n_actions
    path = tmp_path / "init.pt"
    save_policy(path, ActorCritic(*size, hidden=8, **init), rules, {})
    args = SimpleNamespace(init_from=str(path), canonical_trump=run[0], canonical_suits=run[1])
    net = lambda a: ActorCritic(*size, hidden=8, canonical_trump=a.canonical_trump,  # noqa: E731
                                canonical_suits=a.canonical_suits)
    model = net(args)
    if model.config() == ActorCritic(*size, hidden=8, **init).config():
        trainer_flags.load_init(args, rules, model)
        return
    with pytest.raises(ValueError, match="--init-from") as e:
        trainer_flags.load_init(args, rules, model)
    flags = re.search(r"\(pass ([-a-z ]+)\)", str(e.value)).group(1).split()
    for f in flags:
        setattr(args, f.removeprefix("--no-").removeprefix("--").replace("-", "_"), not f.startswith("--no-"))
    trainer_flags.load_init(args, rules, net(args))  # the advice suffices
