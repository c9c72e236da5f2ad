"""The OpenSpiel game ``python_schnapsen``: loading and parameters, OpenSpiel's own random-simulation
checks with serialisation, lockstep with the PettingZoo env, sealed information states, resampling, and OpenSpiel's
search bots as agents through the arena. Everything that needs OpenSpiel skips (with the reason) without the extra
``openspiel``; the check that the project works without it always runs."""

from __future__ import annotations

import importlib.util
import pickle
import subprocess
import sys

import numpy as np
import pytest

from helpers.knob_cases import COMBINED_20, COMBINED_24, KNOBS_10, KNOBS_20, KNOBS_24
from schnapsen_env import schnapsen_v0
from schnapsen_env.errors import IllegalActionError, RulesError
from schnapsen_env.rules import PLAYERS
from schnapsen_env.ruleset import RuleSet

HAS_OPENSPIEL = importlib.util.find_spec("pyspiel") is not None
needs_openspiel = pytest.mark.skipif(not HAS_OPENSPIEL, reason="OpenSpiel is the optional extra 'openspiel' "
                                                               "(bash scripts/bootstrap.sh --extras openspiel)")
if HAS_OPENSPIEL:
    import pyspiel

    from schnapsen_env import openspiel as sos

KNOBS = {"schnapsen20": KNOBS_20, "sixtysix24": KNOBS_24, "schnapsen10": KNOBS_10}


def _deal(state, deal) -> None:
    """Apply the chance outcomes of an engine deal ``(deck order, dealer)``: the dealer, then the cards."""
    order, dealer = deal
    state.apply_action(dealer)
    for card in order:
        state.apply_action(card)


def _random_state(game, rng, steps: int):
    """A state after a random deal and up to ``steps`` random actions (stops before the end)."""
    state = game.new_initial_state()
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[rng.integers(len(outcomes))][0])
    for _ in range(steps):
        legal = state.legal_actions()
        child = state.child(legal[rng.integers(len(legal))])
        if child.is_terminal():
            break
        state = child
    return state


# ------------------------------------------------------------------------------------------- loading
@needs_openspiel
def test_load_game_by_name_with_defaults():
    game = pyspiel.load_game("python_schnapsen")
    assert game.rules == RuleSet.make("schnapsen20")
    assert game.num_distinct_actions() == 27 and game.num_players() == 2
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-3.0, 3.0, 0.0)
    assert game.observation_tensor_shape() == [255]
    assert game.information_state_tensor_shape() == [255 + sos.max_events(game.rules) * (2 + 27 + 20)]
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC


@needs_openspiel
@pytest.mark.parametrize("text, rules", [
    ("python_schnapsen(ruleset=sixtysix24)", RuleSet.make("sixtysix24")),
    ("python_schnapsen(ruleset=sixtysix24,must_head=1,exchange_rank=J,tie=none)",
     RuleSet.make("sixtysix24", must_head=True, exchange_rank="J", tie="none")),
    ("python_schnapsen(must_head=0,false_claim=pagat,close_min_stock=2,marriage_on_opening_lead=0)",
     RuleSet.make("schnapsen20", must_head=False, false_claim="pagat", close_min_stock=2,
                  marriage_on_opening_lead=False)),
    ("python_schnapsen(ruleset=sixtysix24,exchange_rank=nine,last_trick_bonus=0)",
     RuleSet.make("sixtysix24", last_trick_bonus=0)),
])
def test_load_game_with_parameters(text, rules):
    game = pyspiel.load_game(text)
    assert game.rules == rules
    assert game.num_distinct_actions() == rules.n_actions
    # the game's own string (all knobs spelled out) loads the same rules: what serialisation relies on
    assert pyspiel.load_game(str(game)).rules == rules
    assert sos.load_game(rules).rules == rules
    assert sos.rules_from_params(sos.params_from_rules(rules)) == rules


