"""The self-play trainer: checkpoints and resume, masking, PPO loss pieces, reproducibility,
sampler processes and Ray actors, chain assembly, rule knobs, and a learning test with a margin that holds."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.evaluation.arena import play_match
from agents.learned.checkpoint import CheckpointError, load_checkpoint, save_atomic
from agents.learned.policy import PolicyAgent
from agents.learned.policy_net import (
    ActorCritic,
    SparseFirstLayer,
    masked_entropy,
    masked_log_probs,
    native_bf16,
    policy_checkpoint,
    resolve_precision,
    sparse_rows,
)
from agents.training import trainer_flags
from agents.training.command_line import parse_args
from agents.training.recipe import rules_of
from agents.training.run_files import RunFiles
from agents.training.self_play import (
    ProcessSamplers,
    RaySamplers,
    Sampler,
    SamplerError,
    batch_tensors,
    bootstrapped_chain_gae,
    chain_gae,
    pack_observations,
    ray_death_cause,
    sampler_kwargs,
    start_samplers,
    unpack_observations,
)
from helpers.play import assert_legal_hands, random_positions
from helpers.ray_cluster import RayCluster, wait_gone
from helpers.sampler_loss import lose_a_sampler
from helpers.scripts import ROOT, load_script
from helpers.training import tiny_args, tiny_argv
from schnapsen_env import RuleSet, schnapsen_v0
from schnapsen_env.encoding import obs_size

train = load_script("train.py")


def test_masked_policy_puts_no_probability_on_illegal_actions():
    torch.manual_seed(0)
    logits = torch.randn(64, 27) * 5
    mask = torch.rand(64, 27) < 0.3
    mask[:, 5] = True
    logp = masked_log_probs(logits, mask)
    probs = logp.exp()
    assert torch.all(probs[~mask] == 0)
    torch.testing.assert_close(probs.sum(-1), torch.ones(64))
    ent = masked_entropy(logp, mask)
    assert torch.isfinite(ent).all() and (ent >= 0).all()
    one_legal = torch.zeros(1, 27, dtype=torch.bool)
    one_legal[0, 3] = True
    assert masked_entropy(masked_log_probs(logits[:1], one_legal), one_legal).item() == 0.0


def test_ppo_loss_pieces_by_hand():
    # Two samples; ratios exp(0.5) = 1.6487 (clipped to 1.2) and exp(-0.1) = 0.9048.
    new_logp = torch.tensor([-0.5, -1.1])
    old_logp = torch.tensor([-1.0, -1.0])
    adv = torch.tensor([1.0, -2.0])
    new_v = torch.tensor([0.5, -1.0])
    old_v = torch.tensor([0.0, 0.0])
    ret = torch.tensor([1.0, -2.0])
    ent = torch.tensor([0.7, 0.3])
    parts = train.ppo_losses(new_logp, old_logp, adv, new_v, old_v, ret, ent, clip_coef=0.2)
    r1, r2 = math.exp(0.5), math.exp(-0.1)
    # sample 1: max(-1 * 1.6487, -1 * 1.2) = -1.2; sample 2: max(2 * 0.9048, 2 * 0.9048) = 1.8097
    expected_pg = (max(-r1, -1.2) + max(2 * r2, 2 * max(r2, 0.8))) / 2
    assert parts["pg_loss"].item() == pytest.approx(expected_pg, abs=1e-6)
    # values: sample 1 unclipped (0.5-1)^2 = .25, clipped v=0.2 -> .64 -> max .64; sample 2: (-1+2)^2 = 1,
    # clipped v=-0.2 -> 3.24 -> max 3.24; 0.5 * mean = 0.5 * 1.94 = 0.97
    assert parts["v_loss"].item() == pytest.approx(0.97, abs=1e-6)
    assert parts["entropy"].item() == pytest.approx(0.5)
    kl = ((r1 - 1) - 0.5 + (r2 - 1) + 0.1) / 2
    assert parts["approx_kl"].item() == pytest.approx(kl, abs=1e-6)
    assert parts["clipfrac"].item() == pytest.approx(0.5)


@pytest.mark.parametrize("init", [{}, {"canonical_trump": True}, {"canonical_suits": True}])
def test_the_update_relabels_its_batch_once_a_minibatch_of_rows_at_a_time(tmp_path, monkeypatch, init):
    """The PPO update relabels its batch once for all its epochs, a minibatch of rows at a time: each relabelling
    sees at most --minibatch-size rows and the batch's rows once, and the batch relabelled so is bit for bit the batch
    relabelled whole. Relabelled whole, its float64 sort keys and int64 gather indices were the batch's: a
    200,000-row update (194 MiB of observations) peaked 612 MiB above its start, 216 MiB a minibatch at a time (the
    relabelled copy), 36 MiB when each minibatch relabelled itself in every epoch."""

    rules = RuleSet.make("schnapsen20")
    torch.manual_seed(0)
    model = ActorCritic(obs_size(rules), rules.n_actions, hidden=16, **init)
    rng = np.random.default_rng(5)
    obs, masks = random_positions(rules, 300, rng)
    whole, table = model.relabel(obs)
    chunked, chunked_table = model.relabel(obs, rows=64)
    torch.testing.assert_close(chunked, whole, rtol=0, atol=0)
    if table is None:
        assert chunked_table is None and chunked is obs  # nothing to relabel: no copy
    else:
        assert torch.equal(chunked_table, table)
    seen = []
    real = model._relabel_rows
    monkeypatch.setattr(model, "_relabel_rows", lambda o: seen.append(len(o)) or real(o))
    n = len(obs)
    b = {"obs": obs, "masks": masks, "critic": None,
         "actions": torch.from_numpy(np.array([rng.choice(np.flatnonzero(m)) for m in masks.numpy()])),
         "logp": torch.full((n,), -1.5), "adv": torch.randn(n), "values": torch.zeros(n), "ret": torch.randn(n)}
    args = tiny_args(tmp_path, minibatch_size=64, update_epochs=3, endgame_teacher_coef=0.0)
    train.ppo_update(model, torch.optim.Adam(model.parameters(), lr=1e-3), b, rng, args)
    assert seen == ([] if table is None else [64, 64, 64, 64, 44])


def test_the_torch_this_project_requires_steps_adam_fused_on_the_cpu():
    """train.py (and benchmarks/trainer.py) build Adam with fused=True on the learner's device, the CPU by default.
    torch steps Adam fused on the CPU from 2.4 (pytorch/pytorch#123074); before, Adam(fused=True) on CPU parameters
    raises RuntimeError ("requires all the params to be floating point Tensors of supported devices: ['cuda', ...]"),
    so a run on torch 2.2 or 2.3, which the project's ``torch>=2.2`` allowed, stopped before its first hand."""
    tomllib = pytest.importorskip("tomllib")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    floors = [re.fullmatch(r"torch>=(\d+)\.(\d+)", d) for d in deps if re.match(r"torch\b", d)]
    assert len(floors) == 1 and floors[0], deps
    assert (int(floors[0][1]), int(floors[0][2])) >= (2, 4)
    assert "fused=True" in (ROOT / "train.py").read_text(encoding="utf-8")  # what the floor is for
    model = torch.nn.Linear(3, 2)
    torch.optim.Adam(model.parameters(), fused=True).step()  # and this torch does it on the CPU


def test_sparse_rows_hold_each_observations_non_zero_entries_and_nothing_else():
    """sparse_rows: each row's non-zero entries (columns and values), padded with column 0 and value 0 to the row
    with the most; scattered back they are the observations exactly, an all-zero row included."""
    rules = RuleSet.make("schnapsen20")
    obs, _ = random_positions(rules, 200, np.random.default_rng(3))
    obs = torch.cat([obs, torch.zeros(1, obs.shape[1])])
    columns, values = sparse_rows(obs)
    counts = (obs != 0).sum(1)
    assert columns.shape == values.shape == (len(obs), int(counts.max()))
    assert columns.dtype == torch.int64 and values.dtype == obs.dtype
    assert torch.equal((values != 0).sum(1), counts)  # every non-zero once, the padding zero
    back = torch.zeros_like(obs).scatter_add_(1, columns, values)
    torch.testing.assert_close(back, obs, rtol=0, atol=0)
    assert sparse_rows(torch.zeros(3, 5))[0].shape == (3, 1)  # no entry: one padding slot


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_the_sparse_first_layer_gives_the_dense_layers_values_and_weight_gradient(device):
    """SparseFirstLayer (the update's first layer in float32) against the dense product: the same outputs and the
    same weight gradient up to float rounding, and no gradient for the observations; on a CUDA device too, where
    one is (``--device cuda --precision fp32`` takes this path)."""
    rules = RuleSet.make("schnapsen20")
    obs, _ = random_positions(rules, 300, np.random.default_rng(4))
    obs = obs.to(device)
    torch.manual_seed(0)
    dense = torch.nn.Linear(obs.shape[1], 64).to(device)
    weight = dense.weight.detach().clone().requires_grad_()
    grad_out = torch.randn(len(obs), 64).to(device)
    dense(obs).backward(grad_out)
    out = SparseFirstLayer.apply(*sparse_rows(obs), obs, weight) + dense.bias.detach()
    out.backward(grad_out)
    torch.testing.assert_close(out, dense(obs).detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(weight.grad, dense.weight.grad, rtol=1e-5, atol=1e-4)
    assert not weight.grad.equal(torch.zeros_like(weight.grad))


def test_the_update_finds_its_batchs_non_zero_entries_a_minibatch_of_rows_at_a_time(tmp_path, monkeypatch):
    """sparse_rows(obs, rows=k) is sparse_rows(obs) bit for bit, and the update finds its batch's non-zero entries
    --minibatch-size rows at a time. The whole batch at once built a mask and four int64 indices a non-zero entry for
    every row together: a 200,000-row batch of 255 entries 13% set (195 MiB) peaked 439 MiB above its start, 306 MiB
    beyond the 133 MiB it keeps and uncounted by --batch-size's memory check (144 MiB 2,048 rows at a time), the cost
    the update's relabelling works a minibatch of rows at a time to avoid."""
    rules = RuleSet.make("schnapsen20")
    rng = np.random.default_rng(9)
    obs, masks = random_positions(rules, 300, rng)
    obs[5] = 0  # an all-zero row
    whole = sparse_rows(obs)
    for rows in (1, 7, 64, 300, 1000):
        chunked = sparse_rows(obs, rows=rows)
        assert torch.equal(chunked[0], whole[0]) and torch.equal(chunked[1], whole[1]), rows
    assert [t.shape for t in sparse_rows(obs[:0], rows=64)] == [(0, 1), (0, 1)]
    seen = []
    real = torch.Tensor.nonzero
    monkeypatch.setattr(torch.Tensor, "nonzero", lambda t, *a, **kw: seen.append(len(t)) or real(t, *a, **kw))
    n = len(obs)
    b = {"obs": obs, "masks": masks, "critic": None,
         "actions": torch.from_numpy(np.array([rng.choice(np.flatnonzero(m)) for m in masks.numpy()])),
         "logp": torch.full((n,), -1.5), "adv": torch.randn(n), "values": torch.zeros(n), "ret": torch.randn(n)}
    args = tiny_args(tmp_path, minibatch_size=64, update_epochs=1, endgame_teacher_coef=0.0)
    torch.manual_seed(0)
    model = ActorCritic(obs_size(rules), rules.n_actions, hidden=16)
    train.ppo_update(model, torch.optim.Adam(model.parameters(), lr=1e-3, fused=True), b, rng, args)
    assert seen == [64, 64, 64, 64, 44]


def test_the_memory_estimate_counts_the_float32_updates_non_zero_entries(tmp_path):
    """trainer_flags.memory_estimate counts sparse_rows' copy of the batch (an int64 column and a float32 value for
    each of at most obs_nonzero_bound entries a row) where the update runs in float32, not in bfloat16; and the
    bound covers what sparse_rows keeps of real positions."""
    from schnapsen_env.encoding import obs_nonzero_bound
    args = tiny_args(tmp_path, batch_size=4096)
    rules = RuleSet.make("schnapsen20")
    fp32 = trainer_flags.memory_estimate(dataclasses.replace(args, precision="fp32"))
    bf16 = trainer_flags.memory_estimate(dataclasses.replace(args, precision="bf16"))
    assert fp32[1] == bf16[1] and fp32[0] - bf16[0] == 4096 * 12 * obs_nonzero_bound(rules)
    obs, _ = random_positions(rules, 300, np.random.default_rng(8))
    columns, values = sparse_rows(obs)
    assert columns.shape[1] <= obs_nonzero_bound(rules)
    assert columns.element_size() + values.element_size() == 12


def test_the_update_through_the_sparse_first_layer_follows_the_dense_update(tmp_path, monkeypatch):
    """ppo_update in float32 feeds the first layer the batch's non-zero entries (sparse_rows of the relabelled
    observations, the minibatch's rows of them): its weights after an update are the dense update's up to float
    rounding, and the sparse path was taken."""
    rules = RuleSet.make("schnapsen20")
    rng = np.random.default_rng(6)
    obs, masks = random_positions(rules, 300, rng)
    n = len(obs)
    b = {"obs": obs, "masks": masks, "critic": None,
         "actions": torch.from_numpy(np.array([rng.choice(np.flatnonzero(m)) for m in masks.numpy()])),
         "logp": torch.full((n,), -1.5), "adv": torch.randn(n), "values": torch.zeros(n), "ret": torch.randn(n)}
    args = tiny_args(tmp_path, minibatch_size=64, update_epochs=2, endgame_teacher_coef=0.0)
    weights, calls = [], []
    for sparse in (True, False):
        monkeypatch.setattr(train, "sparse_rows", (lambda o, **kw: calls.append(len(o)) or sparse_rows(o, **kw))
                            if sparse else (lambda o, **kw: None))
        torch.manual_seed(0)
        model = ActorCritic(obs_size(rules), rules.n_actions, hidden=32, canonical_suits=True)
        train.ppo_update(model, torch.optim.Adam(model.parameters(), lr=1e-3, fused=True), b,
                         np.random.default_rng(5), args)
        weights.append(model.state_dict())
    assert calls == [n]  # once for the whole batch, not once a minibatch
    for k in weights[0]:
        torch.testing.assert_close(weights[0][k], weights[1][k], rtol=1e-4, atol=1e-5)


def test_chain_gae_by_hand():
    adv, ret = chain_gae(np.array([0.5, 1.0, -0.5], np.float32), 2.0, gamma=1.0, lam=0.5)
    # deltas: 1.0-0.5=0.5, -0.5-1.0=-1.5, 2.0+0.5=2.5; adv3=2.5, adv2=-1.5+.5*2.5=-0.25, adv1=.5-.125=.375
    np.testing.assert_allclose(adv, [0.375, -0.25, 2.5])
    np.testing.assert_allclose(ret, [0.875, 0.75, 2.0])


def _gae_reference(values, exact, final_reward, gamma, lam):
    """GAE of a chain as a loop over numpy scalars (the samplers' returns before they were compiled), with the
    endgame bootstrap's cut before the first exact value."""
    def plain(values, final_reward):
        adv, last = np.zeros(len(values), np.float32), 0.0
        for t in range(len(values) - 1, -1, -1):
            next_v = values[t + 1] if t + 1 < len(values) else 0.0
            r = final_reward if t == len(values) - 1 else 0.0
            last = (r + gamma * next_v - values[t]) + gamma * lam * last
            adv[t] = last
        return adv
    known = np.flatnonzero(np.isfinite(exact))
    if not len(known) or known[0] == 0:
        adv = plain(values, final_reward)
    else:
        k = int(known[0])
        adv = np.concatenate([plain(values[:k], float(exact[k])), plain(values[k:], final_reward)])
    return adv, adv + values


def test_compiled_chain_gae_is_the_numpy_loop_bit_for_bit():
    """chain_gae and bootstrapped_chain_gae (compiled) give the float32 bits of the loop over numpy scalars, over
    random chains, rewards, discounts and exact values, a chain of one decision included."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        values = rng.normal(0, 1.5, n).astype(np.float32)
        exact = np.where(rng.random(n) < 0.3, rng.integers(-3, 4, n), np.nan).astype(np.float32)
        reward = float(rng.choice([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0, 0.5]))
        gamma, lam = float(rng.choice([1.0, 0.99])), float(rng.choice([0.95, 1.0, 0.5]))
        for got, want in zip(bootstrapped_chain_gae(values, exact, reward, gamma, lam),
                             _gae_reference(values, exact, reward, gamma, lam)):
            assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32))
        no_exact = np.full(n, np.nan, np.float32)
        for got, want in zip(chain_gae(values, reward, gamma, lam), _gae_reference(values, no_exact, reward, gamma, lam)):
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_bootstrapped_chain_gae_refuses_exact_values_of_another_length():
    """The compiled loop reads ``exact[k]`` for every decision of the chain, unchecked: exact values shorter than the
    chain read past their end (one NaN for a 2,000-decision chain gave an advantage of -1.0 at decision 0, from
    whatever memory followed, instead of 19.999977), so the lengths are checked before it runs."""
    values = np.arange(1, 2001, dtype=np.float32)
    for exact in (np.full(1, np.nan, np.float32), np.zeros(0, np.float32), np.full(2001, np.nan, np.float32)):
        with pytest.raises(ValueError, match=r"exact values \(\d+,\) for a chain of \(2000,\)"):
            bootstrapped_chain_gae(values, exact, 1.0, 1.0, 0.95)
    adv, ret = bootstrapped_chain_gae(values, np.full(2000, np.nan, np.float32), 1.0, 1.0, 0.95)
    want_adv, want_ret = chain_gae(values, 1.0, 1.0, 0.95)
    assert np.array_equal(adv, want_adv) and np.array_equal(ret, want_ret)
    assert adv[0] == np.float32(19.999977) and ret[-1] == np.float32(1.0)


def test_endgame_bootstrap_ends_the_returns_before_the_first_exact_value_by_hand():
    values = np.array([0.5, 1.0, -0.5, 0.2], np.float32)
    exact = np.array([np.nan, np.nan, 2.0, 1.0], np.float32)
    adv, ret = bootstrapped_chain_gae(values, exact, -1.0, gamma=1.0, lam=0.5)
    # before: deltas 1.0-0.5=0.5, 2.0-1.0=1.0; adv2=1.0, adv1=0.5+0.5*1.0=1.0
    # from the exact decision on, the hand's reward -1: deltas 0.2+0.5=0.7, -1-0.2=-1.2; adv4=-1.2, adv3=0.7-0.6=0.1
    np.testing.assert_allclose(adv, [1.0, 1.0, 0.1, -1.2], atol=1e-6)
    np.testing.assert_allclose(ret, [1.5, 2.0, -0.4, -1.0], atol=1e-6)
    none = np.full(4, np.nan, np.float32)
    for no_cut in (none, np.array([3.0, np.nan, np.nan, np.nan], np.float32)):  # nothing before the exact value
        for a, b in zip(bootstrapped_chain_gae(values, no_cut, -1.0, 1.0, 0.5), chain_gae(values, -1.0, 1.0, 0.5)):
            np.testing.assert_array_equal(a, b)


def test_endgame_bootstrap_values_are_the_solvers_and_end_the_earlier_returns(monkeypatch):
    """--endgame-bootstrap: every learner decision once the stock is exhausted (forced ones too) gets the exact value
    that CoreSolver.solve gives its position, and with lambda = gamma = 1 each earlier decision of the seat in that
    hand returns the value of the seat's first such decision; the hand's reward only from there on."""
    from agents.search.solver_core import CoreSolver
    from agents.training import self_play
    from schnapsen_env.state_layout import F
    rules = rules_of(train.Args())
    net = ActorCritic(255, 27, hidden=32)
    sampler = Sampler(0, rules, 16, 5, net.config(), 600, 0.0, 0.0, 1.0, 1.0, endgame_teacher=True,
                      endgame_bootstrap=True)
    solved, chains = [], []
    best_action_bits = sampler.teacher.best_action_bits

    def spy_solver(states, rows, with_values=False):
        out = best_action_bits(states, rows, with_values)
        solved.extend(zip(states[rows].copy(), out[1].tolist()))
        return out

    def spy_gae(values, exact, reward, gamma, lam):
        adv, ret = bootstrapped_chain_gae(values, exact, reward, gamma, lam)
        chains.append((exact.copy(), reward, ret))
        return adv, ret

    monkeypatch.setattr(sampler.teacher, "best_action_bits", spy_solver)
    monkeypatch.setattr(self_play, "bootstrapped_chain_gae", spy_gae)
    sampler.collect(net.state_dict(), None, 600)
    reference = CoreSolver(rules)
    assert len(solved) > 50
    forced = 0
    for state, value in solved:
        assert state[F.stock_top] == state[F.stock_end] and state[F.closed_by] < 0
        assert value == reference.solve(state.copy())[0]
        forced += int(state[F.over] == 0 and len(reference.action_values(state.copy())) == 1)
    assert forced > 0  # forced decisions are valued too: the first exhausted decision may be one
    cut = 0
    for exact, reward, ret in chains:
        known = np.flatnonzero(np.isfinite(exact))
        k = int(known[0]) if len(known) else len(exact)
        np.testing.assert_allclose(ret[:k], exact[k] if k < len(exact) else reward, atol=1e-5)  # float32 sums
        np.testing.assert_allclose(ret[k:], reward, atol=1e-5)
        cut += 0 < k < len(exact)
    assert cut > 10


@pytest.mark.slow
def test_endgame_bootstrap_resumes_exactly(tmp_path):
    train.main(tiny_args(tmp_path, run_name="straight", total_steps=3500, threads=1, endgame_bootstrap=True))
    train.main(tiny_args(tmp_path, run_name="split", total_steps=3500, stop_after_updates=1, threads=1,
                         endgame_bootstrap=True))
    st = load_checkpoint(tmp_path / "split" / "checkpoint.pt")["trainer"]["samplers"]
    assert any(np.isfinite(s["buffer"]["exact"].numpy()).any() for s in st)  # the buffers carry exact values over
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1))
    a = load_checkpoint(tmp_path / "straight" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert a["args"]["endgame_bootstrap"] and b["args"]["endgame_bootstrap"]
    for k in a["model"]:
        torch.testing.assert_close(a["model"][k], b["model"][k], rtol=0, atol=0)


@pytest.mark.slow
def test_short_run_checkpoints_resumes_and_loads(tmp_path):
    args = tiny_args(tmp_path)
    summary = train.main(args)
    run = tmp_path / "tiny"
    assert (run / "checkpoint.pt").is_file() and (run / "policy.pt").is_file()
    assert summary["steps"] >= 3000
    ck = load_checkpoint(run / "checkpoint.pt")
    assert ck["rules"]["ruleset"] == "schnapsen20" and ck["args"]["seed"] == 3
    # Resume and extend: continues from the saved step count.
    summary2 = train.main(train.Args(resume=str(run / "checkpoint.pt"), total_steps=5000))
    assert summary2["steps"] >= 5000 > summary["steps"]
    agent = PolicyAgent.load(run / "policy.pt", seed=0)
    env = schnapsen_v0.raw_env()
    rng = np.random.default_rng(0)
    for hand in range(20):
        env.reset(seed=hand)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            a = agent.act(obs) if env.agent_selection == "player_0" else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            assert obs["action_mask"][a] == 1
            env.step(a)


def test_a_run_resumed_from_a_checkpoint_of_an_older_version_steps_adam_fused(tmp_path):
    """The learner steps Adam fused; a checkpoint written before it did holds ``fused: None`` in its optimizer's
    param group, and ``load_state_dict`` takes the group's flags from the checkpoint: the resumed run stepped Adam
    per tensor, and wrote ``None`` again, for the rest of its life. The flags of how to step come from this version's
    optimizer, the moments and hyperparameters from the checkpoint."""
    train.main(tiny_args(tmp_path, stop_after_updates=1))  # (one inline sampler, one thread: seconds)
    ck = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")
    opt = ck["trainer"]["optimizer"]
    assert opt["param_groups"][0]["fused"] is True
    old = dict(opt, param_groups=[dict(g, fused=None) for g in opt["param_groups"]])  # as versions up to d55108a wrote it
    save_atomic(dict(ck, trainer=dict(ck["trainer"], optimizer=old)), tmp_path / "tiny" / "checkpoint.pt")
    train.main(train.Args(resume=str(tmp_path / "tiny" / "checkpoint.pt"), stop_after_updates=1))
    resumed = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")["trainer"]
    assert resumed["update"] == 2
    group = resumed["optimizer"]["param_groups"][0]
    assert group["fused"] is True and group["foreach"] is None


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.slow
def test_resume_is_exact(tmp_path, threads):
    """Bit for bit with one learner thread. With more, MKL's multi-threaded GEMMs may round differently once the
    resumed tensors sit at other addresses (its results depend on memory alignment), so the weights agree to float
    rounding only; every count agrees exactly either way."""
    train.main(tiny_args(tmp_path, run_name="straight", total_steps=3500, threads=threads))
    stopped = train.main(tiny_args(tmp_path, run_name="split", total_steps=3500, stop_after_updates=1,
                                   threads=threads))
    assert stopped["steps"] < 3500 and not (tmp_path / "split" / "policy.pt").exists()
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=threads))
    a = load_checkpoint(tmp_path / "straight" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    for key in ("global_step", "update", "hands"):
        assert a["trainer"][key] == b["trainer"][key]
    tol = 0 if threads == 1 else 1e-5
    for k in a["model"]:
        torch.testing.assert_close(a["model"][k], b["model"][k], rtol=0, atol=tol)


def test_seeded_run_is_reproducible(tmp_path):
    train.main(tiny_args(tmp_path, run_name="r1", total_steps=1500))
    train.main(tiny_args(tmp_path, run_name="r2", total_steps=1500))
    a = load_checkpoint(tmp_path / "r1" / "policy.pt")["model"]
    b = load_checkpoint(tmp_path / "r2" / "policy.pt")["model"]
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)


def test_tail_average_is_the_mean_of_the_weights_after_each_of_the_last_updates(tmp_path):
    """--average-last: policy.pt is the uniform mean of the weights after each update of the window (the tiny run
    keeps a pool snapshot after every update, so the pool holds them), checkpoint.pt the last weights."""
    # 5000 decisions in batches of >= 1024: 4 updates planned, the last half (updates 3, 4, and any after) averaged.
    train.main(tiny_args(tmp_path, total_steps=5000, average_last=0.5))
    ck = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")
    tr = ck["trainer"]
    snapshots = tr["pool"]  # after updates 1..update
    assert tr["update"] == len(snapshots) >= 4
    window = snapshots[2:]
    assert tr["average"]["count"] == len(window)
    policy = load_checkpoint(tmp_path / "tiny" / "policy.pt")["model"]
    for k in policy:
        torch.testing.assert_close(policy[k], torch.stack([s[k] for s in window]).mean(0), rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(ck["model"][k], snapshots[-1][k], rtol=0, atol=0)
    assert any(not torch.equal(policy[k], ck["model"][k]) for k in policy)  # an average, not the last weights
    # Without averaging the run trains the same weights and writes the last ones.
    train.main(tiny_args(tmp_path, run_name="plain", total_steps=5000, average_last=0.0))
    plain = load_checkpoint(tmp_path / "plain" / "checkpoint.pt")
    assert plain["trainer"]["average"] is None
    _weights_equal(plain["model"], ck["model"])
    _weights_equal(load_checkpoint(tmp_path / "plain" / "policy.pt")["model"], plain["model"])


@pytest.mark.slow
def test_tail_average_resumes_exactly_and_a_malformed_one_is_refused(tmp_path):
    train.main(tiny_args(tmp_path, run_name="straight", total_steps=5000, average_last=0.5))
    # Stop inside the window (after update 3, the average holding one update), then resume.
    train.main(tiny_args(tmp_path, run_name="split", total_steps=5000, average_last=0.5, stop_after_updates=3))
    ck = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert ck["trainer"]["update"] == 3 and ck["trainer"]["average"]["count"] == 1
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1))  # bit for bit: the first run's one thread
    _weights_equal(load_checkpoint(tmp_path / "straight" / "policy.pt")["model"],
                   load_checkpoint(tmp_path / "split" / "policy.pt")["model"])
    bad = dict(ck, trainer=dict(ck["trainer"], average={"weights": ck["model"], "count": 0}))
    save_atomic(bad, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="'average' count is 0, expected the number of updates averaged"):
        train.main(train.Args(resume=str(tmp_path / "bad.pt")))
    nan = {k: torch.full_like(v, float("nan")) for k, v in ck["model"].items()}
    save_atomic(dict(ck, trainer=dict(ck["trainer"], average={"weights": nan, "count": 1})), tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match="'average' weights .* holds NaN"):
        train.main(train.Args(resume=str(tmp_path / "nan.pt")))
    # A checkpoint from before the flag (no 'average' key) resumes, without averaging.
    train.main(tiny_args(tmp_path, run_name="old", total_steps=5000, stop_after_updates=2, average_last=0.0))
    old = load_checkpoint(tmp_path / "old" / "checkpoint.pt")
    trainer = dict(old["trainer"])
    del trainer["average"]
    args = {k: v for k, v in old["args"].items() if k != "average_last"}
    save_atomic(dict(old, trainer=trainer, args=args), tmp_path / "old.pt")
    assert train.main(train.Args(resume=str(tmp_path / "old.pt")))["steps"] >= 5000


def test_tail_average_window_is_one_of_planned_updates_and_holds_the_last_update(tmp_path):
    """A batch holds more than --batch-size decisions (whole steps of the vector env), so a run makes fewer updates
    than --total-steps / --batch-size plans: the window counts back from the plan, and the last update is in it
    however small the share (summary.json counts the updates averaged)."""
    kw = dict(total_steps=2560, num_envs=64, batch_size=256, minibatch_size=64)  # 10 updates planned, fewer made
    summary = train.main(tiny_args(tmp_path, run_name="half", average_last=0.5, **kw))
    tr = load_checkpoint(tmp_path / "half" / "checkpoint.pt")["trainer"]
    made = tr["update"]
    assert made < 10 and tr["average"]["count"] == summary["averaged_updates"] == made - 5  # updates 6.. made
    policy = load_checkpoint(tmp_path / "half" / "policy.pt")["model"]
    for k in policy:
        torch.testing.assert_close(policy[k], torch.stack([s[k] for s in tr["pool"][5:made]]).mean(0),
                                   rtol=1e-6, atol=1e-7)
    summary = train.main(tiny_args(tmp_path, run_name="tiny_share", average_last=1e-4, **kw))
    assert summary["averaged_updates"] == 1
    ck = load_checkpoint(tmp_path / "tiny_share" / "checkpoint.pt")
    _weights_equal(load_checkpoint(tmp_path / "tiny_share" / "policy.pt")["model"], ck["model"])


def test_privileged_critic_runs(tmp_path):
    train.main(tiny_args(tmp_path, run_name="priv", privileged_critic=True, total_steps=1200))
    ck = load_checkpoint(tmp_path / "priv" / "policy.pt")
    assert ck["net"]["critic_extra"] > 0
    PolicyAgent.load(tmp_path / "priv" / "policy.pt")  # the policy head alone plays


def test_bad_checkpoints_are_refused(tmp_path):
    bad = tmp_path / "garbage.pt"
    bad.write_bytes(b"not a torch file")
    with pytest.raises(CheckpointError, match="cannot be read"):
        PolicyAgent.load(bad)
    with pytest.raises(CheckpointError, match="does not exist"):
        PolicyAgent.load(tmp_path / "missing.pt")
    partial = tmp_path / "partial.pt"
    save_atomic({"model": {}}, partial)
    with pytest.raises(CheckpointError, match="lacks key"):
        PolicyAgent.load(partial)
    model = ActorCritic(299, 31, hidden=8)
    ck = policy_checkpoint(model, RuleSet.make("sixtysix24"), tiny_args(tmp_path))
    save_atomic(ck, tmp_path / "s66.pt")
    with pytest.raises(CheckpointError, match="trained for sixtysix24"):
        PolicyAgent.load(tmp_path / "s66.pt", rules="schnapsen20")
    ck["layout"] = {**ck["layout"], "version": 0}
    save_atomic(ck, tmp_path / "old_layout.pt")
    with pytest.raises(CheckpointError, match="layout version"):
        PolicyAgent.load(tmp_path / "old_layout.pt")
    agent = PolicyAgent.load(tmp_path / "s66.pt")
    env = schnapsen_v0.raw_env()  # schnapsen20 observations have the wrong length
    env.reset(seed=0)
    with pytest.raises(ValueError, match="trained on sixtysix24"):
        agent.act(env.observe(env.agent_selection))


@pytest.mark.slow
def test_learning_beats_random_clearly(tmp_path):
    args = tiny_args(tmp_path, run_name="learn", total_steps=120_000, num_envs=128, batch_size=8192,
                     minibatch_size=1024, update_epochs=4, hidden=128, checkpoint_every=100, pool_every=5,
                     seed=11, learning_rate=1e-3)
    train.main(args)
    res = play_match(str(tmp_path / "learn" / "policy.pt"), "random", n_deals=300, seed=123, workers=1,
                     progress=False)
    # Random play scores 0 on average against random; the margin below held with room to spare.
    assert res.ci_low > 0.5, res.table()
    assert res.hand_win_rate > 0.65, res.table()


@pytest.mark.parametrize("flags, message", [
    (dict(batch_size=0), "--batch-size"), (dict(pool_size=0), "--pool-size"), (dict(pool_every=0), "--pool-every"),
    (dict(heuristic_prob=0.8, pool_prob=0.3), "sum <= 1"), (dict(device="cuda:nonsense"), "--device"),
    (dict(final_eval_opponents=("bogus",)), "unknown agent"), (dict(ruleset="bridge"), "ruleset"),
    # 0 once fell back to the defaults (``x or default``) instead of being refused (bug)
    (dict(total_steps=0), "--total-steps"), (dict(samplers=0), "--samplers"), (dict(threads=0), "--threads"),
    (dict(sampler_nice=20), "--sampler-nice"), (dict(sampler_nice=-1), "--sampler-nice"),
    (dict(average_last=-0.1), "--average-last"), (dict(average_last=1.5), "--average-last"),
    (dict(average_last=float("nan")), "--average-last"),
])
def test_bad_flags_refused_before_any_work(tmp_path, flags, message):
    with pytest.raises(ValueError, match=message):
        train.main(tiny_args(tmp_path, **flags))
    assert not (tmp_path / "tiny").exists()


def test_a_new_run_never_overwrites_a_finished_one_bug(tmp_path):
    """Reusing --run-name once replaced the earlier run's policy and checkpoint without a word."""
    train.main(tiny_args(tmp_path, total_steps=1000))
    before = (tmp_path / "tiny" / "policy.pt").read_bytes()
    with pytest.raises(ValueError, match="already holds a run: continue it with --resume"):
        train.main(tiny_args(tmp_path, total_steps=1000, seed=4))
    assert (tmp_path / "tiny" / "policy.pt").read_bytes() == before


def test_precision_flag_resolves_and_refuses_unknown_values(tmp_path):
    assert resolve_precision("fp32") == "fp32" and resolve_precision("bf16") == "bf16"
    assert resolve_precision("auto") == ("bf16" if native_bf16("cpu") else "fp32")
    with pytest.raises(ValueError, match="--precision 'fp16'"):
        train.main(tiny_args(tmp_path, precision="fp16"))
    assert not (tmp_path / "tiny").exists()
    train.main(tiny_args(tmp_path, precision="auto", total_steps=1000))
    assert load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")["args"]["precision"] == resolve_precision("auto")


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_sampler_and_learner_compute_the_same_log_probs(precision):
    """The samplers compute in the learner's precision, so the update's first probability ratios start at 1: the
    log-probabilities a sampler stored equal the learner network's on the same rows (bf16: to its rounding)."""
    torch.manual_seed(0)
    net = ActorCritic(255, 27, hidden=64)
    sampler = Sampler(0, rules_of(train.Args()), 8, 5, net.config(), 200, 0.0, 0.0, 1.0, 0.95,
                      precision=precision)
    batch, _ = sampler.collect({k: v.clone() for k, v in net.state_dict().items()}, None, 200)
    net.precision = precision
    with torch.no_grad():
        _, logp, _, _ = net.get_action_and_value(torch.from_numpy(batch["obs"]), torch.from_numpy(batch["masks"]),
                                                 torch.from_numpy(batch["actions"]))
    torch.testing.assert_close(logp, torch.from_numpy(batch["logp"]), rtol=0, atol=1e-5)
    if precision == "bf16":  # and it does compute in bfloat16: float32 differs
        net.precision = "fp32"
        with torch.no_grad():
            _, logp32, _, _ = net.get_action_and_value(torch.from_numpy(batch["obs"]),
                                                       torch.from_numpy(batch["masks"]),
                                                       torch.from_numpy(batch["actions"]))
        assert not torch.equal(logp32, logp)
        torch.testing.assert_close(logp32, logp, rtol=0, atol=0.05)


def test_bf16_update_on_observations_rounded_once_equals_autocasts_rounding():
    """The bf16 learner rounds a batch's observations to bfloat16 once instead of letting autocast round every
    minibatch's: the same logits, values and gradients, bit for bit (real observations: their point and count
    features are not all exact in bfloat16)."""
    torch.manual_seed(0)
    net = ActorCritic(255, 27, hidden=64)
    sampler = Sampler(0, rules_of(train.Args()), 8, 5, net.config(), 300, 0.0, 0.0, 1.0, 0.95, precision="bf16")
    batch, _ = sampler.collect({k: v.clone() for k, v in net.state_dict().items()}, None, 300)
    obs = torch.from_numpy(batch["obs"])
    assert not torch.equal(obs.to(torch.bfloat16).float(), obs)  # rounding does change some inputs
    net.precision = "bf16"
    outs, grads = [], []
    for x in (obs, obs.to(torch.bfloat16)):
        net.zero_grad()
        _, logp, ent, value, log_probs = net.get_action_and_value(
            x, torch.from_numpy(batch["masks"]), torch.from_numpy(batch["actions"]), return_log_probs=True)
        (logp.sum() + ent.sum() + value.sum()).backward()
        outs.append((logp.detach(), value.detach(), log_probs.detach()))
        grads.append([q.grad.clone() for q in net.parameters()])
    for a, b in zip(outs[0], outs[1]):
        assert torch.equal(a, b)
    assert all(torch.equal(a, b) for a, b in zip(*grads))


@pytest.mark.slow
def test_checkpoint_from_before_the_precision_flag_resumes_in_fp32(tmp_path):
    train.main(tiny_args(tmp_path, total_steps=3000, stop_after_updates=1, precision="fp32"))
    path = tmp_path / "tiny" / "checkpoint.pt"
    ck = load_checkpoint(path)
    del ck["args"]["precision"]  # as train.py wrote it before --precision existed
    save_atomic(ck, path)
    out = train.main(train.Args(resume=str(path), tensorboard=False, progress=False))
    assert out["steps"] >= 3000
    assert load_checkpoint(path)["args"]["precision"] == "fp32"


@pytest.mark.parametrize("precision, threads", [("fp32", 4), ("bf16", 3)])
def test_default_threads_leave_the_samplers_cores_only_where_the_update_is_quick(tmp_path, monkeypatch, precision,
                                                                                 threads):
    """On 4 cores with 1 overlapping sampler process: a float32 update on the CPU (most of the work where the
    hardware has no bfloat16) takes every core; a bfloat16 one the 3 the sampler leaves."""
    monkeypatch.setattr(trainer_flags, "cores", lambda: 4)
    train.main(tiny_args(tmp_path, threads=None, inline_samplers=False, stop_after_updates=1, precision=precision))
    assert load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")["args"]["threads"] == threads


@pytest.mark.slow
def test_resume_takes_machine_flags_from_the_command_line(tmp_path):
    train.main(tiny_args(tmp_path, total_steps=3000, stop_after_updates=1))
    out = train.main(train.Args(resume=str(tmp_path / "tiny" / "checkpoint.pt"), threads=2, tensorboard=False,
                                progress=False))
    assert out["steps"] >= 3000
    assert load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")["args"]["threads"] == 2


def test_resume_takes_the_final_table_flags_and_refuses_a_finished_run(tmp_path):
    train.main(tiny_args(tmp_path, total_steps=3000, stop_after_updates=1, final_eval_deals=4))
    path = tmp_path / "tiny" / "checkpoint.pt"
    out = train.main(train.Args(resume=str(path), final_eval_deals=2, final_eval_opponents=("random",)))
    assert out["steps"] >= 3000 and set(out["evaluation"]) == {"random"}
    assert out["evaluation"]["random"]["deals"] == 2
    summary = (tmp_path / "tiny" / "summary.json").read_bytes()
    with pytest.raises(ValueError, match="already finished at .* pass a larger --total-steps"):
        train.main(train.Args(resume=str(path)))  # rewrote summary.json with 0 decisions/s
    assert (tmp_path / "tiny" / "summary.json").read_bytes() == summary
    (tmp_path / "tiny" / "policy.pt").unlink()  # as after a disk full at the final policy: --resume writes it
    train.main(train.Args(resume=str(path), final_eval_deals=0))
    assert (tmp_path / "tiny" / "policy.pt").exists()


def test_the_learning_rate_never_decays_to_zero_on_the_last_batches(tmp_path):
    """--total-steps rounds up to whole batches of at least --batch-size decisions, so a run can play more updates
    than total_steps // batch_size; those kept a rate of 0 (an update that did nothing)."""
    train.main(tiny_args(tmp_path, total_steps=2500, tensorboard=True))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ea = EventAccumulator(str(tmp_path / "tiny"))
    ea.Reload()
    rates = [e.value for e in ea.Scalars("charts/learning_rate")]
    assert len(rates) > 2500 // 1024 and min(rates) > 0


def test_every_update_writes_its_charts_and_losses_to_tensorboard(tmp_path):
    """Each PPO update's scalars (reporting.log_update): the charts, every loss piece's mean as losses/NAME and the
    explained variance, one value an update at the learner decisions so far."""
    summary = train.main(tiny_args(tmp_path, total_steps=2500, tensorboard=True))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ea = EventAccumulator(str(tmp_path / "tiny"))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    expected = {"charts/learning_rate", "charts/SPS", "charts/hands", "charts/teacher_labelled_share",
                "losses/pg_loss", "losses/v_loss", "losses/entropy", "losses/approx_kl", "losses/clipfrac",
                "losses/teacher", "losses/explained_variance"}
    assert expected <= tags, expected - tags
    steps = [e.step for e in ea.Scalars("losses/pg_loss")]
    assert steps == sorted(steps) and len(steps) == len(set(steps)) > 2500 // 1024
    assert steps[-1] == summary["steps"]
    assert all(0.0 <= e.value <= 1.0 for e in ea.Scalars("charts/teacher_labelled_share"))


# ------------------------------------------------------------------------------ samplers
def _weights_equal(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)


@pytest.mark.slow
def test_two_sampler_processes_train_checkpoint_resume_and_play_legally(tmp_path):
    first = train.main(tiny_args(tmp_path, samplers=2, inline_samplers=False, total_steps=2500))
    assert first["samplers"] == 2 and len(first["sampler_pids"]) == 2 and os.getpid() not in first["sampler_pids"]
    assert all(n > 0 for n in first["sampler_decisions"])  # both processes really sampled
    ck = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")
    assert len(ck["trainer"]["samplers"]) == 2 and ck["args"]["samplers"] == 2
    resumed = train.main(train.Args(resume=str(tmp_path / "tiny" / "checkpoint.pt"), total_steps=4000))
    assert resumed["steps"] >= 4000 > first["steps"]
    assert_legal_hands(PolicyAgent.load(tmp_path / "tiny" / "policy.pt", seed=0), 10)


def test_observations_packed_for_the_pipe_unpack_bit_for_bit_in_a_tenth_of_the_bytes():
    """A sampler process sends its batch's observations packed (pack_observations): unpacked they are the same
    float32 bits, -0.0, NaN, infinities and values other than 0 and 1 included, for a batch of real observations in
    at most a sixth of their bytes."""
    rules = RuleSet.make("schnapsen20")
    obs, _ = random_positions(rules, 500, np.random.default_rng(8))
    obs = obs.numpy()
    odd = np.zeros((3, obs.shape[1]), np.float32)
    odd[0, :6] = [-0.0, np.nan, np.inf, -np.inf, 1e-45, -1.0]
    odd[1, -3:] = [1.0, 0.5, 1.0000001]
    for rows in (obs, odd, obs[:0]):
        packed = pack_observations(rows)
        back = unpack_observations(pickle.loads(pickle.dumps(packed)))
        assert back.dtype == np.float32 and back.shape == rows.shape
        assert np.array_equal(back.view(np.uint32), rows.view(np.uint32))
    assert len(pickle.dumps(pack_observations(obs))) * 6 < obs.nbytes


def test_sampler_processes_match_inline_samplers_exactly(tmp_path):
    """A seeded run with a fixed sampler count gives the same weights, counts and checkpoint whether its samplers
    run as processes or in the learner's process: the chain assembly across processes loses and repeats nothing."""
    kw = dict(samplers=2, total_steps=2500, heuristic_prob=0.3, pool_prob=0.3)
    a = train.main(tiny_args(tmp_path, run_name="procs", inline_samplers=False, **kw))
    b = train.main(tiny_args(tmp_path, run_name="inline", inline_samplers=True, **kw))
    for key in ("steps", "sampler_decisions", "decisions_trained", "decisions_pending"):
        assert a[key] == b[key], key
    _weights_equal(load_checkpoint(tmp_path / "procs" / "policy.pt")["model"],
                   load_checkpoint(tmp_path / "inline" / "policy.pt")["model"])


@pytest.mark.slow
def test_overlapped_sampling_plays_the_same_batches_however_checkpoints_fall(tmp_path):
    """--overlap-sampling: the next batch is played with the weights from before the update, in flight during it
    (sampler processes, checkpoints far apart) or not (a checkpoint after every update, or samplers in the
    learner's process): the same weights and counts either way, and a run stopped and resumed mid-way plays the
    same batches. Without the overlap (strictly on-policy) the weights differ: the lag is real."""
    kw = dict(samplers=2, total_steps=4500, overlap_sampling=True, heuristic_prob=0.3, pool_prob=0.3)
    a = train.main(tiny_args(tmp_path, run_name="flight", inline_samplers=False, checkpoint_every=100, **kw))
    b = train.main(tiny_args(tmp_path, run_name="every", inline_samplers=False, checkpoint_every=1, **kw))
    c = train.main(tiny_args(tmp_path, run_name="inline", inline_samplers=True, checkpoint_every=100, **kw))
    assert a["batches_overlapped"] > 0 and b["batches_overlapped"] == 0
    assert c["batches_overlapped"] == 0  # inline samplers play a batch when it is gathered
    stopped = train.main(tiny_args(tmp_path, run_name="split", inline_samplers=False, checkpoint_every=100,
                                   stop_after_updates=2, **kw))
    assert stopped["steps"] < 4500 and load_checkpoint(tmp_path / "split" / "checkpoint.pt")["trainer"][
        "next_request"] is not None
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1))
    for key in ("steps", "sampler_decisions", "decisions_trained", "decisions_pending"):
        assert a[key] == b[key] == c[key], key
    for run in ("every", "inline", "split"):
        _weights_equal(load_checkpoint(tmp_path / "flight" / "policy.pt")["model"],
                       load_checkpoint(tmp_path / run / "policy.pt")["model"])
    train.main(tiny_args(tmp_path, run_name="sync", inline_samplers=False, **{**kw, "overlap_sampling": False}))
    sync = load_checkpoint(tmp_path / "sync" / "policy.pt")["model"]
    flight = load_checkpoint(tmp_path / "flight" / "policy.pt")["model"]
    assert any(not torch.equal(sync[k], flight[k]) for k in sync)


