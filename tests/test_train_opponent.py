"""train.py --opponent/--opponent-prob: hands against a frozen target policy (a learned best response), their share,
reproducibility and an exact --resume, one-line refusals; --random-prob: hands against a uniformly random player
(exploration for the teachers); and benchmarks/learned_best_response.py's bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.learned.checkpoint import load_checkpoint, save_atomic
from agents.learned.policy_net import ActorCritic
from agents.search.solver_core import CoreSolver
from agents.training.self_play import OPPONENT_KINDS, Sampler, uniform_actions
from helpers.scripts import ROOT, load_script
from helpers.training import tiny_args, tiny_argv
from schnapsen_env import RuleSet
from schnapsen_env.encoding import obs_size
from schnapsen_env.state_layout import F

train = load_script("train.py")
BENCHMARK = ROOT / "benchmarks" / "learned_best_response.py"


def _target(rules: RuleSet, hidden: int = 16) -> dict:
    torch.manual_seed(0)
    net = ActorCritic(obs_size(rules), rules.n_actions, hidden, 1)
    return {"net": net.config(), "weights": net.state_dict()}


def _sampler(rules: RuleSet, target_prob: float, num_envs: int = 32) -> tuple[Sampler, dict]:
    learner = ActorCritic(obs_size(rules), rules.n_actions, 32)  # another size than the target's
    return Sampler(index=0, rules=rules, num_envs=num_envs, seed=5, net=learner.config(), rows_per_call=512,
                   pool_prob=0.0, heuristic_prob=0.0, gamma=1.0, gae_lambda=0.95, threads=1,
                   target=_target(rules), target_prob=target_prob), learner.state_dict()


def test_every_hand_after_the_first_is_against_the_target_at_share_one():
    """A hand's opponent is drawn when the previous hand in its slot ends; the first hand of each slot is
    self-play, every later one is against the target, in one seat or the other."""
    rules = RuleSet.make("schnapsen10")
    sampler, weights = _sampler(rules, 1.0)
    hands = target = 0
    for _ in range(6):
        _, st = sampler.collect(weights, None, 512)
        hands, target = hands + st["hands"], target + st["target_hands"]
    assert hands - target == sampler.num_envs  # every slot's first hand has ended, and only those were self-play
    assert set(sampler.opp_kind.tolist()) == {2} and set(sampler.opp_seat.tolist()) == {0, 1}


def test_the_target_plays_its_stated_share_of_hands_and_only_the_learner_seat_is_trained():
    rules = RuleSet.make("schnapsen10")
    sampler, weights = _sampler(rules, 0.25)
    hands = target = 0
    decisions = rows = 0
    for _ in range(20):
        batch, st = sampler.collect(weights, None, 512)
        hands, target = hands + st["hands"], target + st["target_hands"]
        decisions, rows = decisions + st["decisions"], rows + len(batch["actions"])
    drawn = hands - sampler.num_envs  # hands whose opponent was drawn (the slots' first hands were not)
    sd = np.sqrt(drawn * 0.25 * 0.75)
    assert drawn > 1000 and abs(target - 0.25 * drawn) < 4 * sd, (target, drawn)
    assert rows <= decisions  # the batch holds the learner's decisions only (the target's are not rows)


def test_target_share_zero_draws_as_before():
    """--opponent-prob 0 consumes the generator as a run without the flag: the same hands, the same draws."""
    rules = RuleSet.make("schnapsen10")
    a, weights = _sampler(rules, 0.0)
    b = Sampler(index=0, rules=rules, num_envs=32, seed=5, net=ActorCritic(obs_size(rules), rules.n_actions,
                                                                             32).config(), rows_per_call=512,
                pool_prob=0.0, heuristic_prob=0.0, gamma=1.0, gae_lambda=0.95, threads=1)
    for _ in range(3):
        (ba, sa), (bb, sb) = a.collect(weights, None, 512), b.collect(weights, None, 512)
        assert sa["hands"] == sb["hands"] and sa["target_hands"] == 0
        np.testing.assert_array_equal(ba["actions"], bb["actions"])


@pytest.fixture(scope="module")
def target_pt(tmp_path_factory):
    """A tiny schnapsen20 policy of another network size than the learner's (hidden 16 against 32)."""
    tmp = tmp_path_factory.mktemp("target")
    train.main(tiny_args(tmp, run_name="target", total_steps=1000, hidden=16, layers=1))
    return str(tmp / "target" / "policy.pt")