@needs_openspiel
def test_parameters_cover_every_knob_of_rules_md():
    knobs = set(RuleSet.make("schnapsen20").knobs()) | set(RuleSet.make("sixtysix24").knobs())
    assert set(sos.PARAMETERS) == knobs | {"ruleset"}
    assert pyspiel.load_game("python_schnapsen", {"ruleset": "sixtysix24", "exchange_rank": "9"}).rules == \
        RuleSet.make("sixtysix24")


@needs_openspiel
@pytest.mark.parametrize("text, error, words", [
    ("python_schnapsen(ruleset=skat)", RulesError, ["ruleset", "schnapsen20", "sixtysix24"]),
    ("python_schnapsen(false_claim=maybe)", RulesError, ["false_claim", "reject", "mirror", "pagat"]),
    ("python_schnapsen(must_head=2)", RulesError, ["must_head", "-1", "0", "1"]),
    ("python_schnapsen(close_min_stock=11)", RulesError, ["close_min_stock", "2 to"]),
    ("python_schnapsen(tie=carry)", RulesError, ["tie", "no effect"]),
    ("python_schnapsen(ruleset=sixtysix24,unclaimed_last_trick_value=one)", RulesError,
     ["unclaimed_last_trick_value"]),
    ("python_schnapsen(exchange_rank=nine)", RulesError, ["exchange_rank", "no nines"]),
    ("python_schnapsen(must_head=true)", pyspiel.SpielError if HAS_OPENSPIEL else None, ["must_head", "kInt"]),
    ("python_schnapsen(colour=red)", pyspiel.SpielError if HAS_OPENSPIEL else None, ["colour", "must_head"]),
])
def test_bad_parameters_name_the_key_and_the_allowed_values(text, error, words):
    with pytest.raises(error) as info:
        pyspiel.load_game(text)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@needs_openspiel
def test_rules_from_params_refuses_unknown_keys_directly():
    with pytest.raises(RulesError, match="colour"):
        sos.rules_from_params({"colour": "red"})


# ------------------------------------------------------------------------------ OpenSpiel's own checks
@needs_openspiel
@pytest.mark.parametrize("ruleset, knobs", [("schnapsen20", {}), ("sixtysix24", {}),
                                            ("schnapsen20", COMBINED_20), ("sixtysix24", COMBINED_24),
                                            ("schnapsen20", {"claim_mode": "auto", "false_claim": "pagat"})])
def test_random_sim_test_with_serialisation(ruleset, knobs):
    game = sos.load_game(ruleset, **knobs)
    pyspiel.random_sim_test(game, num_sims=15, serialize=True, verbose=False)


@needs_openspiel
def test_clone_serialise_and_pickle_keep_the_state():
    game = sos.load_game("sixtysix24")
    rng = np.random.default_rng(3)
    for steps in (0, 5, 12, 40):
        state = _random_state(game, rng, steps)
        text = pyspiel.serialize_game_and_state(game, state)
        game2, state2 = pyspiel.deserialize_game_and_state(text)
        for copy in (state.clone(), state2, pickle.loads(pickle.dumps(state))):
            assert str(copy) == str(state) and copy.history() == state.history()
            for p in (0, 1):
                assert copy.information_state_string(p) == state.information_state_string(p)
                assert copy.observation_tensor(p) == state.observation_tensor(p)
        clone = state.clone()
        if not clone.is_terminal():
            clone.apply_action(clone.legal_actions()[0])
            assert str(clone) != str(state)  # the clone is independent


@needs_openspiel
def test_chance_nodes_deal_card_by_card_uniformly():
    game = sos.load_game("schnapsen20")
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(1)
    for k in range(20):
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 20 - k and all(p == pytest.approx(1 / (20 - k)) for _, p in outcomes)
        state.apply_action(outcomes[-1][0])
    assert state.current_player() == 0  # the non-dealer leads (R1)
    assert state.game_state.deal == (tuple(range(19, -1, -1)), 1)


