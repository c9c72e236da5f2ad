"""The equilibrium by observation (``agents/game_theory/table_policy.py``, ``Tree.observation_policy``) and the
trainer's equilibrium teacher (``train.py --search-teacher cfr``): the table is CFR+'s average strategy merged by
observation (recomputed here by a plain walk), it round-trips through its file and refuses other games, its draws
follow its probabilities, the sampler's labels are draws from it on the learner's own hidden-card decisions, and a
seeded run with it is reproducible and resumes exactly."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from agents.game_theory import exact
from agents.game_theory.table_policy import ObservationTable
from agents.learned.checkpoint import load_checkpoint
from agents.learned.policy_net import ActorCritic
from agents.training.self_play import Sampler, equilibrium_table
from helpers.training import tiny_args, train
from schnapsen_env import RuleSet
from schnapsen_env.encoding import layout, obs_size

RULES = RuleSet.make("schnapsen10")
SMALL = [o for k, o in enumerate(exact.deals(RULES)) if k % 300 == 11]  # 21 deals


def _decision_rows(tree: exact.Tree):
    """Every decision row of the open part: observation, mask, node."""
    obs, masks, nodes = zip(*tree._decision_rows(1 << 30))
    return np.concatenate(obs), np.concatenate(masks), np.concatenate(nodes)


def test_table_is_the_cfr_average_merged_by_observation():
    """Recomputed with a dict: each observation's row is the sum of the reach-weighted strategy sums of the distinct
    information sets showing it, normalised; every open-part decision is in the table; a table policy's NashConv
    on the game is measurable (no row missing) and close to CFR+'s own."""
    tree = exact.Tree(RULES, SMALL)
    res = tree.cfr(40)
    table = tree.observation_policy(res["average"], "cfr+ 40 iterations")
    obs, masks, nodes = _decision_rows(tree)
    sums: dict[bytes, np.ndarray] = {}
    seen_sets: set[int] = set()
    for o, m, h in zip(obs, masks, nodes):
        s = int(tree.infoset[h])
        key = o.tobytes() + m.tobytes()
        acc = sums.setdefault(key, np.zeros(RULES.n_actions))
        if s in seen_sets:
            continue
        seen_sets.add(s)
        f, k = tree.first_child[h], tree.n_child[h]
        off = tree.set_offset[s]
        for j in range(k):
            acc[tree.action[f + j]] += res["average"][off + j]
    assert len(table) == len(sums)
    found, p = table.lookup(obs, masks)
    assert found.all()
    for i, (o, m) in enumerate(zip(obs, masks)):
        acc = sums[o.tobytes() + m.tobytes()]
        want = acc / acc.sum() if acc.sum() > 0 else m / m.sum()
        np.testing.assert_allclose(p[i], want, atol=1e-6)
    merged = tree.nash_conv(table, revealed="minimax")["nash_conv"]
    assert abs(merged - res["nash_conv"]) < 0.05 and merged >= 0


def test_table_file_round_trip_and_refusals(tmp_path):
    tree = exact.Tree(RULES, SMALL[:3])
    table = tree.observation_policy(tree.cfr(5)["average"], "cfr+ 5 iterations")
    path = tmp_path / "t.npz"
    table.save(path)
    back = ObservationTable.load(path, RULES)
    assert back.source == "cfr+ 5 iterations"
    np.testing.assert_array_equal(back.hashes, table.hashes)
    np.testing.assert_array_equal(back.probs, table.probs)
    other = RuleSet.make("schnapsen10", marriage_on_opening_lead=False)  # valid knobs (close_min_stock=1 is not)
    with pytest.raises(ValueError, match="t.npz: a table of .*'marriage_on_opening_lead': True.*, expected .*"
                                         "'marriage_on_opening_lead': False"):
        ObservationTable.load(path, other)
    (tmp_path / "bad.npz").write_bytes(b"not a table")
    with pytest.raises(ValueError, match="bad.npz: not an observation table"):
        ObservationTable.load(tmp_path / "bad.npz")
    (tmp_path / "cut.npz").write_bytes(path.read_bytes()[:2000])  # a copy cut short
    with pytest.raises(ValueError, match="cut.npz: not an observation table"):
        ObservationTable.load(tmp_path / "cut.npz")
    with pytest.raises(ValueError, match="cannot write the observation table to .*missing"):
        table.save(tmp_path / "missing" / "t.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.npz", "cut.npz", "t.npz"]
    with pytest.raises(ValueError, match="strictly increasing"):
        ObservationTable(RULES, table.hashes[::-1].copy(), table.probs)
    with pytest.raises(ValueError, match="distributions"):
        ObservationTable(RULES, table.hashes, table.probs * 2)
    obs, masks, _ = _decision_rows(exact.Tree(RULES, SMALL[5:6]))
    with pytest.raises(ValueError, match="not in the table"):
        table(obs, masks)  # another game's positions