def _br(tmp_path, target_pt, **kw):
    return tiny_args(tmp_path, opponent=target_pt, opponent_prob=1.0, pool_prob=0.0, heuristic_prob=0.0, **kw)


@pytest.mark.slow
def test_a_best_response_run_is_reproducible_and_resumes_exactly(tmp_path, target_pt):
    a = train.main(_br(tmp_path, target_pt, run_name="a", total_steps=3000))
    b = train.main(_br(tmp_path, target_pt, run_name="b", total_steps=3000))
    assert a["target_hands"] > 0 and a["target_hands"] == b["target_hands"]
    assert a["target_points_per_hand"] == b["target_points_per_hand"]
    stopped = train.main(_br(tmp_path, target_pt, run_name="split", total_steps=3000, stop_after_updates=1))
    assert stopped["steps"] < 3000
    path = tmp_path / "split" / "checkpoint.pt"
    assert load_checkpoint(path)["args"]["opponent"] == target_pt  # the checkpoint records the flag
    train.main(train.Args(resume=str(path), threads=1))
    ma, mb = load_checkpoint(tmp_path / "a" / "policy.pt")["model"], load_checkpoint(tmp_path / "b" / "policy.pt")
    ms = load_checkpoint(tmp_path / "split" / "policy.pt")["model"]
    for k in ma:
        torch.testing.assert_close(ma[k], mb["model"][k], rtol=0, atol=0)
        torch.testing.assert_close(ma[k], ms[k], rtol=0, atol=0)
    c = load_checkpoint(tmp_path / "split" / "checkpoint.pt")["trainer"]
    assert c["hands"] == load_checkpoint(tmp_path / "a" / "checkpoint.pt")["trainer"]["hands"]


@pytest.mark.slow
def test_a_checkpoint_from_before_the_flag_resumes_without_a_target(tmp_path):
    train.main(tiny_args(tmp_path, total_steps=3000, stop_after_updates=1))
    path = tmp_path / "tiny" / "checkpoint.pt"
    ck = load_checkpoint(path)
    for name in ("opponent", "opponent_prob", "random_prob", "opponent_greedy", "init_from"):  # as written before
        del ck["args"][name]
    save_atomic(ck, path)
    out = train.main(train.Args(resume=str(path), tensorboard=False, progress=False))
    assert out["steps"] >= 3000 and out["target_hands"] == 0
    args = load_checkpoint(path)["args"]
    assert args["opponent"] is None and args["random_prob"] == 0.0 and args["opponent_greedy"] is False
    assert args["init_from"] is None


@pytest.mark.parametrize("flags, message", [
    (dict(opponent="no/such.pt", opponent_prob=1.0, pool_prob=0.0, heuristic_prob=0.0),
     "--opponent 'no/such.pt': no such file and no shipped policy of that name"),
    (dict(opponent="trained-schnapsen10", opponent_prob=1.0, pool_prob=0.0, heuristic_prob=0.0),
     "--opponent 'trained-schnapsen10': checkpoint"),  # a policy of another ruleset than schnapsen20
    (dict(opponent="trained-220m", opponent_prob=1.5, pool_prob=0.0, heuristic_prob=0.0),
     "--opponent-prob must be a share from 0 to 1, got 1.5"),
    (dict(opponent="trained-220m", opponent_prob=-0.1), "--opponent-prob must be a share from 0 to 1"),
    (dict(opponent="trained-220m", opponent_prob=0.5, pool_prob=0.3, heuristic_prob=0.3), "sum to 1.1"),
    (dict(opponent="trained-220m"), "expected both"),
    (dict(opponent_prob=0.5, pool_prob=0.0), "expected both"),
    (dict(random_prob=1.5, pool_prob=0.0, heuristic_prob=0.0), "--random-prob must be a share from 0 to 1, got 1.5"),
    (dict(random_prob=float("nan")), "--random-prob must be a share from 0 to 1, got nan"),
    (dict(random_prob=0.5, pool_prob=0.3, heuristic_prob=0.3), "--random-prob 0.5 and --opponent-prob 0.0 sum to 1.1"),
])
def test_bad_opponent_flags_are_one_line_before_any_work(tmp_path, capsys, flags, message):
    status = train.cli(tiny_argv(tmp_path, **flags))
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert message in err, err
    assert not (tmp_path / "tiny").exists()


