"""The trainer's search teacher (``train.py --search-teacher-share``: the expert's best actions on a share of the
learner's hidden-card decisions, expert iteration) and its learning curves (``--eval-opponents``, the training
seconds in the history): the labels are the search's on the learner's observations, each labelled decision is
trained once, a seeded run with the teacher is reproducible and resumes exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.learned.checkpoint import load_checkpoint
from agents.learned.policy_net import ActorCritic
from agents.search.expert import ExpertAgent
from agents.training.self_play import Sampler, batch_tensors, sampler_state_problem
from helpers.training import tiny_args, train
from schnapsen_env import RuleSet
from schnapsen_env.encoding import layout

RULES = RuleSet.make("schnapsen20")
NODES = 20_000  # a small budget: the searches of these tests take milliseconds


def _sampler(share: float, seed: int = 5, num_envs: int = 16, stock: int | None = None) -> Sampler:
    net = ActorCritic(255, 27, hidden=32)
    torch.manual_seed(0)
    return Sampler(0, RULES, num_envs, seed, net.config(), 400, 0.0, 0.3, 1.0, 0.95, endgame_teacher=True,
                   search_share=share, search_nodes=NODES, search_stock=stock)


def _record_searches(sampler: Sampler) -> list[dict]:
    """Wrap the sampler's expert so that each search records what it was given, its generator's state before
    the search, and its label."""
    calls: list[dict] = []
    search = sampler.search.best_action_bits

    def recording(observation):
        assert set(observation) == {"observation", "action_mask"}  # the learner's observation, nothing more
        rng = sampler.search.rng.bit_generator.state
        bits = search(observation)
        calls.append({"obs": observation["observation"].copy(), "mask": observation["action_mask"].copy(),
                      "rng": rng, "bits": bits})
        return bits

    sampler.search.best_action_bits = recording
    return calls


def test_search_labels_are_the_experts_best_actions_on_the_learners_observations():
    """Every label is the best actions of a fresh expert that sees only the row's observation (with the
    generator state the sampler's expert drew its worlds from), on decisions with a choice while cards are hidden;
    the expert's own move is among them. Teacher off: no expert, no label."""
    sampler = _sampler(0.05)
    calls = _record_searches(sampler)
    weights = ActorCritic(255, 27, hidden=32).state_dict()
    batch, stats = sampler.collect(weights, None, 400)
    assert stats["search_labels"] == len(calls) >= 10
    labelled = np.flatnonzero(batch["search"])
    pending = np.flatnonzero(sampler.buf.search[:sampler.buf.size])
    assert len(labelled) + len(pending) == len(calls)  # each search labels one decision, finished or pending
    rows = [(batch["obs"][r], batch["masks"][r], batch["search"][r]) for r in labelled]
    rows += [(sampler.buf.obs[r], sampler.buf.masks[r], sampler.buf.search[r]) for r in pending]
    lay = layout(RULES)
    for obs, mask, bits in rows:
        match = [c for c in calls if np.array_equal(c["obs"], obs) and np.array_equal(c["mask"], mask)]
        assert match and match[0]["bits"] == bits  # the label the search gave on this very observation
        hidden = obs[lay["stock_size"]][0] > 0 or obs[lay["closed"]][0] > 0
        assert hidden and mask.sum() > 1
        assert bits & ~int((mask.astype(np.int64) << np.arange(27)).sum()) == 0  # legal actions only
    assert not (batch["search"] & batch["teach"]).any()  # the endgame teacher labels the other decisions
    for c in calls[:: max(1, len(calls) // 6)]:  # recompute a sample
        fresh = ExpertAgent(RULES, max_nodes=NODES)
        fresh.rng.bit_generator.state = c["rng"]
        observation = {"observation": c["obs"], "action_mask": c["mask"]}
        assert fresh.best_action_bits(observation) == c["bits"]
        fresh.rng.bit_generator.state = c["rng"]
        move = fresh.act(observation)
        assert c["bits"] & -c["bits"] == 1 << move  # act plays the lowest of the best actions
    quiet = _sampler(0.0)
    assert quiet.search is None
    out, st = quiet.collect(weights, None, 400)
    assert not out["search"].any() and st["search_labels"] == 0 and st["search_seconds"] == 0.0


def test_search_teacher_stock_labels_only_small_or_closed_stocks():
    """``--search-teacher-stock 6``: every search is on an observation whose open stock holds at most 6 cards, or
    whose stock is closed (R18), and such positions do get labels (the draw is among them alone)."""
    sampler = _sampler(0.2, seed=7, stock=6)
    calls = _record_searches(sampler)
    sampler.collect(ActorCritic(255, 27, hidden=32).state_dict(), None, 400)
    lay = layout(RULES)
    stocks = [int(round(c["obs"][lay["stock_size"]][0] * RULES.stock0)) for c in calls]
    closed = [c["obs"][lay["closed"]][0] > 0 for c in calls]
    assert len(calls) >= 10
    assert all(0 < s <= 6 or shut for s, shut in zip(stocks, closed))
    everywhere = _sampler(0.2, seed=7)
    wide = _record_searches(everywhere)
    everywhere.collect(ActorCritic(255, 27, hidden=32).state_dict(), None, 400)
    assert any(round(c["obs"][lay["stock_size"]][0] * RULES.stock0) > 6 for c in wide)  # without the flag the opening too


def test_each_search_label_is_returned_once():
    """Over several calls every labelled decision comes back in exactly one batch or still waits in the buffer;
    the learner's tensors mark exactly those rows."""
    sampler = _sampler(0.05, seed=6, num_envs=8)
    weights = ActorCritic(255, 27, hidden=32).state_dict()
    returned = 0
    for _ in range(4):
        batch, stats = sampler.collect(weights, None, 150)
        returned += int((batch["search"] != 0).sum())
        t = batch_tensors(batch, torch.device("cpu"), "fp32", 27, False)
        np.testing.assert_array_equal(t["searched"].numpy(), batch["search"] != 0)
        assert (t["search"].numpy() <= batch["masks"].astype(bool)).all()
    assert returned + int((sampler.buf.search[:sampler.buf.size] != 0).sum()) == sampler.search_labels > 0


def test_search_teacher_run_trains_every_label_once_and_reports_its_cost(tmp_path):
    summary = train.main(tiny_args(tmp_path, samplers=2, total_steps=2500, search_teacher_share=0.03,
                                   search_teacher_nodes=NODES))
    cost = summary["search_teacher"]
    ck = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")
    waiting = sum(int((st["buffer"]["search"] != 0).sum()) for st in ck["trainer"]["samplers"])
    assert cost["labels"] > 20 and cost["trained"] + waiting == cost["labels"]
    assert 0 < cost["seconds"] and 0 < cost["share_of_sampler_time"] <= 1


def test_seeded_run_with_the_search_teacher_is_reproducible_and_resumes_exactly(tmp_path):
    kw = dict(total_steps=2500, search_teacher_share=0.03, search_teacher_nodes=NODES, threads=1)
    train.main(tiny_args(tmp_path, run_name="a", **kw))
    train.main(tiny_args(tmp_path, run_name="b", **kw))
    train.main(tiny_args(tmp_path, run_name="split", stop_after_updates=1, **kw))
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1, final_eval_deals=0, progress=False))
    a = load_checkpoint(tmp_path / "a" / "checkpoint.pt")
    for other in ("b", "split"):
        b = load_checkpoint(tmp_path / other / "checkpoint.pt")
        for key in ("global_step", "update", "hands"):
            assert a["trainer"][key] == b["trainer"][key]
        for k in a["model"]:
            torch.testing.assert_close(a["model"][k], b["model"][k], rtol=0, atol=0)
        for sa, sb in zip(a["trainer"]["samplers"], b["trainer"]["samplers"]):
            assert torch.equal(sa["buffer"]["search"], sb["buffer"]["search"])
    # the teacher changed the run: the same seed without it ends elsewhere
    train.main(tiny_args(tmp_path, run_name="off", **{**kw, "search_teacher_share": 0.0}))
    off = load_checkpoint(tmp_path / "off" / "checkpoint.pt")["model"]
    assert any(not torch.equal(a["model"][k], off[k]) for k in off)


