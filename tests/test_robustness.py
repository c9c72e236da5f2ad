"""Robustness: no finished work lost to an I/O error, no silent corruption, env errors that name the
real problem.

* checkpoints: a SHA-256 of the archive in the file; 1,000 random byte flips, none accepted; older files and the
  shipped policies load; NaN weights refused;
* ``--resume``: the whole trainer state checked; another version refused in one line naming both versions;
* full disk and read-only folders (simulated in ``fault_util.py``): results printed, complete records kept, the
  last good checkpoint kept and resumable, paths refused before any work;
* records: only a cut-off last line is skipped, with a warning; atomic whole-file writes;
* the env errors of the issue, with their exact messages.

The command lines' bad inputs are counted in ``test_cli_errors.py``; the fuzz tests are in ``test_fuzz.py``.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import warnings

import numpy as np
import pytest
import torch
from fault_util import FullDisk, ReadOnly, files_under

from agents.cli import arena as arena_cli
from agents.cli import play as play_cli
from agents.cli import replay as replay_cli
from agents.learned import policy_net
from agents.learned.checkpoint import CheckpointError, add_checksum, load_checkpoint, save_atomic, verify_checksum
from agents.learned.policy import DATA_DIR, PolicyAgent
from agents.learned.policy_net import ActorCritic
from agents.training import command_line, resume
from helpers import training
from helpers.play import random_records
from helpers.scripts import load_script
from schnapsen_env import RuleSet, schnapsen_v0
from schnapsen_env.agent_registry import register_agent, unregister_agent
from schnapsen_env.errors import IllegalActionError
from schnapsen_env.files import LineWriter, WriteError, atomic_write, stale_temps
from schnapsen_env.records import IncompleteLineWarning, RecordWriter, read_records, write_records
from schnapsen_env.vector import SchnapsenVectorEnv

train = load_script("train.py")
SMALLER = dict(total_steps=2500, num_envs=8, minibatch_size=512, update_epochs=1, hidden=16)


def tiny_args(tmp_path, **kw) -> train.Args:
    """:func:`helpers.training.tiny_args`, smaller still: these tests start many runs."""
    return training.tiny_args(tmp_path, **{**SMALLER, **kw})


def tiny_argv(tmp_path, **kw) -> list[str]:
    """:func:`tiny_args` as a command line for ``train.cli``."""
    return training.tiny_argv(tmp_path, **{**SMALLER, **kw})


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A run stopped after one update (a trainer checkpoint to resume, damage and flip)."""
    root = tmp_path_factory.mktemp("tiny_run")
    train.main(tiny_args(root, stop_after_updates=1))
    return root / "tiny" / "checkpoint.pt"


def _copy_run(ckpt_path, tmp_path, name="copy"):
    """A copy of a run folder (to resume or damage without touching the fixture's)."""
    dst = tmp_path / name
    shutil.copytree(ckpt_path.parent, dst)
    return dst / "checkpoint.pt"


def _policy_ckpt(hidden=8) -> dict:
    rules = RuleSet.make()
    model = ActorCritic(255, 27, hidden=hidden)
    return policy_net.policy_checkpoint(model, rules, train.Args(final_eval_deals=0))


# ------------------------------------------------------------------------------------------------ checkpoints
def test_checkpoint_carries_its_sha256_and_still_loads_with_weights_only(tmp_path):
    path = tmp_path / "p.pt"
    save_atomic(_policy_ckpt(), path)
    data = path.read_bytes()
    assert data[-85:].startswith(b"schnapsen-env sha256 ")
    assert verify_checksum(data) is True
    plain = torch.load(path, weights_only=True)  # any torch user can still read it
    assert set(plain) == {"model", "net", "rules", "layout", "args", "versions"}
    PolicyAgent.load(path)
    assert stale_temps(path) == []


def test_checkpoints_without_checksum_still_load_and_can_get_one(tmp_path):
    path = tmp_path / "old.pt"
    torch.save(_policy_ckpt(), path)  # as train.py wrote before checksums existed
    assert verify_checksum(path.read_bytes()) is False
    PolicyAgent.load(path)
    assert add_checksum(path) is True and verify_checksum(path.read_bytes()) is True
    assert add_checksum(path) is False
    PolicyAgent.load(path)