def _tiny_process_samplers(tmp_path):
    from schnapsen_env.encoding import obs_size
    args = tiny_args(tmp_path, samplers=2, inline_samplers=False)
    rules = rules_of(args)
    model = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers, 0)
    return start_samplers(args, rules, model.config()), model


def test_a_sampler_that_died_while_idle_is_named_and_a_busy_one_is_stopped_at_once(tmp_path):
    samplers, model = _tiny_process_samplers(tmp_path)
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    try:
        samplers.procs[1].kill()
        samplers.procs[1].join(timeout=10)
        with pytest.raises(SamplerError, match="sampler process 1 died"):
            samplers.submit(weights, None, 100_000)  # was a bare BrokenPipeError
    finally:
        t0 = time.monotonic()
        samplers.close()  # sampler 0 is busy with a collect nobody will read
        assert time.monotonic() - t0 < 4
    samplers, model = _tiny_process_samplers(tmp_path)
    try:
        samplers.submit(weights, None, 100_000)
        with pytest.raises(RuntimeError, match="in flight"):
            samplers.get_state()  # would read the collect's answer as the states
    finally:
        t0 = time.monotonic()
        samplers.close()
        assert time.monotonic() - t0 < 4


def _same_run(a: Path, b: Path) -> None:
    """The run folders ``a`` and ``b`` hold the same final weights (bit for bit) and counts."""
    _weights_equal(load_checkpoint(a / "policy.pt")["model"], load_checkpoint(b / "policy.pt")["model"])
    ta, tb = load_checkpoint(a / "checkpoint.pt")["trainer"], load_checkpoint(b / "checkpoint.pt")["trainer"]
    for key in ("global_step", "update", "hands"):
        assert ta[key] == tb[key], key


