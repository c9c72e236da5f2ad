"""``train_rllib.py`` and :mod:`agents.training.rllib_module` (extra "rllib"; skipped without Ray).

A tiny training run on a local single-node Ray (one remote env runner) must finish with every action legal
(the env refuses an illegal action, and a failed env runner is not restarted), write a checkpoint that
``PolicyAgent`` loads, and a policy that then plays legal actions only. A module that forgets the mask must
make training fail.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from agents.evaluation.arena import play_match  # noqa: E402
from agents.learned.policy import PolicyAgent  # noqa: E402
from agents.scripted.heuristic import HeuristicAgent  # noqa: E402
from agents.training import rllib_module as rm  # noqa: E402
from agents.training.command_line import cli  # noqa: E402
from helpers.scripts import load_script  # noqa: E402
from schnapsen_env import IllegalActionError, RuleSet, schnapsen_v0  # noqa: E402

train = load_script("train.py")
train_rllib = load_script("train_rllib.py")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _tiny(tmp_path, **kw):
    base = dict(total_steps=2000, batch_size=1000, minibatch_size=250, update_epochs=2,
                env_runners=1, pool_size=2, pool_every=1, final_eval_deals=10, final_eval_opponents=("random",),
                eval_workers=1, run_dir=str(tmp_path), run_name="rl", progress=False, tensorboard=False)
    base.update(kw)
    return train_rllib.RLlibArgs(**base)


def _observations(n, seed):
    """Observations of random play (both seats), as the env gives them."""
    env = schnapsen_v0.raw_env()
    rng = np.random.default_rng(seed)
    out = []
    hand = 0
    while len(out) < n:
        env.reset(seed=seed + hand)
        hand += 1
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            out.append(obs)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out[:n]


def _batch(observations):
    return {Columns.OBS: {"observation": torch.as_tensor(np.stack([o["observation"] for o in observations])),
                          "action_mask": torch.as_tensor(np.stack([o["action_mask"] for o in observations]))}}


def _module():
    env = rm.make_env({})
    return rm.MaskedActorCriticModule(observation_space=env.observation_space["player_0"],
                                      action_space=env.action_space["player_0"],
                                      model_config={"hidden": 32, "layers": 1})


def _unmasked_forward(self, batch, **kwargs):
    """A broken module: uniform over all actions, mask ignored."""
    x, _ = self._split(batch)
    h = self.net.trunk(x)
    return {Columns.ACTION_DIST_INPUTS: self.net.policy(h) * 0.0, Columns.EMBEDDINGS: h}


def test_module_puts_no_probability_on_illegal_actions():
    torch.manual_seed(0)
    module = _module()
    obs = _observations(300, seed=5)
    batch = _batch(obs)
    out = module.forward_exploration(batch)
    probs = torch.softmax(out[Columns.ACTION_DIST_INPUTS], dim=-1)
    mask = batch[Columns.OBS]["action_mask"].bool()
    assert torch.all(probs[~mask] == 0)
    assert torch.allclose(probs.sum(-1), torch.ones(len(obs)))
    values = module.compute_values(_batch(obs))
    assert values.shape == (len(obs),)
    # the wrapped network is the project's ActorCritic: same logits on the legal actions
    logits = module.net.act_logits(batch[Columns.OBS]["observation"].float())
    assert torch.allclose(out[Columns.ACTION_DIST_INPUTS][mask], logits[mask])


def test_heuristic_module_plays_as_the_heuristic_agent():
    obs = _observations(200, seed=9)
    env = rm.make_env({})
    module = rm.HeuristicModule(observation_space=env.observation_space["player_0"],
                                action_space=env.action_space["player_0"],
                                model_config={"seed": 3, "rules": RuleSet.make("schnapsen20").to_dict()})
    actions = module.forward_inference(_batch(obs))[Columns.ACTIONS]
    ref = HeuristicAgent("schnapsen20", seed=3)
    assert [int(a) for a in actions] == [ref.act(o) for o in obs]
    assert all(o["action_mask"][a] for o, a in zip(obs, actions))
    with pytest.raises(RuntimeError, match="not trainable"):
        module.forward_train(_batch(obs))


def test_strict_env_refuses_an_illegal_action_and_keeps_state():
    env = rm.make_env({})
    obs, _ = env.reset(seed=4)
    (agent, o), = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    before = env.env.observe(agent)
    with pytest.raises(IllegalActionError, match=f"illegal action {illegal} for {agent}"):
        env.step({agent: illegal})
    after = env.env.observe(agent)
    assert np.array_equal(before["observation"], after["observation"])
    with pytest.raises(ValueError, match="expected a dict with an action for"):
        env.step({"player_9": 0})
    with pytest.raises(ValueError, match="must be an int, got None"):
        env.step({agent: None})
    # play the hand out, then a step is refused as such
    while env.env.agents:
        a = env.env.agent_selection
        env.step({a: int(np.flatnonzero(env.env.observe(a)["action_mask"])[0])})
    with pytest.raises(ValueError, match="the hand is over"):
        env.step({agent: 0})


def test_policy_mapping_shares_and_determinism():
    fn = rm.make_policy_mapping_fn(pool_size=3, pool_prob=0.3, heuristic_prob=0.2, seed=5)
    kinds = Counter()
    seats = Counter()
    for i in range(6000):
        eid = f"episode-{i}"
        pair = (fn("player_0", eid), fn("player_1", eid))
        assert pair == (fn("player_1", eid) and fn("player_0", eid), fn("player_1", eid))  # one draw per episode
        assert rm.MAIN in pair  # the learner plays every hand
        other = [m for m in pair if m != rm.MAIN]
        kinds["self" if not other else ("heuristic" if other[0] == rm.HEURISTIC else "pool")] += 1
        if other:
            seats[pair.index(other[0])] += 1
            assert other[0] in {rm.HEURISTIC, *(rm.opponent_id(k) for k in range(3))}
    assert abs(kinds["pool"] / 6000 - 0.3) < 0.03
    assert abs(kinds["heuristic"] / 6000 - 0.2) < 0.03
    assert abs(seats[0] / sum(seats.values()) - 0.5) < 0.04  # the opponent takes either seat
    only_self = rm.make_policy_mapping_fn(pool_size=3, pool_prob=0.0, heuristic_prob=0.0)
    assert {only_self(a, f"e{i}") for i in range(200) for a in ("player_0", "player_1")} == {rm.MAIN}


def test_policy_mapping_follows_the_seed_not_the_random_episode_ids():
    """RLlib's episode ids are random UUIDs: the mapping must depend on the seed and the order of episodes only."""
    import uuid

    def sequence(seed):
        fn = rm.make_policy_mapping_fn(pool_size=4, pool_prob=0.4, heuristic_prob=0.3, seed=seed)
        out = []
        for _ in range(300):
            eid = uuid.uuid4().hex
            out.append((fn("player_0", eid), fn("player_1", eid)))
        return out

    assert sequence(1) == sequence(1)
    assert sequence(1) != sequence(2)