def test_shares_written_to_total_one_are_accepted_whatever_the_float_rounding():
    from agents.training.trainer_flags import validate
    assert 0.2 + 0.4 + 0.3 + 0.1 > 1  # the float sum rounds above 1
    validate(tiny_args(Path("/nonexistent"), opponent="trained-220m", pool_prob=0.2, heuristic_prob=0.4,
                       random_prob=0.3, opponent_prob=0.1))


# ------------------------------------------------------------------------------------------- a searching target
def test_a_searching_target_plays_the_strategy_whose_exploitability_is_measured():
    """An agent target (``pimc``) plays legal actions, those of the deterministic strategy
    ``exact.search_agent_policy`` makes of a fresh agent (the one ``benchmarks/exploitability.py`` measures): the
    same action on the same observation, in any sampler."""
    from agents.game_theory.exact import search_agent_policy
    from agents.search.pimc import PIMCAgent

    rules = RuleSet.make("schnapsen10")
    learner = ActorCritic(obs_size(rules), rules.n_actions, 32)
    sampler = Sampler(index=0, rules=rules, num_envs=16, seed=5, net=learner.config(), rows_per_call=256,
                      pool_prob=0.0, heuristic_prob=0.0, gamma=1.0, gae_lambda=0.95, threads=1,
                      target={"spec": "pimc:n_samples=4"}, target_prob=1.0)
    asked: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    strategy = sampler.target_strategy

    def recording(obs, masks):
        out = strategy(obs, masks)
        asked.append((obs.copy(), masks.copy(), out.argmax(axis=1)))
        return out

    sampler.target_strategy = recording
    hands = 0
    for _ in range(4):
        _, st = sampler.collect(learner.state_dict(), None, 256)
        hands += st["target_hands"]
    assert hands > 0 and asked
    fresh = search_agent_policy(PIMCAgent(rules, n_samples=4, seed=0))
    obs = np.concatenate([a[0] for a in asked])
    masks = np.concatenate([a[1] for a in asked])
    chosen = np.concatenate([a[2] for a in asked])
    assert (masks[np.arange(len(chosen)), chosen] == 1).all()
    np.testing.assert_array_equal(fresh(obs, masks).argmax(axis=1), chosen)


@pytest.mark.slow
def test_a_best_response_to_a_searching_target_is_reproducible_and_resumes_exactly(tmp_path):
    kw = dict(ruleset="schnapsen10", opponent="pimc:n_samples=4", opponent_prob=1.0, pool_prob=0.0, heuristic_prob=0.0,
              total_steps=3000)
    a = train.main(tiny_args(tmp_path, run_name="a", **kw))
    assert a["target_hands"] > 0
    train.main(tiny_args(tmp_path, run_name="split", stop_after_updates=1, **kw))
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1))
    ma, ms = (load_checkpoint(tmp_path / r / "policy.pt")["model"] for r in ("a", "split"))
    for k in ma:
        torch.testing.assert_close(ma[k], ms[k], rtol=0, atol=0)


# ------------------------------------------------------------------------------------------- --init-from
def test_init_from_a_policy_with_another_critic_takes_its_actor_and_a_fresh_critic(tmp_path, target_pt):
    train.main(tiny_args(tmp_path, run_name="priv", update_epochs=0, total_steps=1000, init_from=target_pt,
                         hidden=16, layers=1, privileged_critic=True))
    fresh = train.main(tiny_args(tmp_path, run_name="fresh", update_epochs=0, total_steps=1000, hidden=16, layers=1,
                                 privileged_critic=True))
    assert fresh["steps"] >= 1000
    got, init, new = (load_checkpoint(p)["model"] for p in (tmp_path / "priv" / "policy.pt", target_pt,
                                                            tmp_path / "fresh" / "policy.pt"))
    for k in got:
        want = new[k] if k.startswith("critic_net.") else init[k]  # the critic as a fresh run's (same seed)
        torch.testing.assert_close(got[k], want, rtol=0, atol=0)
    assert any(k.startswith("critic_net.2") for k in got)  # the privileged critic's own layers