def test_shipped_policies_carry_a_valid_checksum():
    from agents import SHIPPED_POLICIES
    shipped = sorted(DATA_DIR.glob("*.pt"))
    assert [p.name for p in shipped] == sorted(SHIPPED_POLICIES.values())  # every file declared, none missing
    for path in shipped:
        assert verify_checksum(path.read_bytes()) is True, path
        PolicyAgent.load(path)


def test_1000_random_byte_flips_none_accepted(tmp_path):
    path = tmp_path / "p.pt"
    save_atomic(_policy_ckpt(), path)
    data = path.read_bytes()
    rng = np.random.default_rng(14)
    accepted, refused = 0, 0
    for trial in range(1000):
        b = bytearray(data)
        for _ in range(1 if trial % 4 else int(rng.integers(2, 6))):  # one byte, or a few
            b[int(rng.integers(len(b)))] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(b))
        try:
            load_checkpoint(path)
            accepted += 1
        except CheckpointError:
            refused += 1
    assert (accepted, refused) == (0, 1000)
    for cut in rng.integers(1, len(data), 50).tolist():  # truncated copies
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError):
            load_checkpoint(path)


def test_byte_flips_of_a_trainer_checkpoint_refused(tiny_run, tmp_path):
    data = tiny_run.read_bytes()
    path = tmp_path / "checkpoint.pt"
    rng = np.random.default_rng(15)
    for _ in range(100):
        b = bytearray(data)
        b[int(rng.integers(len(b)))] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(b))
        with pytest.raises(CheckpointError, match="corrupt|damaged|cannot be read"):
            load_checkpoint(path)