@pytest.mark.slow
def test_a_killed_sampler_process_ends_the_run_in_one_line_whose_command_continues_it_exactly(tmp_path, monkeypatch,
                                                                                              capsys):
    """SIGKILL of a sampler process (the out-of-memory killer) while it plays update 3's batch: status 1, one line
    naming the sampler, the last good checkpoint (update 2) and the command that continues the run, no process left;
    that command, run as printed, ends the run with the weights and counts of a run never interrupted (bit for bit,
    as --resume after --stop-after-updates: one learner thread)."""
    argv = tiny_argv(tmp_path, samplers=2, inline_samplers=False, total_steps=5000, run_name="killed")
    lose_a_sampler(train, kill_at=3, sampler=1, setattr_=monkeypatch.setattr)
    procs = []
    real_close = ProcessSamplers.close
    monkeypatch.setattr(ProcessSamplers, "close", lambda self: procs.extend(self.procs) or real_close(self))
    assert train.cli(argv) == 1
    out, err = capsys.readouterr()
    ckpt = tmp_path / "killed" / "checkpoint.pt"
    steps = load_checkpoint(ckpt)["trainer"]["global_step"]
    command = f"python train.py --resume {ckpt} --no-progress --threads 1 --no-tensorboard --final-eval-deals 0"
    assert err == (f"train.py: error: sampler process 1 died (exit code -9); the last good checkpoint '{ckpt}' "
                   f"(update 2, {steps:,} steps) is kept: continue with: {command}\n")
    assert len(procs) == 2 and not any(p.is_alive() for p in procs)
    monkeypatch.undo()
    printed = shlex.split(err.split("continue with: ")[1])
    assert printed[:2] == ["python", "train.py"] and train.cli(printed[2:]) == 0
    train.main(tiny_args(tmp_path, samplers=2, total_steps=5000, run_name="straight"))
    _same_run(tmp_path / "killed", tmp_path / "straight")


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="POSIX scheduling priorities")
@pytest.mark.parametrize("overlap", [True, False])
@pytest.mark.slow
def test_overlapping_sampler_processes_yield_the_cores_to_the_learner(tmp_path, overlap):
    """--overlap-sampling: the sampler processes run at SAMPLER_NICE below the learner, so that the update keeps
    its core; without the overlap nothing runs beside them and they keep the learner's priority."""
    from agents.training.self_play import SAMPLER_NICE
    from schnapsen_env.encoding import obs_size
    args = tiny_args(tmp_path, samplers=2, inline_samplers=False, overlap_sampling=overlap)
    rules = rules_of(args)
    samplers = start_samplers(args, rules, ActorCritic(obs_size(rules), rules.n_actions, 32).config())
    try:
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        found = [os.getpriority(os.PRIO_PROCESS, p.pid) for p in samplers.procs]
    finally:
        samplers.close()
    assert found == [min(19, ours + SAMPLER_NICE) if overlap else ours] * 2
    if overlap:  # --sampler-nice 0: equal priority (a machine shared with other busy jobs)
        samplers = start_samplers(dataclasses.replace(args, sampler_nice=0), rules,
                                        ActorCritic(obs_size(rules), rules.n_actions, 32).config())
        try:
            assert [os.getpriority(os.PRIO_PROCESS, p.pid) for p in samplers.procs] == [ours] * 2
        finally:
            samplers.close()