@pytest.mark.slow
def test_a_run_starts_from_the_init_policy_and_resumes_from_its_own_checkpoint(tmp_path, target_pt):
    """--init-from loads the policy's weights (0 PPO epochs leave them as they were); a resumed run continues from
    its checkpoint, not from the init policy, exactly as an unbroken run."""
    kw = dict(init_from=target_pt, hidden=16, layers=1)
    train.main(tiny_args(tmp_path, run_name="same", update_epochs=0, total_steps=1000, **kw))
    got, init = (load_checkpoint(p)["model"] for p in (tmp_path / "same" / "policy.pt", target_pt))
    for k in init:
        torch.testing.assert_close(got[k], init[k], rtol=0, atol=0)
    a = train.main(tiny_args(tmp_path, run_name="a", **kw))
    train.main(tiny_args(tmp_path, run_name="split", stop_after_updates=1, **kw))
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1))
    ma, ms = (load_checkpoint(tmp_path / r / "policy.pt")["model"] for r in ("a", "split"))
    assert a["steps"] >= 3000
    assert any(not torch.equal(ma[k], init[k]) for k in init)  # trained on from the init policy
    for k in ma:
        torch.testing.assert_close(ma[k], ms[k], rtol=0, atol=0)


def test_a_greedy_target_plays_its_most_probable_legal_action():
    rules = RuleSet.make("schnapsen10")
    target = _target(rules) | {"greedy": True}
    learner = ActorCritic(obs_size(rules), rules.n_actions, 32)
    sampler = Sampler(index=0, rules=rules, num_envs=16, seed=5, net=learner.config(), rows_per_call=256,
                      pool_prob=0.0, heuristic_prob=0.0, gamma=1.0, gae_lambda=0.95, threads=1, target=target,
                      target_prob=1.0)
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    step = sampler.venv.step

    def recording(actions):
        seen.append((obs_now[0].copy(), masks_now[0].copy(), actions.copy(), to_move_now[0].copy(),
                     sampler.opp_seat.copy(), sampler.opp_kind.copy()))
        out = step(actions)
        obs_now[0], masks_now[0], to_move_now[0] = out[0], out[1], out[2]
        return out

    obs_now, masks_now, to_move_now = [sampler.obs], [sampler.masks], [sampler.to_move]
    sampler.venv.step = recording
    for _ in range(3):
        sampler.collect(learner.state_dict(), None, 256)
    net = ActorCritic(**target["net"]).eval()
    net.load_state_dict(target["weights"])
    played = 0
    for obs, masks, actions, to_move, opp_seat, opp_kind in seen:
        rows = np.flatnonzero((opp_kind == 2) & (opp_seat == to_move))
        if rows.size:
            with torch.no_grad():
                logits = net.act_logits(torch.from_numpy(obs[rows])).numpy()
            logits[masks[rows] == 0] = -np.inf
            np.testing.assert_array_equal(actions[rows], logits.argmax(axis=1))
            played += rows.size
    assert played > 100


@pytest.mark.parametrize("flags, message", [
    (dict(init_from="no/such.pt"), "--init-from 'no/such.pt': no such file and no shipped policy of that name"),
    (dict(init_from="trained-schnapsen10"), "--init-from 'trained-schnapsen10': checkpoint"),  # another ruleset
    (dict(init_from="trained-220m"), "--init-from 'trained-220m': its network is --hidden 256 --layers 2, this "
                                     "run's --hidden 32 --layers 2"),
    (dict(opponent="nosuchagent", opponent_prob=1.0, pool_prob=0.0, heuristic_prob=0.0),
     "--opponent 'nosuchagent': "),
    (dict(opponent="expert:worlds=0", opponent_prob=1.0, pool_prob=0.0, heuristic_prob=0.0),
     "--opponent 'expert:worlds=0': "),
    (dict(opponent_greedy=True), "--opponent-greedy without --opponent"),
    (dict(opponent="pimc", opponent_greedy=True, opponent_prob=1.0, pool_prob=0.0, heuristic_prob=0.0),
     "--opponent-greedy with the agent --opponent 'pimc'"),
])
def test_bad_init_and_agent_opponents_are_one_line(tmp_path, capsys, flags, message):
    status = train.cli(tiny_argv(tmp_path, **flags))
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert message in err, err
    assert not (tmp_path / "tiny" / "checkpoint.pt").exists()