def test_table_file_of_wrong_arrays_or_no_npz_is_named(tmp_path):
    """A file with the table's keys but arrays that are not a table names the file (the constructor's check alone
    does not); a file that is no .npz at all is called that, not a pickle to load unsafely (numpy's words)."""
    tree = exact.Tree(RULES, SMALL[:2])
    table = tree.observation_policy(tree.cfr(1)["average"])
    table.save(tmp_path / "t.npz")
    with np.load(tmp_path / "t.npz") as z:
        arrays = dict(z)
    np.savez(tmp_path / "short.npz", **{**arrays, "probs": arrays["probs"][:3]})
    with pytest.raises(ValueError, match="short.npz: not an observation table: probs must be"):
        ObservationTable.load(tmp_path / "short.npz", RULES)
    (tmp_path / "text.npz").write_text("garbage\n")
    with pytest.raises(ValueError, match="text.npz: .*not a .npz file$"):
        ObservationTable.load(tmp_path / "text.npz", RULES)


def test_lookup_checks_the_batch_shapes():
    """lookup/sample/__call__ take an empty batch and bool masks, and refuse a row or width that is not the table's
    rules' (a shorter masks array was read past its end before)."""
    tree = exact.Tree(RULES, SMALL[:2])
    table = tree.observation_policy(tree.cfr(1)["average"])
    obs, masks, _ = _decision_rows(tree)
    found, p = table.lookup(obs[:0], masks[:0])
    assert found.shape == (0,) and p.shape == (0, RULES.n_actions)
    assert table.sample(obs[:0], masks[:0], np.random.default_rng(0))[1].shape == (0,)
    np.testing.assert_array_equal(table(obs[:6], masks[:6].astype(bool)), table(obs[:6], masks[:6]))
    bad = [(obs[:5], masks[:4]), (obs[0], masks[0]), (np.c_[obs[:5], obs[:5, :1]], masks[:5]),
           (obs[:5], masks[:5, :-1])]
    for o, m in bad:
        for call in (table.lookup, table, lambda o, m: table.sample(o, m, np.random.default_rng(0))):
            with pytest.raises(ValueError, match=f"expected obs \\(B, {obs.shape[1]}\\) and masks"):
                call(o, m)


def test_table_draws_follow_its_probabilities():
    tree = exact.Tree(RULES, SMALL)
    table = tree.observation_policy(tree.cfr(40)["average"])
    obs, masks, _ = _decision_rows(tree)
    _, p = table.lookup(obs, masks)
    mixed = np.flatnonzero(((p > 0.1) & (p < 0.9)).sum(axis=1) >= 2)
    assert mixed.size
    row = mixed[0]
    n = 20_000
    found, actions = table.sample(np.repeat(obs[row:row + 1], n, 0), np.repeat(masks[row:row + 1], n, 0),
                                  np.random.default_rng(7))
    assert found.all() and (p[row, actions] > 0).all()
    legal = np.flatnonzero(p[row] > 0)
    counts = np.array([(actions == a).sum() for a in legal])
    assert chisquare(counts, n * p[row, legal] / p[row, legal].sum()).pvalue > 0.001