def test_make_env_refuses_unknown_config_keys():
    with pytest.raises(ValueError, match=r"unknown env_config key\(s\) \['rulset'\]"):
        rm.make_env({"rulset": "sixtysix24"})
    env = rm.make_env({"ruleset": "sixtysix24"})
    assert env.action_space["player_0"].n == 31


def test_rllib_flags_are_checked(tmp_path):
    with pytest.raises(ValueError, match="--env-runners"):
        train_rllib.validate(_tiny(tmp_path, env_runners=-1))
    with pytest.raises(ValueError, match="--update-epochs must be >= 1"):
        train_rllib.validate(_tiny(tmp_path, update_epochs=0))
    with pytest.raises(ValueError, match="needs 99 CPUs"):
        train_rllib.validate(_tiny(tmp_path, env_runners=99))
    train_rllib.validate(_tiny(tmp_path, env_runners=99, ray_address="auto"))  # a cluster may have them
    for kw in [{"learning_rate": -1.0}, {"learning_rate": float("nan")}, {"gamma": 1.5}, {"gamma": 0.0},
               {"gae_lambda": -2.0}, {"clip_coef": -0.2}, {"ent_coef": float("inf")}, {"max_grad_norm": -1.0},
               {"vf_coef": -1.0}]:
        (name,) = kw
        with pytest.raises(ValueError, match=f"--{name.replace('_', '-')} must be a finite number in"):
            train_rllib.validate(_tiny(tmp_path, **kw))
    # train.py's own flags are not flags of train_rllib.py: its command line refuses them in one line
    assert train.cli(["--env-runners", "2"]) == 2
    assert cli(["--privileged-critic"], train_rllib.RLlibArgs, "train_rllib.py", train_rllib.main) == 2