@pytest.mark.slow
def test_a_checkpoint_without_next_request_resumes_and_a_malformed_one_is_refused(tmp_path):
    train.main(tiny_args(tmp_path, total_steps=3000, stop_after_updates=1, overlap_sampling=True))
    path = tmp_path / "tiny" / "checkpoint.pt"
    ck = load_checkpoint(path)
    assert ck["trainer"]["next_request"] is not None
    bad = {**ck, "trainer": {**ck["trainer"], "next_request": {"weights": {}, "opponent": None}}}
    save_atomic(bad, path)
    with pytest.raises(CheckpointError, match="next_request"):
        train.main(train.Args(resume=str(path), threads=1))
    old = {**ck, "trainer": {k: v for k, v in ck["trainer"].items() if k != "next_request"}}
    save_atomic(old, path)
    assert train.main(train.Args(resume=str(path), threads=1))["steps"] >= 3000


def test_every_learner_decision_is_trained_once_or_pending(tmp_path):
    out = train.main(tiny_args(tmp_path, samplers=2, total_steps=3000))
    assert sum(out["sampler_decisions"]) == out["steps"]
    assert out["decisions_trained"] + out["decisions_pending"] == out["steps"]
    assert out["decisions_pending"] > 0  # hands were still running: their decisions wait, none are dropped