# ------------------------------------------------------------------------------------------------ the teacher
@pytest.fixture(scope="module")
def whole_table(tmp_path_factory):
    """The whole game's table after one CFR+ iteration (what ``--cfr-iterations 1`` solves), built once."""
    path = tmp_path_factory.mktemp("eq") / "equilibrium.npz"
    equilibrium_table(RULES, 1, path)
    return path


@pytest.mark.slow
def test_equilibrium_labels_are_table_draws_on_the_learners_hidden_card_decisions(whole_table):
    table = ObservationTable.load(whole_table, RULES)
    net = ActorCritic(obs_size(RULES), RULES.n_actions, hidden=32)
    sampler = Sampler(0, RULES, 16, 5, net.config(), 400, 0.0, 0.0, 1.0, 0.95, endgame_teacher=True,
                      search_share=0.5, equilibrium=str(whole_table))
    assert sampler.search is None and sampler.table is not None
    batch, stats = sampler.collect(net.state_dict(), None, 400)
    labelled = np.flatnonzero(batch["search"])
    assert stats["search_labels"] >= len(labelled) > 20
    lay = layout(RULES)
    found, p = table.lookup(batch["obs"][labelled], batch["masks"][labelled])
    assert found.all()
    for k, r in enumerate(labelled):
        bits = int(batch["search"][r])
        assert bits & (bits - 1) == 0  # one action a label
        a = bits.bit_length() - 1
        assert batch["masks"][r, a] and p[k, a] > 0  # a legal action the equilibrium plays here
        o = batch["obs"][r]
        assert (o[lay["stock_size"]][0] > 0 or o[lay["closed"]][0] > 0) and batch["masks"][r].sum() > 1
    assert not (batch["search"] & batch["teach"]).any()
    # about half the candidates are drawn (share 0.5): the labelled share of hidden-card decisions with a choice
    hidden = [(o[lay["stock_size"]][0] > 0 or o[lay["closed"]][0] > 0) and m.sum() > 1
              for o, m in zip(batch["obs"], batch["masks"])]
    assert 0.3 < len(labelled) / sum(hidden) < 0.7


def test_each_equilibrium_label_is_the_table_row_of_the_learners_own_decision(whole_table, tmp_path):
    """With a pure table (each row's last action with support: no draw can hide a wrong row), every label is the
    action of the row of the learner's own observation and mask (R27: nothing else is read); one CFR+ iteration's
    table is uniform, where any legal label would pass."""
    table = ObservationTable.load(whole_table, RULES)
    last = RULES.n_actions - 1 - np.argmax(table.probs[:, ::-1] > 0, axis=1)
    pure = np.zeros_like(table.probs)
    pure[np.arange(len(pure)), last] = 1.0
    ObservationTable(RULES, table.hashes, pure, table.source).save(tmp_path / "pure.npz")
    net = ActorCritic(obs_size(RULES), RULES.n_actions, hidden=32)
    sampler = Sampler(0, RULES, 16, 9, net.config(), 400, 0.3, 0.3, 1.0, 0.95, search_share=1.0,
                      equilibrium=str(tmp_path / "pure.npz"))
    batch, _ = sampler.collect(net.state_dict(), None, 400)
    labelled = np.flatnonzero(batch["search"])
    assert len(labelled) > 20
    found, p = table.lookup(batch["obs"][labelled], batch["masks"][labelled])
    assert found.all()
    want = RULES.n_actions - 1 - np.argmax(p[:, ::-1] > 0, axis=1)
    np.testing.assert_array_equal(batch["search"][labelled], np.left_shift(1, want))
    assert len(set(want.tolist())) > 1  # not one action for every row