def test_corrupt_checkpoint_message(tmp_path):
    path = tmp_path / "p.pt"
    save_atomic(_policy_ckpt(), path)
    b = bytearray(path.read_bytes())
    b[len(b) // 2] ^= 0x10
    path.write_bytes(bytes(b))
    with pytest.raises(CheckpointError, match=r"checkpoint '.*p\.pt' is corrupt: the SHA-256 of its content is "
                                              r"[0-9a-f]{16}\.\.\., but the file records [0-9a-f]{16}\.\.\.: expected "
                                              r"an unchanged file as train.py wrote it"):
        load_checkpoint(path)


def test_nan_weights_refused_when_loaded(tmp_path):
    ck = _policy_ckpt()
    ck["model"]["policy.weight"][0, 0] = float("nan")
    save_atomic(ck, tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match=r"weights \['policy.weight'\] hold NaN or inf: expected finite"):
        PolicyAgent.load(tmp_path / "nan.pt")


def test_huge_network_config_refused_without_allocating(tmp_path):
    ck = _policy_ckpt()
    ck["net"] = {**ck["net"], "hidden": 10 ** 9}
    save_atomic(ck, tmp_path / "huge.pt")
    with pytest.raises(CheckpointError, match="weights do not fit the network config"):
        PolicyAgent.load(tmp_path / "huge.pt")


# ------------------------------------------------------------------------------------------------ resume
def test_resume_refuses_another_version_naming_both_versions(tiny_run, tmp_path, capsys):
    path = _copy_run(tiny_run, tmp_path)
    ck = load_checkpoint(path)
    ck["args"]["entropy_schedule"] = "cosine"  # a flag of some other version
    ck["versions"]["schnapsen_env"] = "9.9.9"
    save_atomic(ck, path)
    before = files_under(path.parent)
    with pytest.raises(CheckpointError, match=r"comes from an incompatible version of train.py \(arguments unknown "
                                              r"here: \['entropy_schedule'\], missing: \[\]\); the checkpoint was "
                                              r"written by schnapsen_env 9.9.9 with torch .*; this is schnapsen_env "
                                              r"0.1.0 with torch .*: resume it with the version that wrote it"):
        train.main(train.Args(resume=str(path)))
    assert train.cli(["--resume", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "9.9.9" in err and "0.1.0" in err and "Traceback" not in err
    assert files_under(path.parent) == before


def _untimed(table: str) -> str:
    """An arena table without its wall-clock seconds (", 0.1 s)"), which differ between two runs of the same deals."""
    return re.sub(r", [0-9.]+ s\)", ", _ s)", table)


def _damage(name):
    def f(ck):
        tr = ck["trainer"]
        sampler = tr["samplers"][0]
        if name == "no venv":
            del sampler["venv"]
        elif name == "sampler count":
            tr["samplers"] = tr["samplers"] * 2
        elif name == "opp_seat length":
            sampler["opp_seat"] = sampler["opp_seat"][:-1]
        elif name == "opp_seat values":
            sampler["opp_seat"] = sampler["opp_seat"] + 5
        elif name == "buffer obs shape":
            sampler["buffer"]["obs"] = sampler["buffer"]["obs"][:, :-1]
        elif name == "chain row":
            sampler["buffer"]["chains"][0][2].append(10 ** 6)
        elif name == "sampler rng":
            sampler["rng"] = "seed 7"
        elif name == "optimizer shape":
            tr["optimizer"]["state"][0]["exp_avg"] = torch.zeros(3)
        elif name == "pool snapshot":
            tr["pool"] = [{"x": torch.zeros(2)}]
        elif name == "rng":
            tr["rng"] = "seed 7"
        elif name == "venv rng":
            sampler["venv"]["rng_states"][0] = {"bit_generator": "MT19937"}
        elif name == "venv position":
            sampler["venv"]["positions"][0] = {"hands": "none"}
        elif name == "global_step":
            tr["global_step"] = -1
        elif name == "torch_rng":
            tr["torch_rng"] = torch.zeros(3, dtype=torch.uint8)
        elif name == "history":
            tr["history"] = "none"
        elif name == "model shape":
            ck["model"]["policy.bias"] = torch.zeros(5)
        elif name == "layout":
            ck["layout"] = {**ck["layout"], "version": 0}
        elif name == "arg type":
            ck["args"]["hidden"] = "wide"
        elif name == "trainer type":
            ck["trainer"] = [1, 2]
        elif name == "unknown trainer key":
            tr["schedule"] = 1
    return f


DAMAGES = ["no venv", "sampler count", "sampler rng", "opp_seat length", "opp_seat values", "buffer obs shape", "chain row", "optimizer shape",
           "pool snapshot", "rng", "venv rng", "venv position", "global_step", "torch_rng", "history", "model shape",
           "layout", "arg type", "trainer type", "unknown trainer key"]


@pytest.mark.parametrize("damage", DAMAGES)
def test_resume_refuses_damaged_trainer_state_in_one_line(tiny_run, tmp_path, capsys, damage):
    path = _copy_run(tiny_run, tmp_path)
    ck = load_checkpoint(path)
    _damage(damage)(ck)
    save_atomic(ck, path)  # a valid checksum: the content itself is wrong
    before = files_under(path.parent)
    assert train.cli(["--resume", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("train.py: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "schnapsen_env 0.1.0" in err  # both versions are named
    assert files_under(path.parent) == before  # nothing written


def test_resume_refuses_flags_that_differ_from_the_run(tiny_run, tmp_path):
    path = _copy_run(tiny_run, tmp_path)
    with pytest.raises(ValueError, match=r"--hidden 64 differs from the resumed run's 16: --resume continues the "
                                         r"run with its own arguments"):
        train.main(train.Args(resume=str(path), hidden=64))


def test_resume_refuses_a_flag_typed_at_its_default_that_differs_from_the_run(tiny_run, tmp_path, capsys):
    """The tiny run has --hidden 16; ``--hidden`` typed at its default is not the run's value either, and was once
    ignored without a word because it equals the default. Refused in one line; nothing written."""
    path = _copy_run(tiny_run, tmp_path)
    default = train.Args().hidden
    assert default != 16
    before = files_under(path.parent)
    assert train.cli(["--resume", str(path), "--no-progress", "--hidden", str(default)]) == 2
    err = capsys.readouterr().err
    assert err == (f"train.py: error: --hidden {default!r} differs from the resumed run's 16: --resume continues the "
                   "run with its own arguments; expected only --total-steps and "
                   + ", ".join("--" + n.replace("_", "-") for n in resume.PER_INVOCATION) + " besides --resume\n")
    assert files_under(path.parent) == before


def test_resume_takes_precision_auto_typed_where_it_chooses_the_runs_precision(tiny_run, tmp_path):
    """A run started with --precision auto saves the precision auto chose; that flag typed again on --resume (the
    run's own command line) was refused as differing from it. Taken where auto still chooses the run's precision
    on --device; refused, as another precision is, where it would not."""
    path = _copy_run(tiny_run, tmp_path)
    ckpt = load_checkpoint(str(path))
    chosen = ckpt["args"]["precision"]
    assert chosen == policy_net.resolve_precision("auto", "cpu")
    argv = ["--resume", str(path), "--precision", "auto"]
    args = resume.resumed_args(ckpt, command_line.parse_args(argv, train.Args, "train.py"),
                               command_line.typed_fields(argv, train.Args))
    assert args.precision == chosen
    other = {"bf16": "fp32", "fp32": "bf16"}[chosen]
    argv = ["--resume", str(path), "--precision", other]
    with pytest.raises(ValueError, match=f"--precision '{other}' differs from the resumed run's '{chosen}'"):
        resume.resumed_args(ckpt, command_line.parse_args(argv, train.Args, "train.py"),
                            command_line.typed_fields(argv, train.Args))
    ckpt["args"]["precision"] = other  # a run whose auto chose otherwise (another machine): not typed, taken
    argv = ["--resume", str(path)]
    assert resume.resumed_args(ckpt, command_line.parse_args(argv, train.Args, "train.py"),
                               command_line.typed_fields(argv, train.Args)).precision == other
    argv = ["--resume", str(path), "--precision", "auto"]
    with pytest.raises(ValueError, match=rf"--precision 'auto' \(here '{chosen}'\) differs from the resumed run's '{other}'"):
        resume.resumed_args(ckpt, command_line.parse_args(argv, train.Args, "train.py"),
                            command_line.typed_fields(argv, train.Args))


def test_typed_fields_name_the_flags_of_the_command_line():
    typed = command_line.typed_fields(["--resume", "x.pt", "--ent-coef=0", "--no-progress", "--knob", "a=1",
                                       "--threads", "-1", "--not-a-flag"], train.Args)
    assert typed == {"resume", "ent_coef", "progress", "knob", "threads"}


def test_resume_refuses_a_policy_checkpoint(tmp_path):
    save_atomic(_policy_ckpt(), tmp_path / "policy.pt")
    with pytest.raises(CheckpointError, match="policy checkpoint without trainer state: cannot resume"):
        train.main(train.Args(resume=str(tmp_path / "policy.pt")))


# ------------------------------------------------------------------------------------------------ full disk
ARENA = ["heuristic", "random", "--deals", "6", "--chunk-size", "2", "--workers", "1", "--no-progress", "--seed", "4"]


def test_arena_full_disk_keeps_the_results_and_every_complete_record(tmp_path, monkeypatch, capsys):
    ref = tmp_path / "ref"
    ref.mkdir()
    assert arena_cli.main(ARENA + ["--records", str(ref / "r.jsonl")]) == 0
    expected_table = capsys.readouterr().out
    all_records = read_records(ref / "r.jsonl")
    assert len(all_records) == 12
    full = tmp_path / "full"
    full.mkdir()
    (full / "out.json").write_text("old results\n")
    line = len(json.dumps(all_records[0].to_dict())) + 1
    FullDisk(monkeypatch, full, free=int(4.5 * line))  # room for about four records, then the disk is full
    assert arena_cli.main(ARENA + ["--records", str(full / "r.jsonl"), "--json", str(full / "out.json")]) == 1
    out, err = capsys.readouterr()
    assert _untimed(out) == _untimed(expected_table)  # no result lost: the whole table is printed
    lines = err.splitlines()
    assert len(lines) == 2 and all(x.startswith("schnapsen-arena: error: ") for x in lines)
    assert "--json: cannot write" in lines[0] and "no space left on device" in lines[0]
    assert "the results are printed above" in lines[0]
    assert (full / "out.json").read_text() == "old results\n"  # the old JSON is untouched
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # complete lines only: no cut-off line to skip
        kept = read_records(full / "r.jsonl")
    assert 1 <= len(kept) < 12 and [r.to_dict() for r in kept] == [r.to_dict() for r in all_records[:len(kept)]]
    assert f"the file holds the {len(kept)} complete line(s) written before it" in lines[1]
    assert "(the match was played to its end)" in lines[1]
    assert [p.name for p in full.iterdir() if p.name.endswith(".tmp")] == []


def test_arena_read_only_folder_refused_before_any_game(tmp_path, monkeypatch, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ReadOnly(monkeypatch, ro)

    def no_play(*a, **k):
        raise AssertionError("a game was played")

    monkeypatch.setattr("agents.evaluation.arena.play_deals", no_play)
    for flag in ("--json", "--records"):
        with pytest.raises(SystemExit) as e:
            arena_cli.main(ARENA + [flag, str(ro / "x")])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert err == (f"schnapsen-arena: error: {flag} '{ro / 'x'}': folder '{ro}' is not writable (permission "
                       "denied): expected a file path in an existing, writable folder (see schnapsen-arena --help)\n")
    assert list(ro.iterdir()) == []


def test_arena_json_folder_turning_read_only_keeps_the_results(tmp_path, monkeypatch, capsys):
    import agents.evaluation.arena

    assert arena_cli.main(ARENA) == 0
    expected_table = capsys.readouterr().out
    real = agents.evaluation.arena.play_deals
    folder = tmp_path / "late"
    folder.mkdir()

    def play_then_lock(*a, **k):  # the folder becomes read-only while the games are played
        out = real(*a, **k)
        ReadOnly(monkeypatch, folder)
        return out

    monkeypatch.setattr(agents.evaluation.arena, "play_deals", play_then_lock)
    assert arena_cli.main(ARENA + ["--json", str(folder / "out.json")]) == 1
    out, err = capsys.readouterr()
    assert _untimed(out) == _untimed(expected_table)
    assert err == (f"schnapsen-arena: error: --json: cannot write '{folder / 'out.json'}': permission denied (no file "
                   "was written); the results are printed above\n")


class _Typist:
    def __init__(self, lines):
        self.lines = list(lines)

    def readline(self, size=-1):  # TextIO.readline: play reads at most a size
        return self.lines.pop(0) + "\n" if self.lines else ""


def _auto(monkeypatch):
    """Typed "auto" plays the first legal action."""
    orig = play_cli.parse_action

    def parse(text, state):
        if text.strip() == "auto":
            return state.legal_actions()[0], ""
        return orig(text, state)

    monkeypatch.setattr(play_cli, "parse_action", parse)


def test_play_full_disk_reports_in_one_line_and_plays_on(tmp_path, monkeypatch, capsys):
    _auto(monkeypatch)
    disk = FullDisk(monkeypatch, tmp_path, free=None)
    real_write = RecordWriter.write

    def write_then_fill(self, record):  # the disk is full after the first hand's record
        real_write(self, record)
        disk.free = 0

    monkeypatch.setattr(RecordWriter, "write", write_then_fill)
    out = io.StringIO()
    rc = play_cli.main(["--opponent", "random", "--seed", "3", "--hands", "2", "--record", str(tmp_path / "g.jsonl")],
                       inp=_Typist(["auto"] * 200), out=out)
    err = capsys.readouterr().err
    assert rc == 1
    assert err == (f"schnapsen-play: error: cannot write line 2 to --record '{tmp_path / 'g.jsonl'}': no space left "
                   "on device; the file holds the 1 complete line(s) written before it; play goes on without "
                   "recording\n")
    ends = [line for line in out.getvalue().splitlines()
            if line.startswith(("you win ", "the opponent wins ", "the hand is a tie"))]
    assert len(ends) >= 2  # both hands were played
    (rec,) = read_records(tmp_path / "g.jsonl")
    assert rec.result is not None


@pytest.mark.slow
def test_train_full_disk_at_the_end_keeps_the_last_good_checkpoint(tmp_path, monkeypatch, capsys):
    disk = FullDisk(monkeypatch, tmp_path, free=None)
    real = policy_net.save_atomic
    saved = []

    def save_then_fill(obj, path):
        real(obj, path)
        saved.append(obj["trainer"]["update"])
        disk.free = 0  # the disk is full after the first checkpoint

    monkeypatch.setattr(policy_net, "save_atomic", save_then_fill)
    assert train.cli(tiny_argv(tmp_path)) == 1
    err = capsys.readouterr().err
    path = tmp_path / "tiny" / "checkpoint.pt"
    assert err == (f"train.py: error: cannot write '{path}': no space left on device (the old file is unchanged); "
                   f"the last good checkpoint '{path}' (update 1, {load_checkpoint(path)['trainer']['global_step']:,} "
                   f"steps) is kept: free space or fix the folder, then continue with: python train.py --resume {path} "
                   "--no-progress --threads 1 --no-tensorboard --inline-samplers --final-eval-deals 0\n")
    assert saved == [1] and disk.failures >= 1
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    disk.free = None  # space freed: the run continues from the kept checkpoint
    monkeypatch.setattr(policy_net, "save_atomic", real)
    summary = train.main(train.Args(resume=str(path)))
    assert summary["steps"] >= 2500 and (path.parent / "policy.pt").is_file()
    assert json.loads((path.parent / "summary.json").read_text())["steps"] == summary["steps"]


def test_train_read_only_run_dir_refused_before_any_work(tmp_path, monkeypatch, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ReadOnly(monkeypatch, ro)
    assert train.cli(tiny_argv(ro)) == 2
    assert capsys.readouterr().err == (f"train.py: error: the run folder '{ro / 'tiny'}' (--run-dir, --run-name or "
                                       f"--resume): folder '{ro}' is not writable (permission denied): expected a "
                                       "writable folder\n")
    assert list(ro.iterdir()) == []


def test_run_name_cannot_leave_the_run_folder(tmp_path, capsys):
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    for name in ("../../x", "..", "x/../../y", "/abs"):
        assert train.cli(tiny_argv(inner, run_name=name)) == 2
        assert capsys.readouterr().err == (f"train.py: error: --run-name {name!r} is not a plain folder name: expected "
                                           "a name without '/' that is not '.' or '..' (the run folder stays inside "
                                           "--run-dir)\n")
    assert files_under(tmp_path) == {}


def test_stale_temporary_files_removed_when_a_run_starts(tiny_run, tmp_path):
    path = _copy_run(tiny_run, tmp_path)
    stale = [path.parent / "checkpoint.pt.k1ll3d_x.tmp", path.parent / "policy.pt.abcdefgh.tmp"]
    keep = [path.parent / "notes.tmp", path.parent / "checkpoint.pt.mine.tmp"]
    for p in stale + keep:
        p.write_bytes(b"partial")
    assert stale_temps(path) == [stale[0]]
    train.main(train.Args(resume=str(path), stop_after_updates=1))
    assert not any(p.exists() for p in stale) and all(p.exists() for p in keep)


@pytest.mark.slow
def test_tensorboard_logs_no_step_twice_after_a_resume(tmp_path, monkeypatch):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    args = tiny_args(tmp_path, tensorboard=True, checkpoint_every=2, total_steps=3000)
    real = policy_net.save_atomic

    def killed_at_the_final_checkpoint(obj, path):
        if obj["trainer"]["global_step"] >= 3000:
            raise KeyboardInterrupt  # killed after the last update was logged, before its checkpoint
        real(obj, path)

    monkeypatch.setattr(policy_net, "save_atomic", killed_at_the_final_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        train.main(args)
    monkeypatch.setattr(policy_net, "save_atomic", real)
    run = tmp_path / "tiny"
    first = load_checkpoint(run / "checkpoint.pt")["trainer"]["update"]
    train.main(train.Args(resume=str(run / "checkpoint.pt"), tensorboard=True))
    acc = EventAccumulator(str(run))
    acc.Reload()
    steps = [e.step for e in acc.Scalars("charts/SPS")]
    assert len(steps) == len(set(steps)) and len(steps) == load_checkpoint(run / "checkpoint.pt")["trainer"]["update"]
    assert first == 2 and len(steps) == 3


# ------------------------------------------------------------------------------------------------ records
def test_reader_skips_only_a_cut_off_last_line_and_says_so(tmp_path, capsys):
    recs = random_records(3, seed=1)
    path = tmp_path / "r.jsonl"
    write_records(path, recs)
    data = path.read_bytes()
    start_of_last = data[:-1].rindex(b"\n") + 1
    for cut in range(start_of_last + 1, len(data) - 1, 7):  # the last line cut anywhere
        path.write_bytes(data[:cut])
        with pytest.warns(IncompleteLineWarning, match=r"line 3: skipped an incomplete last line"):
            got = read_records(path)
        assert [r.to_dict() for r in got] == [r.to_dict() for r in recs[:2]]
    assert replay_cli.main([str(path), "--index", "1"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"schnapsen-replay: warning: {path} line 3: skipped an incomplete last line (")
    assert err.count("\n") == 1
    # a bad line that is not the last, or a last line whose damage is not at its end, is still an error
    path.write_bytes(data[:start_of_last - 40] + b"\n" + data[start_of_last:])
    assert replay_cli.main([str(path)]) == 2
    path.write_bytes(data[:start_of_last] + b"#" + data[start_of_last + 1:-1])
    assert replay_cli.main([str(path)]) == 2


def test_write_records_is_atomic_on_a_full_disk(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    write_records(path, random_records(2))
    before = path.read_bytes()
    FullDisk(monkeypatch, tmp_path, free=100)
    with pytest.raises(WriteError, match=r"cannot write '.*r\.jsonl': no space left on device \(the old file is "
                                         r"unchanged\)"):
        write_records(path, random_records(5, seed=2))
    assert path.read_bytes() == before and stale_temps(path) == []


def test_line_writer_cuts_a_partial_line_back(tmp_path, monkeypatch):
    FullDisk(monkeypatch, tmp_path, free=25)
    with LineWriter(tmp_path / "l.txt") as w:
        w.write("0123456789")
        with pytest.raises(WriteError, match=r"cannot write line 2 to '.*l\.txt': no space left on device; the file "
                                             r"holds the 1 complete line\(s\) written before it"):
            w.write("abcdefghijklmnopqrstuvwxyz")
        with pytest.raises(WriteError):  # and later writes too
            w.write("x")
    assert (tmp_path / "l.txt").read_bytes() == b"0123456789\n"


def test_atomic_write_into_a_read_only_folder(tmp_path, monkeypatch):
    (tmp_path / "a.json").write_text("old")
    ReadOnly(monkeypatch, tmp_path)
    with pytest.raises(WriteError, match=r"cannot write '.*a\.json': permission denied \(the old file is unchanged\)"):
        atomic_write(tmp_path / "a.json", "new")
    assert (tmp_path / "a.json").read_text() == "old"


# ------------------------------------------------------------------------------------------------ env errors
def test_vector_env_before_reset_says_call_reset_first():
    venv = SchnapsenVectorEnv(3)
    with pytest.raises(RuntimeError, match=r"^SchnapsenVectorEnv\.step\(\) before reset\(\): the slots hold no "
                                           r"hands yet; call reset\(\) first \(or set_state\(\)\)$"):
        venv.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(RuntimeError, match=r"get_state\(\) before reset\(\)"):
        venv.get_state()
    with pytest.raises(RuntimeError, match=r"games\(\) before reset\(\)"):
        venv.games  # noqa: B018


def test_vector_env_names_the_slot_of_a_none_action():
    venv = SchnapsenVectorEnv(4)
    _, masks, _ = venv.reset(seed=5)
    before = venv.get_state()
    actions = np.array([int(np.flatnonzero(m)[0]) for m in masks], dtype=object)
    actions[2] = None
    with pytest.raises(IllegalActionError, match=r"^slot 2: None is not an action id: expected an int from 0 to 26 "
                                                 r"\(a legal action of that slot\)$"):
        venv.step(actions)
    actions[2] = "play QH"
    with pytest.raises(IllegalActionError, match=r"^slot 2: 'play QH' is not an action id"):
        venv.step(actions)
    actions[2] = 10 ** 30
    with pytest.raises(IllegalActionError, match=r"^slot 2: illegal action 1000000000000000000000000000000 for"):
        venv.step(actions)
    assert venv.get_state() == before
    actions[2] = int(np.flatnonzero(masks[2])[0])
    venv.step(actions)  # a legal object array still plays


def test_raw_env_step_before_reset_is_a_clear_error():
    env = schnapsen_v0.raw_env()
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\): there is no hand to play yet$"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before observe\(\), last\(\), state\(\)"):
        env.last()


# ------------------------------------------------------------------------------------------------ play
class _TurnsNaN:
    """A trained policy whose weights turn to NaN after ``after`` decisions (a diverged model mid-game)."""

    def __init__(self, rules, seed=None, after=6):
        model = ActorCritic(255, 27, hidden=8)
        self.agent = PolicyAgent(model, rules, seed=seed)
        self.rules, self.after, self.calls = self.agent.rules, after, 0

    def act(self, obs):
        self.calls += 1
        if self.calls == self.after:
            with torch.no_grad():
                for p in self.agent.model.parameters():
                    p.fill_(float("nan"))
        return self.agent.act(obs)


def test_play_survives_an_opponent_turning_nan_mid_game(tmp_path, monkeypatch, capsys):
    _auto(monkeypatch)
    register_agent("turns-nan", _TurnsNaN)
    try:
        path = tmp_path / "g.jsonl"
        out = io.StringIO()
        rc = play_cli.main(["--opponent", "turns-nan", "--seed", "2", "--hands", "3", "--record", str(path)],
                           inp=_Typist(["auto"] * 200), out=out)
    finally:
        unregister_agent("turns-nan")
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("schnapsen-play: error: the opponent 'turns-nan' failed in hand ")
    assert "ValueError: the policy's probabilities over the legal actions are not finite" in err
    assert err.count("\n") == 1
    recs = read_records(path)  # every hand played is kept, the unfinished one with result null
    assert recs and recs[-1].result is None and all(r.result is not None for r in recs[:-1])
    assert f"wrote {len(recs)} record(s)" in out.getvalue()


def test_play_refuses_input_that_is_not_text(capsys):
    class Binary:
        calls = 0

        def readline(self, size=-1):
            self.calls += 1
            if self.calls == 1:
                raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
            return ""

    out = io.StringIO()
    assert play_cli.main(["--opponent", "random", "--seed", "1", "--seat", "player_0"], inp=Binary(), out=out) == 0
    assert "the input is not text (UTF-8). Legal: " in out.getvalue() and "bye" in out.getvalue()
    assert capsys.readouterr().err == ""


def test_no_output_replaces_a_checkpoint(tmp_path):
    """A records or results file is never written over an existing checkpoint, whatever named it: a shipped name
    or an option inside an agent spec (``policy+expert:policy=ck.pt``) reached it where a literal path check did
    not (review), and the file was emptied. A records file is still replaced as before."""
    from agents.learned.policy import DEFAULT_POLICY
    from schnapsen_env.files import WriteError, check_output_file, is_checkpoint
    from schnapsen_env.records import RecordWriter

    ck = tmp_path / "ck.pt"
    ck.write_bytes(DEFAULT_POLICY.read_bytes())
    assert is_checkpoint(ck) and is_checkpoint(DEFAULT_POLICY)
    with pytest.raises(ValueError, match="'ck.pt' is an existing checkpoint"):
        check_output_file(ck, "'ck.pt'")
    with pytest.raises(WriteError, match="is an existing checkpoint"):
        RecordWriter(ck)
    assert ck.read_bytes() == DEFAULT_POLICY.read_bytes()
    old = tmp_path / "old.jsonl"
    old.write_text('{"a": 1}\n')
    assert not is_checkpoint(old) and not is_checkpoint(tmp_path) and not is_checkpoint(tmp_path / "missing")
    check_output_file(old, "'old.jsonl'")
    RecordWriter(old).close()
    assert old.read_text() == ""