@pytest.mark.slow
def test_tiny_rllib_training_run_is_legal_and_loads(tmp_path, local_ray):
    summary = train_rllib.main(_tiny(tmp_path, heuristic_prob=0.3, tensorboard=True))
    assert summary["steps"] >= 2000 and summary["iterations"] >= 2
    run = tmp_path / "rl"
    assert list(run.glob("events.out.tfevents.*"))  # TensorBoard logs
    agent = PolicyAgent.load(run / "policy.pt", rules="schnapsen20")
    adapted = rm.load_rllib_policy(run / "rllib_checkpoint")
    mine, theirs = agent.model.state_dict(), adapted.model.state_dict()
    assert mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in mine)
    # the opponent mix really played: pool snapshots and the heuristic took seats
    steps = summary["module_steps"]
    assert steps.get(rm.HEURISTIC, 0) > 0 and sum(v for k, v in steps.items() if k.startswith("opponent_")) > 0
    assert steps[rm.MAIN] > steps[rm.HEURISTIC]
    # the learned policy plays only legal actions (the arena's env raises on an illegal one)
    res = play_match(str(run / "policy.pt"), "random", n_deals=10, seed=3, workers=1, progress=False)
    assert res.hands == 20
    assert summary["evaluation"]["random"]["hands"] == 20


def test_unmasked_module_makes_training_fail(tmp_path, local_ray, monkeypatch):
    """The legality check can fail: a module that ignores the mask stops the run with IllegalActionError."""

    monkeypatch.setattr(rm.MaskedActorCriticModule, "_forward", _unmasked_forward)
    with pytest.raises(Exception) as info:
        train_rllib.main(_tiny(tmp_path, env_runners=0, total_steps=1000, batch_size=500, minibatch_size=250))
    chain, e = [], info.value
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    assert any(isinstance(c, IllegalActionError) for c in chain)


def test_seeded_rllib_runs_are_reproducible(tmp_path, local_ray):
    """Same seed, same weights, with the opponent pool and the heuristic in the mix (one local env runner)."""
    weights = []
    for name in ("a", "b"):
        train_rllib.main(_tiny(tmp_path, run_name=name, env_runners=0, heuristic_prob=0.3, pool_prob=0.3,
                         final_eval_deals=0))
        weights.append(PolicyAgent.load(tmp_path / name / "policy.pt").model.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_load_rllib_policy_refuses_bad_folders(tmp_path):
    from agents.learned.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="is not an RLlib checkpoint"):
        rm.load_rllib_policy(tmp_path)
    with pytest.raises(CheckpointError, match="module_id must be a module name"):
        rm.load_rllib_policy(tmp_path, module_id="..")
    broken = tmp_path / "learner_group" / "learner" / "rl_module" / "main"
    broken.mkdir(parents=True)
    (broken / "class_and_ctor_args.pkl").write_bytes(b"not a pickle")
    with pytest.raises(CheckpointError, match="cannot load RLlib module 'main'"):
        rm.load_rllib_policy(tmp_path)