# ------------------------------------------------------------------------------------------- --random-prob
def test_uniform_actions_are_legal_and_uniform():
    """Each legal action of a row is drawn with probability 1 / (legal actions): chi-square over 30,000 draws."""
    masks = np.zeros((30_000, 6), np.int8)
    masks[:, [0, 2, 5]] = 1
    masks[::2, 3] = 1  # half the rows have a fourth legal action
    a = uniform_actions(np.random.default_rng(0), masks)
    assert masks[np.arange(len(a)), a].all()
    for rows, legal in ((a[1::2], [0, 2, 5]), (a[::2], [0, 2, 3, 5])):
        counts = np.array([(rows == k).sum() for k in legal])
        expected = len(rows) / len(legal)
        chi2 = ((counts - expected) ** 2 / expected).sum()
        assert chi2 < 16.3, counts  # p = 0.001 at 3 degrees of freedom
    np.testing.assert_array_equal(a, uniform_actions(np.random.default_rng(0), masks))  # seeded


def _random_sampler(random_prob: float, **kw) -> tuple[Sampler, dict]:
    rules = RuleSet.make("schnapsen10")
    learner = ActorCritic(obs_size(rules), rules.n_actions, 32)
    return Sampler(index=0, rules=rules, num_envs=32, seed=5, net=learner.config(), rows_per_call=512, pool_prob=0.0,
                   heuristic_prob=0.0, gamma=1.0, gae_lambda=0.95, threads=1, random_prob=random_prob,
                   **kw), learner.state_dict()


def test_the_random_player_plays_its_share_of_hands_and_only_the_learner_seat_is_trained():
    sampler, weights = _random_sampler(0.25)
    hands = random_hands = decisions = rows = 0
    for _ in range(20):
        batch, st = sampler.collect(weights, None, 512)
        assert st["random_hands"] == st["opponent_hands"] and st["target_hands"] == 0  # counted as its own kind
        hands, random_hands = hands + st["hands"], random_hands + st["random_hands"]
        decisions, rows = decisions + st["decisions"], rows + len(batch["actions"])
    drawn = hands - sampler.num_envs  # the slots' first hands are self-play
    sd = np.sqrt(drawn * 0.25 * 0.75)
    assert drawn > 1000 and abs(random_hands - 0.25 * drawn) < 4 * sd, (random_hands, drawn)
    assert set(sampler.opp_kind[sampler.opp_seat >= 0].tolist()) <= {OPPONENT_KINDS.index("random")}
    assert rows <= decisions


def test_against_the_random_player_the_endgame_teacher_labels_the_learner_exactly():
    """Every hand after the first against the random player: the learner's exhausted-stock decisions with a choice
    carry the solver's best actions, recomputed here on the positions the sampler saw."""
    sampler, weights = _random_sampler(1.0, endgame_teacher=True)
    solver = CoreSolver(sampler.rules)
    checked = 0
    for _ in range(30):
        idx = np.arange(sampler.num_envs)
        st = sampler.venv.state_arrays.copy()
        learner = sampler.opp_seat != sampler.to_move
        teach, _ = sampler._teach(idx)
        exhausted = (st[:, F.stock_top] == st[:, F.stock_end]) & (st[:, F.closed_by] < 0)
        rows = np.flatnonzero(learner & exhausted & (sampler.masks.sum(axis=1) > 1) & (sampler.opp_seat >= 0))
        if len(rows):
            np.testing.assert_array_equal(teach[rows], solver.best_action_bits(st, rows))
            checked += len(rows)
        sampler.collect(weights, None, 32)
    assert checked > 100