def test_a_table_of_another_game_is_refused_by_the_sampler(tmp_path):
    tree = exact.Tree(RULES, SMALL[:3])
    path = tmp_path / "small.npz"
    tree.observation_policy(tree.cfr(3)["average"]).save(path)
    net = ActorCritic(obs_size(RULES), RULES.n_actions, hidden=32)
    sampler = Sampler(0, RULES, 16, 5, net.config(), 400, 0.0, 0.0, 1.0, 0.95, search_share=1.0,
                      equilibrium=str(path))
    with pytest.raises(ValueError, match="lacks .* hidden-card observations"):
        sampler.collect(net.state_dict(), None, 400)


def test_seeded_run_with_the_equilibrium_teacher_is_reproducible_and_resumes_exactly(tmp_path, whole_table):
    kw = dict(ruleset="schnapsen10", total_steps=2500, search_teacher="cfr", search_teacher_share=1.0,
              cfr_iterations=1, threads=1)
    for name in ("a", "split"):  # the folder's table is used, not solved again (as on a resume)
        (tmp_path / name).mkdir()
        shutil.copy(whole_table, tmp_path / name / "equilibrium.npz")
    summary = train.main(tiny_args(tmp_path, run_name="a", **kw))
    assert summary["search_teacher"]["labels"] > 100
    train.main(tiny_args(tmp_path, run_name="split", stop_after_updates=1, **kw))
    train.main(train.Args(resume=str(tmp_path / "split" / "checkpoint.pt"), threads=1, final_eval_deals=0,
                          progress=False))
    a = load_checkpoint(tmp_path / "a" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert a["trainer"]["global_step"] == b["trainer"]["global_step"]
    for k in a["model"]:
        torch.testing.assert_close(a["model"][k], b["model"][k], rtol=0, atol=0)
    for sa, sb in zip(a["trainer"]["samplers"], b["trainer"]["samplers"]):
        assert torch.equal(sa["buffer"]["search"], sb["buffer"]["search"])


def test_a_table_of_other_iterations_in_the_run_folder_is_refused(tmp_path, whole_table):
    (tmp_path / "tiny").mkdir()
    shutil.copy(whole_table, tmp_path / "tiny" / "equilibrium.npz")
    with pytest.raises(ValueError, match="cfr\\+ 1 iterations, expected cfr\\+ 7 iterations"):
        train.main(tiny_args(tmp_path, ruleset="schnapsen10", search_teacher="cfr", search_teacher_share=1.0,
                             cfr_iterations=7))


def test_a_broken_equilibrium_file_in_the_run_folder_is_named_with_the_way_out(tmp_path):
    """A cut-short equilibrium.npz (a run stopped while another wrote it, a copy cut short) is refused before any
    solving, naming the file and what to do."""
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "equilibrium.npz").write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(ValueError, match="tiny/equilibrium.npz: not an observation table.*: remove it to solve again$"):
        train.main(tiny_args(tmp_path, ruleset="schnapsen10", search_teacher="cfr", search_teacher_share=1.0,
                             cfr_iterations=1))


@pytest.mark.parametrize("flags, message", [
    (dict(search_teacher="oracle"), "--search-teacher 'oracle'"),
    (dict(search_teacher="cfr", search_teacher_share=1.0), "--search-teacher cfr needs --ruleset schnapsen10"),
    (dict(ruleset="schnapsen10", search_teacher="cfr", cfr_iterations=0), "--cfr-iterations"),
    # a teacher asked for that would label nothing (it ran silently without one)
    (dict(ruleset="schnapsen10", search_teacher="cfr"), "--search-teacher-share 0 .* labels nothing"),
    (dict(ruleset="schnapsen10", search_teacher="cfr", search_teacher_share=1.0, search_teacher_coef=0.0),
     "--search-teacher-coef 0 labels nothing"),
])
def test_bad_equilibrium_teacher_flags_are_refused_before_any_work(tmp_path, flags, message):
    with pytest.raises(ValueError, match=message):
        train.main(tiny_args(tmp_path, **flags))
    assert not (tmp_path / "tiny").exists()