@needs_openspiel
def test_illegal_actions_raise_and_change_nothing():
    game = sos.load_game("schnapsen20")
    state = _random_state(game, np.random.default_rng(0), 3)
    before = str(state)
    illegal = next(a for a in range(game.num_distinct_actions()) if a not in state.legal_actions())
    with pytest.raises((IllegalActionError, pyspiel.SpielError, RuntimeError)):
        state.apply_action(illegal)
    assert str(state) == before


# ----------------------------------------------------------------------------------------- lockstep
@needs_openspiel
@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_lockstep_with_the_pettingzoo_env(ruleset):
    """Legal actions, observations, results and returns agree with the AEC env over 300 seeded hands of random
    play, each under a knob set drawn at random from tests/knob_cases.py."""
    rng = np.random.default_rng(15)
    games: dict = {}
    for hand in range(300):
        knobs = KNOBS[ruleset][rng.integers(len(KNOBS[ruleset]))]
        key = tuple(sorted(knobs.items()))
        if key not in games:
            games[key] = sos.load_game(ruleset, **knobs)
        game = games[key]
        env = schnapsen_v0.raw_env(ruleset=ruleset, **knobs)
        env.reset(seed=1000 + hand)
        state = game.new_initial_state()
        _deal(state, env.game.deal)
        while not state.is_terminal():
            agent = env.agent_selection
            player = state.current_player()
            assert agent == PLAYERS[player]
            obs = env.observe(agent)
            legal = state.legal_actions()
            assert legal == np.flatnonzero(obs["action_mask"]).tolist()
            for p in (0, 1):
                assert np.array_equal(np.asarray(state.observation_tensor(p), dtype=np.float32),
                                      env.observe(PLAYERS[p])["observation"])
            action = legal[rng.integers(len(legal))]
            state.apply_action(action)
            env.step(action)
        assert all(env.terminations.values())
        result = env.game.result
        assert state.game_state.result == result
        assert state.returns() == [float(env._cumulative_rewards[a]) for a in PLAYERS]
        assert sum(state.returns()) == 0.0


# --------------------------------------------------------------------------------- sealed information
def _swap_worlds(state, player, rng, n: int):
    """Up to ``n`` states of the same hand in which two cards ``player`` has not seen trade places in the deal,
    replayed with the same actions (worlds where an action turns illegal are skipped)."""
    game = state.get_game()
    deck = list(state.game_state.deal[0])
    dealer = state.game_state.deal[1]
    unseen = [k for k, c in enumerate(deck) if state.unseen_cards(player) >> c & 1]
    out = []
    for _ in range(50):
        if len(out) == n or len(unseen) < 2:
            break
        i, j = rng.choice(unseen, size=2, replace=False)
        swapped = list(deck)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        world = game.new_initial_state()
        _deal(world, (swapped, dealer))
        ok = True
        for a in state.game_state.actions:
            if a not in world.legal_actions():
                ok = False
                break
            world.apply_action(a)
        if ok:
            out.append(world)
    return out


@needs_openspiel
@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_information_states_are_sealed(ruleset):
    """Swapping two cards a player has not seen (the opponent's hidden hand, the stock order) changes none of its
    information state and observation, strings and tensors; the opponent's does change (the test can fail)."""
    game = sos.load_game(ruleset)
    rng = np.random.default_rng(27)
    opponent_changed = 0
    for _trial in range(40):
        state = _random_state(game, rng, int(rng.integers(0, 25)))
        if state.is_terminal():
            continue
        player = int(rng.integers(2))
        for world in _swap_worlds(state, player, rng, 3):
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.information_state_tensor(player) == state.information_state_tensor(player)
            assert world.observation_string(player) == state.observation_string(player)
            assert world.observation_tensor(player) == state.observation_tensor(player)
            opponent_changed += world.information_state_string(1 - player) != \
                state.information_state_string(1 - player)
    assert opponent_changed > 20