def test_a_sampler_state_from_before_the_search_teacher_loads():
    sampler = _sampler(0.05, num_envs=8)
    sampler.collect(ActorCritic(255, 27, hidden=32).state_dict(), None, 100)
    st = sampler.get_state()
    del st["buffer"]["search"]  # as written before the search teacher
    assert sampler_state_problem(st, 8, 255, 27, len(sampler.buf.obs), 1) is None
    sampler.set_state(st)
    assert not sampler.buf.search[:sampler.buf.size].any()
    st["buffer"]["search"] = st["buffer"]["teach"][:-1]  # a malformed one is refused
    assert "search" in sampler_state_problem(st, 8, 255, 27, len(sampler.buf.obs), 1)


@pytest.mark.parametrize("flags, message", [
    (dict(search_teacher_share=1.5), "--search-teacher-share"), (dict(search_teacher_share=float("nan")), "share"),
    (dict(search_teacher_nodes=0), "--search-teacher-nodes"), (dict(search_teacher_stock=-1), "--search-teacher-stock"),
    (dict(search_teacher_coef=-1.0), "--search-teacher"),
    (dict(eval_opponents=("bogus",)), "--eval-opponents 'bogus'"), (dict(eval_every=5, eval_opponents=()), "empty"),
])
def test_bad_teacher_and_panel_flags_are_refused_before_any_work(tmp_path, flags, message):
    with pytest.raises(ValueError, match=message):
        train.main(tiny_args(tmp_path, **flags))
    assert not (tmp_path / "tiny").exists()