@pytest.mark.slow
def test_a_run_with_the_random_player_is_reproducible_and_resumes_exactly(tmp_path):
    kw = dict(total_steps=3000, random_prob=0.5, pool_prob=0.0, heuristic_prob=0.0)
    a = train.main(tiny_args(tmp_path, run_name="a", **kw))
    assert a["random_hands"] > 0 and a["target_hands"] == 0 and -3 <= a["random_points_per_hand"] <= 3
    train.main(tiny_args(tmp_path, run_name="split", stop_after_updates=1, **kw))
    path = tmp_path / "split" / "checkpoint.pt"
    kinds = {k for s in load_checkpoint(path)["trainer"]["samplers"] for k in s["opp_kind"].tolist()}
    assert OPPONENT_KINDS.index("random") in kinds  # the checkpoint holds hands against the random player
    train.main(train.Args(resume=str(path), threads=1))
    ma, ms = (load_checkpoint(tmp_path / r / "policy.pt")["model"] for r in ("a", "split"))
    for k in ma:
        torch.testing.assert_close(ma[k], ms[k], rtol=0, atol=0)


@pytest.mark.slow
def test_learned_best_response_measures_each_target_and_records_a_row_each(tmp_path):
    """Two targets, a searching agent and a policy, each trained against and measured in turn (tiny budgets); the
    agent target's row carries its exact NashConv and the ratio. A file's rows of other targets (or of a target
    played the other way) stay, each with the command that wrote it; a row of the same target and play is replaced."""
    out_json = tmp_path / "br.json"
    old = [{"target": "expert", "target_play": "strategy", "mean": 9.0},
           {"target": "trained-schnapsen10", "target_play": "greedy", "mean": 8.0},
           {"target": "pimc", "target_play": "strategy", "mean": 7.0}]
    out_json.write_text(json.dumps({"rows": old, "command": "python earlier.py", "commit": "abc"}))
    flags = "--num-envs 16 --batch-size 1024 --minibatch-size 256 --hidden 32 --layers 1"
    out = subprocess.run([sys.executable, str(BENCHMARK), "--ruleset", "schnapsen10", "--target", "pimc",
                          "trained-schnapsen10", "--total-steps", "1000", "--deals", "4", "--train-flags", flags,
                          "--json", str(out_json)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads(out_json.read_text())["rows"]
    assert rows[:2] == [{"command": "python earlier.py", "commit": "abc", **r} for r in old[:2]]
    rows = rows[2:]
    assert [r["target"] for r in rows] == ["pimc", "trained-schnapsen10"]
    assert all(r["command"].endswith(f"--json {out_json}") and r["mean"] < 7 for r in rows)
    assert all(r["deals"] == 4 and r["decisions_trained"] >= 1000 and r["train_flags"] == flags for r in rows)
    assert all("start" not in r and r["init"] == "fresh" for r in rows)
    exact = json.loads((ROOT / "benchmarks" / "exploitability_schnapsen10.json").read_text())["rows"]
    assert rows[0]["exact_nash_conv"] == next(r["nash_conv"] for r in exact if r["policy"] == "pimc")
    assert rows[0]["ratio"] == pytest.approx(2 * rows[0]["mean"] / rows[0]["exact_nash_conv"])


@pytest.mark.slow
def test_learned_best_response_from_a_policy_records_where_it_started(tmp_path):
    """With --init-from the row holds the starting policy's own result against the target on the same deals."""
    out_json = tmp_path / "br.json"
    flags = "--num-envs 16 --batch-size 1024 --minibatch-size 256 --update-epochs 0"  # 0 epochs: it stays the start
    out = subprocess.run([sys.executable, str(BENCHMARK), "--ruleset", "schnapsen10", "--target", "pimc",
                          "--init-from", "trained-schnapsen10", "--total-steps", "1000", "--deals", "6",
                          "--train-flags", flags, "--json", str(out_json)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    row = json.loads(out_json.read_text())["rows"][0]
    assert row["init"] == "trained-schnapsen10"
    assert row["start"]["mean"] == row["mean"]  # untrained, the responder is its start, on the same deals
    assert row["start"]["ratio"] == pytest.approx(row["ratio"])


@pytest.mark.slow
def test_learned_best_response_to_a_greedy_target_that_is_its_own_start_scores_zero(tmp_path):
    """--target-greedy: the target plays its argmax, in training and in the match; a responder that is the target
    itself (started from it, 0 PPO epochs) ties it exactly on duplicate deals, and the row carries the exact NashConv
    of the greedy policy."""
    out_json = tmp_path / "br.json"
    flags = "--num-envs 16 --batch-size 1024 --minibatch-size 256 --update-epochs 0"
    out = subprocess.run([sys.executable, str(BENCHMARK), "--ruleset", "schnapsen10", "--target",
                          "trained-schnapsen10", "--target-greedy", "--init-from", "target", "--total-steps", "1000",
                          "--deals", "6", "--train-flags", flags, "--json", str(out_json)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    row = json.loads(out_json.read_text())["rows"][0]
    assert row["target_play"] == "greedy" and row["mean"] == 0 and row["start"]["mean"] == 0
    exact = json.loads((ROOT / "benchmarks" / "exploitability_schnapsen10.json").read_text())["rows"]
    name = "agents/learned/data/schnapsen10_policy.pt (greedy)"
    assert row["exact_nash_conv"] == next(r["nash_conv"] for r in exact if r["policy"] == name)


@pytest.mark.parametrize("argv, expected", [
    (["--target", "missing.pt"], "--target 'missing.pt': no such file and no shipped policy"),
    (["--ruleset", "schnapsen10", "--target", "trained-220m"], "--target 'trained-220m': "),
    (["--ruleset", "bridge"], "--ruleset 'bridge': expected one of"),
    (["--deals", "0"], "--deals must be from 1"),
    (["--total-steps", "0"], "--total-steps must be >= 1"),
    (["--ruleset", "schnapsen10", "--target", "expert", "--init-from", "target"],
     "--init-from target: the target 'expert' is an agent, not a policy with weights"),
    (["--ruleset", "schnapsen10", "--target", "nosuchagent"], "--target 'nosuchagent': "),
    (["--ruleset", "schnapsen10", "--target", "pimc", "--train-flags", "--seed 'x"], "--train-flags \"--seed 'x\""),
    (["--ruleset", "schnapsen10", "--target", "expert", "--init-from", "gone.pt"],
     "--init-from 'gone.pt': no such file and no shipped policy"),
])
@pytest.mark.slow
def test_learned_best_response_bad_input_is_one_line(argv, expected, tmp_path):
    out = subprocess.run([sys.executable, str(BENCHMARK), *argv], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert expected in out.stderr, out.stderr


def test_learned_best_response_refuses_a_json_file_of_no_rows_before_training(tmp_path):
    """--json's rows of other targets are kept: a file that is no record of rows (here, not JSON) is refused in one
    line before the training (it was a traceback after a target's training), as is a --json in no folder (it
    was not checked at all), and the file is left as it was."""
    (tmp_path / "b.json").write_text('{"rows": [')
    for path, expected in (("b.json", "--json 'b.json' is not JSON"), ("no/such/b.json", "--json 'no/such/b.json'")):
        out = subprocess.run([sys.executable, str(BENCHMARK), "--ruleset", "schnapsen10", "--target", "pimc",
                              "--json", path], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and expected in out.stderr, out.stderr
    assert (tmp_path / "b.json").read_text() == '{"rows": ['
    # a file of another ruleset's rows: its row of the same target would be replaced by this ruleset's
    (tmp_path / "s20.json").write_text(json.dumps({"rows": [{"ruleset": "schnapsen20", "target": "pimc",
                                                             "target_play": "strategy"}]}))
    out = subprocess.run([sys.executable, str(BENCHMARK), "--ruleset", "schnapsen10", "--target", "pimc",
                          "--json", "s20.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr == (
        "learned_best_response.py: --json 's20.json' holds rows of --ruleset schnapsen20: expected a file of "
        "--ruleset schnapsen10's rows (one file a ruleset) or a path that does not exist yet\n"), out.stderr