@needs_openspiel
def test_information_state_has_perfect_recall_of_the_order_of_draws():
    """Two hands whose observations agree now but whose draws came in another order have different information
    states (the observation alone forgets the order)."""
    game = sos.load_game("schnapsen20")
    rng = np.random.default_rng(5)
    found = False
    for _ in range(200):
        state = _random_state(game, rng, 12)
        tensor = np.asarray(state.information_state_tensor(0))
        history = tensor[255:].reshape(sos.max_events(game.rules), -1)
        draws = [row for row in history if row[0] == 1 and row[2 + 27:].any()]
        if len(draws) >= 2:
            found = True
            assert "me:draw" in state.information_state_string(0)
            break
    assert found


@needs_openspiel
@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_resample_from_infostate_keeps_the_information_state(ruleset):
    game = sos.load_game(ruleset, claim_mode="auto") if ruleset == "schnapsen20" else sos.load_game(ruleset)
    rng = np.random.default_rng(8)
    varied = 0
    # schnapsen10 hides cards during trick 1 only (afterwards each player can tell the other's hand, RS2)
    max_steps = 2 if ruleset == "schnapsen10" else 25
    for _ in range(25):
        state = _random_state(game, rng, int(rng.integers(0, max_steps)))
        if state.is_terminal():
            continue
        player = state.current_player()
        for _ in range(4):
            world = state.resample_from_infostate(player, rng)
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.information_state_tensor(player) == state.information_state_tensor(player)
            assert world.legal_actions() == state.legal_actions()
            varied += str(world) != str(state)
    assert varied > 30


@needs_openspiel
def test_a_loaded_state_searches_like_the_engine():
    from schnapsen_env.sampler import Determinizer

    env = schnapsen_v0.raw_env()
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(6):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    obs = env.observe(env.agent_selection)
    game = sos.load_game("schnapsen20")
    state = game.new_state_from(Determinizer(obs, game.rules).sample(rng))
    assert state.current_player() == 0 and state.legal_actions() == np.flatnonzero(obs["action_mask"]).tolist()
    for _ in range(5):
        world = state.resample_from_infostate(0, rng)
        assert world.information_state_string(0) == state.information_state_string(0)
    copy = pickle.loads(pickle.dumps(state))
    assert str(copy) == str(state) and copy.information_state_string(0) == state.information_state_string(0)
    with pytest.raises(ValueError, match="played under"):
        sos.load_game("schnapsen20", must_head=False).new_state_from(state.game_state)