def test_sampler_returns_each_decision_once_with_its_chain():
    rules = RuleSet.make("schnapsen20")
    net = ActorCritic(255, 27, hidden=16).config()
    s = Sampler(0, rules, num_envs=8, seed=5, net=net, rows_per_call=100, pool_prob=0.0, heuristic_prob=0.5,
                gamma=1.0, gae_lambda=0.95)
    weights = ActorCritic(**net).state_dict()
    taken = returned = 0
    for _ in range(6):
        batch, stats = s.collect(weights, None, 100)
        taken += stats["decisions"]
        returned += len(batch["actions"])
        assert len(batch["actions"]) >= 100 and stats["pending"] == s.buf.size
        assert np.all(batch["masks"][np.arange(len(batch["actions"])), batch["actions"]] == 1)  # legal actions only
        assert np.all(np.abs(batch["ret"]) <= 3)  # returns end in one hand's game points (at most 3)
    assert returned + s.buf.size == taken


def test_rule_knobs_reach_the_samplers_checkpoint_and_evaluation(tmp_path):
    train.main(tiny_args(tmp_path, knob=("close_min_stock=3", "false_claim=mirror"), total_steps=1200,
                         final_eval_deals=5, final_eval_opponents=("random",)))
    ck = load_checkpoint(tmp_path / "tiny" / "policy.pt")
    assert ck["rules"]["close_min_stock"] == 3 and ck["rules"]["false_claim"] == "mirror"
    for knob, message in ((("close_min_stock",), "KEY=VALUE"), (("no_such_knob=1",), "no_such_knob"),
                          (("close_min_stock=3", "close_min_stock=2"), "given twice")):
        with pytest.raises(ValueError, match=message):
            train.main(tiny_args(tmp_path, run_name="bad", knob=knob))
    assert not (tmp_path / "bad").exists()


