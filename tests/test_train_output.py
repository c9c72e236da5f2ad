"""What ``train.py`` tells its user: a short, grouped ``--help`` (the whole one under ``--help-all``), and a
closing summary naming the policy, comparing it with the shipped policies and giving the next commands."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from agents.learned.data import STRONGEST_POLICIES
from agents.training.command_line import HELP_GROUPS, Flag, first_clause, grouped_flags, short_help
from helpers.scripts import ROOT, load_script

train = load_script("train.py")


def test_help_is_short_grouped_and_names_every_flag():
    text = short_help(train.Args, "train.py", "PPO self-play.")
    lines = text.splitlines()
    assert len(lines) <= 105  # 63 flags, most on one line, in 7 groups (tyro's boxes took 155 for 49)
    for f in dataclasses.fields(train.Args):
        flag = "--" + f.name.replace("_", "-")
        assert sum(line.split()[0] == flag for line in lines if line.startswith("  --")) == 1, flag
    assert all(len(line) <= 120 for line in lines)
    for title in ("the run:", "PPO:", "machine:"):
        assert title in lines
    grouped = [n for names in HELP_GROUPS.values() for n in names]
    assert len(grouped) == len(set(grouped)), "a field in two groups"


def test_help_and_help_all_from_the_command_line():
    short = subprocess.run([sys.executable, "train.py", "--help"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert short.returncode == 0 and short.stdout.startswith("usage: train.py [--FLAG VALUE ...]")
    assert "╭" not in short.stdout  # no boxes
    full = subprocess.run([sys.executable, "train.py", "--help-all"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert full.returncode == 0 and "--max-grad-norm" in full.stdout and len(full.stdout) > len(short.stdout)


def test_first_clause_keeps_parentheses_whole():
    assert first_clause("a (b; c) d; e") == "a (b; c) d"
    assert first_clause("rule knobs, e.g. --knob x. More.") == "rule knobs, e.g. --knob x"


def test_a_run_ends_with_its_policy_a_yardstick_and_the_next_commands(tmp_path, capsys):
    args = train.Args(total_steps=3000, num_envs=16, batch_size=1024, minibatch_size=256, update_epochs=2,
                      hidden=32, seed=3, eval_every=0, final_eval_deals=2, final_eval_opponents=("heuristic",),
                      eval_workers=1, checkpoint_every=1, run_dir=str(tmp_path), run_name="tiny", tensorboard=False,
                      progress=False, samplers=1, inline_samplers=True, threads=1)
    summary = train.main(args)
    out = capsys.readouterr().out
    policy = tmp_path / "tiny" / "policy.pt"
    assert f"the policy: {policy}" in out
    assert "for comparison, the shipped policies against the same opponents" in out
    assert f"{STRONGEST_POLICIES['schnapsen20']:<14} heuristic +" in out  # the strongest, from the ladder
    assert f"schnapsen-arena {policy} expert" in out and f"schnapsen-play --opponent {policy}" in out
    assert "rules schnapsen20\n" in out  # the ruleset and its changed knobs, not the whole rules JSON
    saved = json.loads((tmp_path / "tiny" / "summary.json").read_text())
    assert saved["evaluation"]["heuristic"]["agent_a"] == "policy.pt" == summary["evaluation"]["heuristic"]["agent_a"]


def test_the_yardstick_only_for_the_ladders_rules():
    from agents.training.reporting import yardstick
    from schnapsen_env import RuleSet

    results = {"heuristic": None}
    assert yardstick(RuleSet.make("schnapsen20"), results)
    assert yardstick(RuleSet.make("schnapsen20", false_claim="mirror"), results) == []
    assert "trained-sixtysix24 heuristic +" in "\n".join(yardstick(RuleSet.make("sixtysix24"), results))
    assert yardstick(RuleSet.make("sixtysix24", tie="last_trick"), results) == []
    assert yardstick(RuleSet.make("schnapsen10"), results) == []  # no ladder


def test_next_commands_name_the_ruleset_of_the_run(tmp_path):
    from agents.training.reporting import next_steps
    from schnapsen_env import RuleSet

    assert "--ruleset" not in next_steps(tmp_path, {}, RuleSet.make("schnapsen20"))
    out = next_steps(tmp_path, {}, RuleSet.make("schnapsen10"))
    assert "expert --ruleset schnapsen10 --deals 200" in out and f"--opponent {tmp_path / 'policy.pt'} --ruleset " \
        "schnapsen10" in out and 'ruleset="schnapsen10")' in out


def test_grouped_flags_lists_each_field_once_in_its_group():
    """The one listing ``--help`` and the docs' flag table format: switches as a pair with on/off, lists as tuples, a
    default the run resolves as None, the groups' order and then the fields of no group."""

    @dataclasses.dataclass
    class Probe:
        zeta: int = 3
        """a field of no group"""
        seed: int = 1
        """the seed; more"""
        progress: bool = True
        """a switch"""
        eval_opponents: list[str] = dataclasses.field(default_factory=lambda: ["random"])
        """a list"""
        samplers: int | None = None

    flags = grouped_flags(Probe)
    assert [f.name for f in flags][-1] == "zeta" and flags[-1].group == "other"
    by = {f.name: f for f in flags}
    assert by["progress"] == Flag("output", "progress", ("--progress", "--no-progress"), "on", "a switch")
    assert by["eval_opponents"].default == ("random",) and by["samplers"].default is None
    assert by["samplers"].doc == "" and by["seed"].flags == ("--seed",)
    groups = [f.group for f in flags]
    assert groups == sorted(groups, key=lambda g: [*HELP_GROUPS, "other"].index(g))
    text = short_help(Probe, "probe", "A probe.")
    assert "--samplers" in text and "--progress / --no-progress" in text and "[3] a field of no group" in text


def test_a_value_of_the_wrong_kind_names_the_kind_a_user_types():
    """``--total-steps abc`` (a flag whose default the run resolves): one line that asks for an INT, not for tyro's
    ``None``, which nobody types."""
    out = subprocess.run([sys.executable, str(ROOT / "train.py"), "--total-steps", "abc"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "train.py: error: --total-steps 'abc' is not a valid value: expected INT"], out.stderr