def test_learning_curve_against_training_seconds_over_a_resume(tmp_path):
    """Each periodic evaluation of the panel records its learner decisions, the training seconds (without the
    evaluations' own time, going on across a resume) and each opponent's mean and CI, in summary.json's history and
    TensorBoard."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    kw = dict(total_steps=4000, eval_every=1, eval_deals=2, eval_opponents=("random", "heuristic"),
              eval_rollout_every=2, tensorboard=True)
    train.main(tiny_args(tmp_path, stop_after_updates=2, **kw))
    stopped = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")["trainer"]["train_seconds"]
    summary = train.main(train.Args(resume=str(tmp_path / "tiny" / "checkpoint.pt"), threads=1, final_eval_deals=0, progress=False))
    updates = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")["trainer"]["update"]
    curve = [h for h in summary["history"] if "train_seconds" in h]
    assert len(curve) == updates - 1 >= 3  # every update but the last (the final table's)
    assert [h["step"] for h in curve] == sorted(h["step"] for h in curve)
    seconds = [h["train_seconds"] for h in curve]
    assert seconds == sorted(seconds) and seconds[0] > 0
    assert seconds[1] <= stopped < seconds[2] <= summary["train_seconds"]  # the clock went on after the resume
    assert summary["eval_seconds"] > 0
    for n, h in enumerate(curve, start=1):
        panel = ["random", "heuristic"] + (["rollout"] if n % 2 == 0 else [])
        assert set(h["ci"]) == set(panel) and all(-3 <= h[k] <= 3 for k in panel)
    acc = EventAccumulator(str(tmp_path / "tiny"))
    acc.Reload()
    assert [e.step for e in acc.Scalars("eval/train_seconds")] == [h["step"] for h in curve]
    assert [e.value for e in acc.Scalars("eval/train_seconds")] == pytest.approx(seconds, abs=1e-2)