def test_repeated_knob_flags_add_up_instead_of_replacing_each_other():
    """tyro keeps only the last of several ``--knob`` flags: ``--knob false_claim=mirror --knob close_min_stock=3``
    trained with false_claim=reject, silently. Repeated, they add up (as in the arena); a key twice is refused."""
    train_rllib = load_script("train_rllib.py")

    for cls in (train.Args, train_rllib.RLlibArgs):
        for argv in (["--knob", "false_claim=mirror", "--seed", "4", "--knob", "close_min_stock=3"],
                     ["--knob=false_claim=mirror", "--knob", "close_min_stock=3", "--seed", "4"],
                     ["--seed", "4", "--knob", "false_claim=mirror", "close_min_stock=3"]):
            args = parse_args(argv, cls, "train.py")
            rules = rules_of(args).to_dict()
            assert args.seed == 4 and rules["false_claim"] == "mirror" and rules["close_min_stock"] == 3, argv
        with pytest.raises(ValueError, match="--knob close_min_stock is given twice"):
            rules_of(parse_args(["--knob", "close_min_stock=3", "--knob", "close_min_stock=4"], cls, "train.py"))


@pytest.mark.slow
def test_tiny_ray_run_samples_on_actors(tmp_path):
    pytest.importorskip("ray")
    import ray

    try:
        out = train.main(tiny_args(tmp_path, samplers=2, inline_samplers=False, ray_address="local",
                                   total_steps=2000))
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert out["samplers"] == 2 and all(n > 0 for n in out["sampler_decisions"])
    assert len(out["sampler_pids"]) == 2 and os.getpid() not in out["sampler_pids"]  # the actors sampled
    PolicyAgent.load(tmp_path / "tiny" / "policy.pt")


def test_ctrl_c_names_the_checkpoint_kept_and_the_command_that_continues(tmp_path, monkeypatch, capsys):
    """Ctrl-C after update 2's checkpoint: status 130 and one line with the checkpoint kept and the command that
    continues the run (it was "continue with --resume", without the checkpoint or the flags)."""
    real_save = RunFiles.save_checkpoint

    def save_then_interrupt(self, model, rules, args, trainer):
        real_save(self, model, rules, args, trainer)
        if trainer["update"] == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(RunFiles, "save_checkpoint", save_then_interrupt)
    assert train.cli(tiny_argv(tmp_path)) == 130
    ckpt = tmp_path / "tiny" / "checkpoint.pt"
    steps = load_checkpoint(ckpt)["trainer"]["global_step"]
    assert capsys.readouterr().err == (
        f"\ntrain.py: interrupted: the last good checkpoint '{ckpt}' (update 2, {steps:,} steps) is kept: continue "
        f"with: python train.py --resume {ckpt} --no-progress --threads 1 --no-tensorboard --inline-samplers "
        "--final-eval-deals 0\n")