# ------------------------------------------------------------------------------------------ the bots
@needs_openspiel
def test_openspiel_ismcts_runs_on_the_dealt_game():
    """OpenSpiel's Python ISMCTS on a dealt state (resampling replays the deal and the actions)."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = sos.load_game("schnapsen20")
    rng = np.random.default_rng(2)
    state = _random_state(game, rng, 9)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), 2.0, 30,
                           random_state=np.random.RandomState(1))
    bot.set_resampler(lambda s, p: s.resample_from_infostate(p, rng))
    assert bot.step(state) in state.legal_actions()


@needs_openspiel
@pytest.mark.parametrize("name, ruleset, knobs", [
    ("openspiel-ismcts", "schnapsen20", {}),
    ("openspiel-ismcts", "sixtysix24", {"must_head": True}),
    ("openspiel-mcts", "schnapsen20", {"claim_mode": "auto"}),
])
def test_search_bots_play_legal_actions_through_the_arena(name, ruleset, knobs):
    from agents.evaluation.arena import play_match

    spec = f"{name}:simulations=40"
    first = play_match(spec, "heuristic", 2, ruleset=ruleset, seed=3, workers=1, progress=False, **knobs)
    again = play_match(spec, "heuristic", 2, ruleset=ruleset, seed=3, workers=1, progress=False, **knobs)
    assert first.hands == 4  # the arena raises IllegalActionError on an illegal action
    assert (first.mean, first.hands_won_a, first.ties) == (again.mean, again.hands_won_a, again.ties)  # seeded


@needs_openspiel
def test_search_bots_follow_the_agent_contract():
    from agents import agent_names, make_agent

    assert {"openspiel-ismcts", "openspiel-mcts"} <= set(agent_names())
    rules = RuleSet.make("sixtysix24", tie="last_trick")
    for name in ("openspiel-ismcts", "openspiel-mcts"):
        agent = make_agent(name, rules, seed=1, simulations=10)
        assert agent.rules is rules and agent.name == name
        with pytest.raises(TypeError, match="rules"):
            make_agent(name, None)
        with pytest.raises(ValueError, match="simulations"):
            make_agent(name, rules, simulations=0)


def test_the_project_works_without_openspiel():
    """With pyspiel blocked, the env and the agents import, the OpenSpiel agents are not registered, and asking
    for one names the extra to install."""
    code = (
        "import sys; sys.modules['pyspiel'] = None\n"
        "import schnapsen_env, agents\n"
        "from schnapsen_env import schnapsen_v0\n"
        "schnapsen_v0.env().reset(seed=0)\n"
        "assert 'openspiel-ismcts' not in agents.agent_names(), agents.agent_names()\n"
        "for call in (lambda: agents.make_agent('openspiel-ismcts', 'schnapsen20'),\n"
        "             lambda: __import__('agents.specs').specs.resolve_agent('openspiel-mcts', 'schnapsen20')):\n"
        "    try:\n"
        "        call()\n"
        "    except (ValueError, AttributeError) as e:\n"
        "        print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "needs OpenSpiel" in out.stdout and "--extras openspiel" in out.stdout


@needs_openspiel
def test_schnapsen_play_and_the_arena_resolve_the_names_with_options():
    from agents.specs import resolve_agent

    rules = RuleSet.make("schnapsen20", must_head=False)
    for spec in ("openspiel-ismcts:simulations=20,uct_c=1.5", "openspiel-mcts:simulations=8,worlds=2"):
        label, factory = resolve_agent(spec, rules)
        agent = factory(seed=0)
        assert agent.rules == rules and agent.simulations in (20, 8)
    with pytest.raises(ValueError, match="depth"):
        resolve_agent("openspiel-ismcts:depth=2", rules)


@needs_openspiel
@pytest.mark.parametrize("ruleset", ["schnapsen20", "schnapsen10"])
def test_states_cloned_during_the_deal_keep_their_own_information_states_bug(ruleset):
    """Children of one chance node (OpenSpiel's tree walks clone them: best response, CFR) each name their own
    dealt hand in the information state string. The cached start of the string was once shared with every clone,
    also with those cloned before the deal was complete, so that siblings reported the first-dealt sibling's hand."""
    game = sos.load_game(ruleset)
    rules = game.rules
    dealers_last = 7 + 2 * (rules.hand_size - 3) - 1  # deal position of the dealer's last card (R2, RS2)
    state = game.new_initial_state()
    state.apply_action(1)  # seat 1 deals
    for card in range(dealers_last):
        state.apply_action(card)
    children = [state.child(c) for c, _ in state.chance_outcomes()]  # every dealer's last card
    for child in children:
        while child.is_chance_node():
            child.apply_action(child.chance_outcomes()[0][0])
    strings = set()
    for child in children:
        gs = child.game_state
        for seat in (0, 1):
            s = child.information_state_string(seat)
            hand = " ".join(rules.deck.codes[c] for c in range(rules.n_cards) if gs.hands[seat] >> c & 1)
            assert f"hand:[{hand}]" in s, (s, hand)
            strings.add(s)
    assert len(strings) == len(children) + 1  # the dealer's hands differ; the non-dealer's is the same