def test_sigterm_stops_the_run_as_ctrl_c_does_naming_the_checkpoint_and_the_command(tmp_path, monkeypatch, capsys):
    """SIGTERM (``kill``, a scheduler's time limit) after update 2's checkpoint: status 143, one line with the
    checkpoint kept and the command that continues (it was a bare traceback-less death with no message), and the
    previous SIGTERM handler is back afterwards."""
    real_save = RunFiles.save_checkpoint

    def save_then_terminate(self, model, rules, args, trainer):
        real_save(self, model, rules, args, trainer)
        if trainer["update"] == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(RunFiles, "save_checkpoint", save_then_terminate)
    before = signal.getsignal(signal.SIGTERM)
    assert train.cli(tiny_argv(tmp_path)) == 143
    assert signal.getsignal(signal.SIGTERM) is before
    ckpt = tmp_path / "tiny" / "checkpoint.pt"
    assert load_checkpoint(ckpt)["trainer"]["update"] == 2
    steps = load_checkpoint(ckpt)["trainer"]["global_step"]
    assert capsys.readouterr().err == (
        f"\ntrain.py: terminated: the last good checkpoint '{ckpt}' (update 2, {steps:,} steps) is kept: continue "
        f"with: python train.py --resume {ckpt} --no-progress --threads 1 --no-tensorboard --inline-samplers "
        "--final-eval-deals 0\n")


def test_a_killed_ray_actor_ends_the_run_in_one_line_naming_it_and_its_node(tmp_path, monkeypatch, capsys):
    """On a local Ray (the cluster tests below are slow): sampler actor 0's process SIGKILLed while it plays update
    3's batch ends the run with status 1 and one line naming the actor, its node and Ray's cause, the checkpoint kept
    and the command that continues (with --ray-address); no actor process is left."""
    pytest.importorskip("ray")
    import ray

    lose_a_sampler(train, kill_at=3, sampler=0, setattr_=monkeypatch.setattr)
    placements = []
    real_close = RaySamplers.close
    monkeypatch.setattr(RaySamplers, "close", lambda self: placements.append(self.placement) or real_close(self))
    try:
        status = train.cli(tiny_argv(tmp_path, samplers=2, inline_samplers=False, ray_address="local",
                                     total_steps=5000))
    finally:
        if ray.is_initialized():
            ray.shutdown()
    out, err = capsys.readouterr()
    assert status == 1 and "Traceback" not in out + err
    (where,) = placements
    ckpt = tmp_path / "tiny" / "checkpoint.pt"
    steps = load_checkpoint(ckpt)["trainer"]["global_step"]
    assert err.splitlines()[-1] == (
        f"train.py: error: sampler actor 0 on node {where[0]['node'][:12]} ({where[0]['ip']}, pid {where[0]['pid']}) "
        f"died: its worker process has died; the last good checkpoint '{ckpt}' (update 2, {steps:,} steps) is kept: "
        f"continue with: python train.py --resume {ckpt} --no-progress --threads 1 --no-tensorboard --ray-address "
        "local --final-eval-deals 0")
    assert f"sampler actors: 0 on node {where[0]['node'][:12]}" in out
    for p in where:
        wait_gone(p["pid"])


def test_ray_death_causes_in_a_few_words():
    """Ray's long reports of a lost actor, as the one line quotes them."""
    died = ("The actor died unexpectedly before finishing this task.\n\tclass_name: RaySampler\n\tactor_id: 5996\n"
            "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit "
            "detail: Worker unexpectedly exits with a connection error code 2. End of file.")
    node = ("The actor died unexpectedly before finishing this task.\n\tclass_name: RaySampler\n"
            "The actor died because its node has died. Node Id: 73eef3601aaf")
    killed = "The actor died unexpectedly before finishing this task.\nThe actor is dead because it was killed by `ray.kill`."
    unreachable = ("The actor 5996e7ff is unavailable: The actor is temporarily unavailable: RpcError: RPC error: "
                   "Socket closed rpc_code: 14. The task may or may not have been executed on the actor.")
    assert ray_death_cause(RuntimeError(died)) == "its worker process has died"
    assert ray_death_cause(RuntimeError(node)) == "its node has died"
    assert ray_death_cause(RuntimeError(killed)) == "it was killed by `ray.kill`"
    assert ray_death_cause(RuntimeError(unreachable)) == ("it is unreachable (The actor is temporarily unavailable: "
                                                         "RpcError: RPC error: Socket closed rpc_code: 14)")
    assert ray_death_cause(RuntimeError("")) == "RuntimeError"


# ------------------------------------------------------------------------------ a Ray cluster of two nodes
@pytest.fixture
def ray_cluster():
    """A head and a worker node started with ``ray start`` (one CPU each, resources of their own); every process of
    the cluster is killed afterwards, and none may survive, whatever the test did."""
    pytest.importorskip("ray")
    if not Path("/proc/self/stat").is_file():
        pytest.skip("the cluster's processes are found through Linux's /proc")
    cluster = RayCluster()
    try:
        cluster.add_node(resources={"head_node": 1})
        cluster.add_node(resources={"worker_node": 1})
        yield cluster
    finally:
        cluster.stop()
    assert not cluster.survivors(), "processes of the Ray cluster still run:\n" + "\n".join(cluster.survivors())


def _train_losing_a_sampler(cluster: RayCluster, argv: list[str], kill_at: int, target: list[str]):
    """``train.py ARGV`` on the cluster, in a process of its own, SIGKILLing ``target`` (``["--sampler", I]`` or
    ``["--pid", P]``) while its samplers play update ``kill_at``'s batch (:mod:`helpers.sampler_loss`)."""
    cmd = [sys.executable, str(ROOT / "tests" / "helpers" / "sampler_loss.py"), "--kill-at", str(kill_at), *target,
           "--", *argv, "--ray-address", cluster.address]
    return subprocess.run(cmd, cwd=ROOT, env=cluster.env, capture_output=True, text=True, timeout=300)


def _placement(stdout: str) -> dict[int, tuple[str, str, int]]:
    """The trainer's line ``sampler actors: 0 on node ID (IP, pid PID), ...`` as {sampler: (node, ip, pid)}."""
    line = next(ln for ln in stdout.splitlines() if ln.startswith("sampler actors: "))
    return {int(i): (node, ip, int(pid))
            for i, node, ip, pid in re.findall(r"(\d+) on node ([0-9a-f]+) \(([^,]+), pid (\d+)\)", line)}


def _one_error_line(run) -> str:
    """The run's error: one line, its last on stderr, and no traceback anywhere."""
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    errors = [ln for ln in run.stderr.splitlines() if "error" in ln.lower()]
    assert errors == [run.stderr.splitlines()[-1]], run.stderr
    return errors[0]


def _resume_as_printed(error: str, cluster: RayCluster, **popen) -> subprocess.Popen:
    """The command the error line prints after ``continue with:``, started as a user types it."""
    command = shlex.split(error.split("continue with: ")[1])
    assert command[:2] == ["python", "train.py"] and "--ray-address" in command
    return subprocess.Popen([sys.executable, *command[1:]], cwd=ROOT, env=cluster.env, **popen)


@pytest.mark.slow
def test_two_ray_nodes_each_run_a_sampler_and_a_killed_actor_ends_the_run_in_one_line_that_resumes_it(tmp_path,
                                                                                                   ray_cluster):
    """train.py on a cluster of two nodes (``ray start``): the two sampler actors are spread over both (the run says
    where each runs, summary.json keeps the nodes). Sampler actor 1's process SIGKILLed while it plays update 3's
    batch: status 1, one line naming the actor, its node and the last good checkpoint (update 2), and the command
    that continues; that command, run on the cluster as printed, ends the run with the weights and counts of a run
    never interrupted, bit for bit (samplers in the learner's process, one learner thread)."""
    head, worker = ray_cluster.nodes
    argv = tiny_argv(tmp_path, samplers=2, inline_samplers=False, total_steps=5000, run_name="cluster")
    run = _train_losing_a_sampler(ray_cluster, argv, kill_at=3, target=["--sampler", "1"])
    error = _one_error_line(run)
    where = _placement(run.stdout)
    assert {where[0][0], where[1][0]} == {head.node_id[:12], worker.node_id[:12]}  # one sampler on each node
    ckpt = tmp_path / "cluster" / "checkpoint.pt"
    steps = load_checkpoint(ckpt)["trainer"]["global_step"]
    node, ip, pid = where[1]
    assert error == (f"train.py: error: sampler actor 1 on node {node} ({ip}, pid {pid}) died: its worker process has "
                     f"died; the last good checkpoint '{ckpt}' (update 2, {steps:,} steps) is kept: continue with: "
                     f"python train.py --resume {ckpt} --no-progress --threads 1 --no-tensorboard --ray-address "
                     f"{ray_cluster.address} --final-eval-deals 0")
    resumed = _resume_as_printed(error, ray_cluster, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = resumed.communicate(timeout=300)[0]
    assert resumed.returncode == 0, out
    summary = json.loads((tmp_path / "cluster" / "summary.json").read_text())
    assert set(summary["sampler_nodes"]) == {head.node_id, worker.node_id}
    train.main(tiny_args(tmp_path, samplers=2, total_steps=5000, run_name="straight"))
    _same_run(tmp_path / "cluster", tmp_path / "straight")


@pytest.mark.slow
def test_a_lost_ray_node_ends_the_run_in_one_line_and_the_run_resumes_once_a_node_joins(tmp_path, ray_cluster):
    """The worker node lost (its raylet SIGKILLed) while its sampler actor plays update 3's batch: status 1, one line
    naming that actor and node and the command that continues. Run at once on the one node left, that command says
    the cluster lacks a CPU for the second actor and waits; once a new node joins it ends the run with the weights
    and counts of a run never interrupted, bit for bit."""
    head, worker = ray_cluster.nodes
    argv = tiny_argv(tmp_path, samplers=2, inline_samplers=False, total_steps=5000, run_name="cluster")
    run = _train_losing_a_sampler(ray_cluster, argv, kill_at=3, target=["--pid", str(worker.raylet)])
    error = _one_error_line(run)
    where = _placement(run.stdout)
    lost = next(i for i, (node, _, _) in where.items() if node == worker.node_id[:12])
    node, ip, pid = where[lost]
    ckpt = tmp_path / "cluster" / "checkpoint.pt"
    steps = load_checkpoint(ckpt)["trainer"]["global_step"]
    assert error.startswith(f"train.py: error: sampler actor {lost} on node {node} ({ip}, pid {pid}) died: ")
    assert error.endswith(f"; the last good checkpoint '{ckpt}' (update 2, {steps:,} steps) is kept: continue with: "
                          f"python train.py --resume {ckpt} --no-progress --threads 1 --no-tensorboard --ray-address "
                          f"{ray_cluster.address} --final-eval-deals 0")
    worker.proc.wait(timeout=60)  # the node's ray start stops the rest of it
    wait_gone(pid)
    ray_cluster.wait_nodes(1)
    log = tmp_path / "resumed.log"
    with open(log, "w") as f:
        resumed = _resume_as_printed(error, ray_cluster, stdout=f, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "waiting for nodes to join" not in log.read_text():
            assert resumed.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert ("the Ray cluster has 1 CPU(s) and the 2 sampler actors take one each: waiting for nodes to join"
                in log.read_text())
        joined = ray_cluster.add_node()
        assert resumed.wait(timeout=300) == 0, log.read_text()
    finally:
        if resumed.poll() is None:
            resumed.kill()
            resumed.wait()
    summary = json.loads((tmp_path / "cluster" / "summary.json").read_text())
    assert set(summary["sampler_nodes"]) == {head.node_id, joined.node_id}
    train.main(tiny_args(tmp_path, samplers=2, total_steps=5000, run_name="straight"))
    _same_run(tmp_path / "cluster", tmp_path / "straight")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("precision, tol", [("bf16", 5e-3), ("fp32", 1e-5)])
def test_tiny_run_on_cuda(tmp_path, precision, tol):
    """A run on a CUDA device in bfloat16 (``--precision auto`` there) and in float32 (the sparse first layer and
    fused Adam on the device): a seeded run repeats bit for bit; stopped and resumed, it plays the same decisions
    and hands and ends with the weights of the run never stopped up to the precision's rounding (cuBLAS may pick
    other kernels for the resumed tensors; a bfloat16 rounding is 2**-8 of the value); its policy loads on the CPU."""
    kw = dict(device="cuda", precision=precision, total_steps=3500, threads=1)
    out = train.main(tiny_args(tmp_path, run_name="straight", **kw))
    assert out["steps"] >= 3500
    train.main(tiny_args(tmp_path, run_name="again", **kw))
    _same_run(tmp_path / "straight", tmp_path / "again")
    stopped = train.main(tiny_args(tmp_path, run_name="split", stop_after_updates=1, **kw))
    assert stopped["steps"] < 3500
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1))
    a = load_checkpoint(tmp_path / "straight" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    for key in ("global_step", "update", "hands"):
        assert a["trainer"][key] == b["trainer"][key]
    for k in a["model"]:
        torch.testing.assert_close(a["model"][k], b["model"][k], rtol=0, atol=tol)
    agent = PolicyAgent.load(tmp_path / "straight" / "policy.pt")
    assert next(agent.model.parameters()).device.type == "cpu"


# ------------------------------------------------------------------------------ endgame teacher
def test_teacher_loss_by_hand():
    # row 0: P = (0.5, 0.25, 0.25), best {0, 2} -> -log 0.75; row 1: unlabelled; row 2: P(1) = 0.25 -> -log 0.25
    logp = torch.log(torch.tensor([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5], [0.25, 0.25, 0.5]]))
    best = torch.tensor([[True, False, True], [False, False, False], [False, True, False]])
    taught = best.any(dim=1)
    got = train.teacher_loss(logp, best, taught).item()
    assert got == pytest.approx((-math.log(0.75) - math.log(0.25)) / 2, rel=1e-6)
    assert train.teacher_loss(logp, best & False, taught & False).item() == 0.0


def test_best_action_bits_are_the_solvers_best_actions():
    """The batch call gives, for each exhausted-stock position, exactly the actions of best exact value."""
    from agents.search.solver_core import CoreSolver
    from schnapsen_env import rules_core
    from schnapsen_env.rules import GameState
    for ruleset in ("schnapsen20", "sixtysix24", "schnapsen10"):
        rules = RuleSet.make(ruleset)
        rng = np.random.default_rng(4)
        states, expect = [], []
        solver = CoreSolver(rules)
        while len(states) < 60:
            g = GameState.new_hand(rules, rng)
            while g.result is None:
                if not g.stock and g.closed_by < 0 and len(g.legal_actions()) > 1:
                    values = solver.action_values(g)
                    best = max(values.values())
                    states.append(rules_core.from_game_state(g))
                    expect.append(sum(1 << a for a, v in values.items() if v == best))
                g.push(int(rng.choice(g.legal_actions())))
        arr = np.ascontiguousarray(np.stack(states))
        rows = np.arange(len(states))[::-1].copy()
        got = CoreSolver(rules).best_action_bits(arr, rows)
        assert got.tolist() == [expect[r] for r in rows]


def test_sampler_labels_exactly_the_exhausted_stock_choices():
    from schnapsen_env.encoding import layout
    rules = rules_of(train.Args())
    net = ActorCritic(255, 27, hidden=32)
    sampler = Sampler(0, rules, 16, 5, net.config(), 600, 0.0, 0.0, 1.0, 0.95, endgame_teacher=True)
    batch, _ = sampler.collect(net.state_dict(), None, 600)
    lay = layout(rules)
    exhausted = (batch["obs"][:, lay["stock_size"]].ravel() == 0) & (batch["obs"][:, lay["closed"]].ravel() == 0)
    choice = batch["masks"].sum(axis=1) > 1
    taught = batch["teach"] != 0
    assert taught.sum() > 50
    np.testing.assert_array_equal(taught, exhausted & choice)
    legal = (batch["masks"].astype(np.int64) << np.arange(27)).sum(axis=1)
    assert ((batch["teach"] & ~legal) == 0).all()  # only legal actions are labelled best
    quiet = Sampler(0, rules, 16, 5, net.config(), 600, 0.0, 0.0, 1.0, 0.95)
    assert not quiet.collect(net.state_dict(), None, 600)[0]["teach"].any()


def test_sampler_state_from_before_the_teacher_loads(tmp_path):
    from agents.training.self_play import sampler_state_problem
    rules = rules_of(train.Args())
    net = ActorCritic(255, 27, hidden=32)
    sampler = Sampler(0, rules, 8, 5, net.config(), 200, 0.0, 0.0, 1.0, 0.95, endgame_teacher=True)
    sampler.collect(net.state_dict(), None, 200)
    st = sampler.get_state()
    del st["buffer"]["teach"]  # as written before the endgame teacher
    capacity = len(sampler.buf.obs)
    assert sampler_state_problem(st, 8, 255, 27, capacity, 1) is None
    sampler.set_state(st)
    assert not sampler.buf.teach[:sampler.buf.size].any()


def test_nash_conv_is_tracked_over_training_on_schnapsen10(tmp_path, monkeypatch):
    """--nash-conv-every measures the policy's exact NashConv (agents.game_theory.exact) during the run and at its end, into
    summary.json and the checkpoint's history; the last figure is the final policy's. On a game of a few deals
    (agents.game_theory.exact.Tree patched to a subset: the whole game takes a minute a measurement)."""
    from agents.game_theory import exact
    from agents.learned.policy_net import load_policy

    rules = RuleSet.make("schnapsen10")
    small = [o for k, o in enumerate(exact.deals(rules)) if k % 900 == 4]
    whole = exact.Tree
    monkeypatch.setattr(exact, "Tree", lambda r: whole(r, small))
    summary = train.main(tiny_args(tmp_path, ruleset="schnapsen10", total_steps=3000, nash_conv_every=1))
    track = summary["nash_conv"]
    assert [t["step"] for t in track] == sorted({t["step"] for t in track}) and len(track) >= 3
    assert all(t["nash_conv"] > 0 and t["exploitability"] == pytest.approx(t["nash_conv"] / 2) for t in track)
    model, _, _ = load_policy(tmp_path / "tiny" / "policy.pt", "schnapsen10")
    # equal up to float summation order (torch's thread count differs outside the run)
    assert whole(rules, small).nash_conv(exact.network_policy(model))["nash_conv"] == \
        pytest.approx(track[-1]["nash_conv"], abs=1e-5)
    ck = load_checkpoint(tmp_path / "tiny" / "checkpoint.pt")
    assert [h for h in ck["trainer"]["history"] if "nash_conv" in h] == track


def test_nash_conv_needs_schnapsen10(tmp_path):
    with pytest.raises(ValueError, match="--nash-conv-every needs --ruleset schnapsen10"):
        trainer_flags.validate(tiny_args(tmp_path, nash_conv_every=5))


def test_ppo_update_takes_one_adam_step_per_minibatch(tmp_path):
    """train.ppo_update (the learner's update, shared with benchmarks/trainer.py --ceiling): epochs x minibatches
    steps, each logging every loss piece (the teacher's too, as the batch holds labelled endgame decisions), and
    the same generator state gives the same weights."""
    args = tiny_args(tmp_path, batch_size=300, minibatch_size=128, update_epochs=3)
    rules = rules_of(args)
    net = ActorCritic(obs_size(rules), rules.n_actions, args.hidden, args.layers).config()
    sampler = Sampler(**sampler_kwargs(args, rules, net, 0))
    batch, _ = sampler.collect(ActorCritic(**net).state_dict(), None, args.batch_size)
    tensors = batch_tensors(batch, torch.device("cpu"), "fp32", rules.n_actions, False)
    n = len(tensors["actions"])
    assert n >= 300 and bool(tensors["taught"].any())
    weights = []
    for _ in range(2):
        torch.manual_seed(0)
        model = ActorCritic(**net)
        before = {k: v.clone() for k, v in model.state_dict().items()}
        optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
        stats = train.ppo_update(model, optimizer, tensors, np.random.default_rng(5), args)
        steps = args.update_epochs * -(-n // args.minibatch_size)
        assert set(stats) == {"pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac", "teacher"}
        assert all(len(v) == steps for v in stats.values())
        assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())
        weights.append(model.state_dict())
    _weights_equal(weights[0], weights[1])
