"""Every command-line program answers a user's mistake with one line and a non-zero exit, never a traceback.

``test_bad_inputs_never_end_in_a_traceback`` runs several hundred bad command lines through ``schnapsen-arena``,
``schnapsen-play``, ``schnapsen-replay``, ``schnapsen-web`` and ``train.py`` (their ``main()``/``cli()`` in this process) and counts the
tracebacks (any exception other than ``SystemExit``), the zero exits, the error outputs that are not exactly one
line ``PROG: error: ...``, and the files they created or changed: all must be zero. The other tests pin the exact
message of representative mistakes, and run the real entry points (``python train.py``, ``python -m ...``) once.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from fault_util import ReadOnly, files_under

from agents.cli import arena as arena_cli
from agents.cli import play as play_cli
from agents.cli import replay as replay_cli
from agents.cli import web as web_cli
from agents.learned.checkpoint import save_atomic
from agents.learned.policy_net import ActorCritic, policy_checkpoint
from helpers.play import random_records
from helpers.scripts import load_script
from schnapsen_env import RuleSet
from schnapsen_env.records import write_records
from schnapsen_env.ruleset import KNOBS

train = load_script("train.py")

ROOT = Path(__file__).resolve().parent.parent
PROGS = {"arena": "schnapsen-arena", "play": "schnapsen-play", "replay": "schnapsen-replay", "web": "schnapsen-web",
         "train": "train.py"}


def _run(prog: str, argv: list[str]) -> tuple[object, str, str]:
    """``(status or the escaped exception, stdout, stderr)`` of one command line, in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if prog == "arena":
                status = arena_cli.main(argv)
            elif prog == "play":
                status = play_cli.main(argv, inp=io.StringIO(""), out=out)
            elif prog == "replay":
                status = replay_cli.main(argv)
            elif prog == "web":
                status = web_cli.main(argv)
            else:
                status = train.cli(argv)
        except SystemExit as e:
            status = e.code
        except BaseException as e:  # a traceback for the user
            status = e
    return status, out.getvalue(), err.getvalue()


def _sandbox(root: Path) -> dict[str, str]:
    """Files the bad command lines point at: broken checkpoints and records, a folder named like a file."""
    p = {}
    (root / "dir.pt").mkdir()
    (root / "dir.jsonl").mkdir()
    (root / "ro").mkdir()
    p["dir.pt"], p["dir.jsonl"], p["ro"] = str(root / "dir.pt"), str(root / "dir.jsonl"), str(root / "ro")
    (root / "garbage.pt").write_bytes(b"not a torch file")
    rules = RuleSet.make()
    policy = policy_checkpoint(ActorCritic(255, 27, hidden=8), rules, train.Args(final_eval_deals=0))
    save_atomic(policy, root / "policy.pt")
    data = bytearray((root / "policy.pt").read_bytes())
    data[len(data) // 3] ^= 0x40
    (root / "corrupt.pt").write_bytes(bytes(data))
    (root / "truncated.pt").write_bytes(bytes(data[:len(data) // 2]))
    nan = policy_checkpoint(ActorCritic(255, 27, hidden=8), rules, train.Args(final_eval_deals=0))
    nan["model"]["trunk.0.weight"].fill_(float("nan"))
    save_atomic(nan, root / "nan.pt")
    s66 = policy_checkpoint(ActorCritic(299, 31, hidden=8), RuleSet.make("sixtysix24"),
                                  train.Args(final_eval_deals=0))
    save_atomic(s66, root / "s66.pt")
    save_atomic({"model": {}}, root / "partial.pt")
    torch.save([1, 2, 3], root / "list.pt")
    for name in ("garbage", "corrupt", "truncated", "nan", "s66", "partial", "list", "policy"):
        p[name] = str(root / f"{name}.pt")
    recs = random_records(2, seed=3)
    good = [json.dumps(r.to_dict()) for r in recs]
    d = recs[1].to_dict()
    bad_records = {
        "not_json": good[0] + "\n{not json\n",
        "unknown_key": good[0] + "\n" + json.dumps({**d, "extra": 1}) + "\n",
        "illegal": good[0] + "\n" + json.dumps({**d, "actions": ["play XX"] + d["actions"][1:]}) + "\n",
        "short": good[0] + "\n" + json.dumps({**d, "actions": d["actions"][:-1]}) + "\n",
        "deck": json.dumps({**d, "deck": d["deck"][:-1]}) + "\n",
        "ruleset": json.dumps({**d, "rules": {"ruleset": "bridge"}}) + "\n",
        "rules_type": json.dumps({**d, "rules": [1, 2]}) + "\n",
        "dealer": json.dumps({**d, "dealer": 1}) + "\n",
        "result": json.dumps({**d, "result": {"game_points": "3"}}) + "\n",
        "list": "[1, 2, 3]\n",
        "number": "12\n",
        "null": "null\n",
        "huge_int": '{"rules": ' + "9" * 5000 + "}\n",
        "nested": "[" * 100_000 + "]" * 100_000 + "\n",
        "players": json.dumps({**d, "players": {"player_7": "x"}}) + "\n",
        "actions_type": json.dumps({**d, "actions": "play QH"}) + "\n",
        "bad_middle_then_good": "{\"rules\"\n" + good[0] + "\n",
    }
    for name, text in bad_records.items():
        (root / f"{name}.jsonl").write_text(text)
        p[f"rec_{name}"] = str(root / f"{name}.jsonl")
    (root / "latin1.jsonl").write_bytes(b"\xff\xfe" + good[0].encode() + b"\n")
    p["rec_latin1"] = str(root / "latin1.jsonl")
    (root / "binary.jsonl").write_bytes(bytes(range(256)) * 4)
    p["rec_binary"] = str(root / "binary.jsonl")
    write_records(root / "good.jsonl", recs)
    p["good"] = str(root / "good.jsonl")
    (root / "empty.jsonl").write_text("")
    p["empty"] = str(root / "empty.jsonl")
    return p


BAD_INTS = ["abc", "1.5", "", "1e3", "0x10", "nan", "--", "1_000x"]
BAD_AGENTS = ["grandmaster", "", ":", "Random", "rollout:n_samples=abc", "rollout:n_samples=1.5", "rollout:n_samples=10**12",
              "rollout:n_samples=1000000000000", "rollout:n_samples=0", "rollout:depth=-1", "rollout:depth=True",
              "rollout:bogus=1", "rollout:n_samples", "rollout:=3", "rollout:seed=1", "rollout:rules=1",
              "rollout:n_samples=" + "9" * 5000, "rollout:depth=" + "[" * 5000, "rollout:n_samples=None",
              "pimc:n_samples=abc", "pimc:exact_closed=maybe", "pimc:depth=100", "pimc:n_samples=1e3",
              "expert:worlds=0", "expert:decision=best", "expert:max_time=-1", "expert:max_time=abc",
              "expert:max_nodes=abc", "expert:max_nodes=0", "trained:greedy=maybe", "trained:greedy=1",
              "heuristic:x=1", "random:seed=3", "missing.pt", "../missing.pt", "rollout:n_samples=3,n_samples=4",
              "rollout:depth=2, depth=3"]


def _cases(p: dict[str, str], tmp: Path) -> list[tuple[str, list[str]]]:
    cases: list[tuple[str, list[str]]] = []
    # ---------------------------------------------------------------- schnapsen-arena
    base = ["random", "heuristic", "--deals", "1", "--workers", "1", "--no-progress"]
    for flag in ("--deals", "--seed", "--workers", "--chunk-size"):
        for v in BAD_INTS + ["-1", "10**12", "9" * 30]:
            cases.append(("arena", base + [flag, v]))
        if flag != "--seed":
            cases.append(("arena", base + [flag, "0"]))
    cases += [("arena", base + ["--deals", "1000001"]), ("arena", base + ["--workers", "257"])]
    for spec in BAD_AGENTS + [p[k] for k in ("dir.pt", "garbage", "corrupt", "truncated", "nan", "s66", "partial",
                                               "list")]:
        cases.append(("arena", [spec] + base[1:]))
    for flag, v in (("--ruleset", "bridge"), ("--ruleset", ""), ("--episode", "rubber"), ("--knob", "nonsense=1"),
                    ("--knob", "must_head"), ("--knob", "=1"), ("--knob", "must_head=abc"),
                    ("--knob", "false_claim=maybe"), ("--knob", "match_target=0"), ("--knob", "close_min_stock=-3"),
                    ("--json", p["dir.jsonl"]), ("--json", str(tmp / "missing" / "x.json")), ("--json", ""),
                    ("--json", p["ro"] + "/x.json"), ("--records", p["dir.jsonl"]), ("--records", ""),
                    ("--records", str(tmp / "missing" / "r.jsonl")), ("--records", p["ro"] + "/r.jsonl")):
        cases.append(("arena", base + [flag, v]))
    cases += [("arena", []), ("arena", ["random"]), ("arena", ["random", "random", "random"]),
              ("arena", ["--round-robin", "random"]), ("arena", ["--round-robin", "random", "random", "--deals", "1"]),
              ("arena", ["random", "random", "--round-robin", "heuristic"]),
              ("arena", ["--round-robin", "random", "heuristic", "--records", str(tmp / "r.jsonl")]),
              ("arena", ["--round-robin", "random", "rollout:n_samples=abc"]),
              ("arena", base + ["--records", str(tmp / "same"), "--json", str(tmp / "same")]),
              ("arena", base + ["--bogus"]), ("arena", base + ["-z"]), ("arena", base + ["--deals"]),
              ("arena", base + ["--round-robin"]), ("arena", ["trained", "random", "--ruleset", "sixtysix24"])]
    for knob in ("ruleset=sixtysix24", "seed=1", "workers=2", "records_path=x", "chunk_size=3", "progress=True",
                 "episode=match", "anchor=heuristic"):  # the names of the arena's own arguments are no rule knobs
        cases += [("arena", base + ["--knob", knob]),
                  ("arena", ["--round-robin", "random", "heuristic"] + base[2:] + ["--knob", knob])]
    # ---------------------------------------------------------------- schnapsen-play
    pbase = ["--opponent", "random"]
    for flag in ("--hands", "--seed"):
        for v in BAD_INTS + ["-1"] + (["9" * 30] if flag == "--seed" else []):
            cases.append(("play", pbase + [flag, v]))
    cases.append(("play", pbase + ["--hands", "0"]))
    for spec in BAD_AGENTS + [p[k] for k in ("dir.pt", "garbage", "corrupt", "truncated", "nan", "partial", "list")]:
        cases.append(("play", ["--opponent", spec]))
    cases += [("play", ["--opponent", p["s66"]]), ("play", ["--opponent", "trained", "--ruleset", "sixtysix24"]),
              ("play", pbase + ["--ruleset", "bridge"]), ("play", pbase + ["--seat", "player_2"]),
              ("play", pbase + ["--record", p["dir.jsonl"]]), ("play", pbase + ["--record", ""]),
              ("play", pbase + ["--record", str(tmp / "missing" / "g.jsonl")]),
              ("play", pbase + ["--record", p["ro"] + "/g.jsonl"]), ("play", pbase + ["--bogus"]),
              ("play", pbase + ["extra"]), ("play", pbase + ["--opponent"])]
    # ---------------------------------------------------------------- schnapsen-replay
    for key in sorted(k for k in p if k.startswith("rec_")):
        cases.append(("replay", [p[key]]))
    cases += [("replay", []), ("replay", [p["dir.jsonl"]]), ("replay", [str(tmp / "missing.jsonl")]),
              ("replay", [""]), ("replay", ["a\x00b"]), ("replay", [p["policy"]]),
              ("replay", [p["good"], "--viewer", "player_2"]),
              ("replay", [p["good"], "extra"]), ("replay", [p["good"], "--bogus"]),
              ("replay", [p["empty"], "--index", "0"])]
    for v in BAD_INTS + ["-1", "2", "9" * 30]:
        cases.append(("replay", [p["good"], "--index", v]))
    # ---------------------------------------------------------------- schnapsen-web
    for flag, extra in (("--port", ["-1", "65536", "9" * 30]), ("--seed", ["-1", "9" * 30]),
                        ("--workers", ["-1", "65", "9" * 30])):
        for v in BAD_INTS + extra:
            cases.append(("web", [flag, v]))
    for key in ("dir.pt", "garbage", "corrupt", "truncated", "nan", "partial", "list"):
        cases.append(("web", ["--policy", p[key]]))
    cases += [("web", ["--policy", str(tmp / "missing.pt")]), ("web", ["--policy", ""]),
              ("web", ["--host", "no-such-host.invalid"]), ("web", ["--host", "a\x00b"]), ("web", ["--host", "x" * 300]),
              ("web", ["--bogus"]), ("web", ["extra"]), ("web", ["--port"]), ("web", ["--open=yes"])]
    # ---------------------------------------------------------------- train.py
    tbase = ["--run-dir", str(tmp / "runs"), "--no-progress", "--no-tensorboard"]
    too_big = {"seed": "9" * 30, "num_envs": "1000000000", "batch_size": "9" * 30, "hidden": "10000000",
               "layers": "100000", "pool_size": "1000000000000", "threads": "100000", "eval_deals": "9" * 30,
               "final_eval_deals": "9" * 30, "eval_workers": "1000"}
    int_flags = ["seed", "total_steps", "num_envs", "batch_size", "minibatch_size", "update_epochs", "hidden",
                 "layers", "pool_size", "pool_every", "eval_every", "eval_deals", "eval_rollout_every",
                 "final_eval_deals", "checkpoint_every", "threads", "stop_after_updates", "eval_workers",
                 "samplers"]
    for name in int_flags:
        flag = "--" + name.replace("_", "-")
        for v in ["abc", "1.5", "", "0x1", "-5", "1e3"] + ([too_big[name]] if name in too_big else []):
            cases.append(("train", tbase + [flag, v]))
    for name in ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef", "vf_coef", "max_grad_norm",
                 "pool_prob", "heuristic_prob", "random_prob"):
        flag = "--" + name.replace("_", "-")
        for v in ["abc", "nan", "inf", "-1", "", "1,5", "1e999"]:
            cases.append(("train", tbase + [flag, v]))
    cases += [("train", tbase + ["--gamma", "2"]), ("train", tbase + ["--pool-prob", "0.8", "--heuristic-prob", "0.8"]),
              ("train", tbase + ["--learning-rate", "0"]), ("train", tbase + ["--minibatch-size", "0"])]
    for flag, v in (("--ruleset", "bridge"), ("--ruleset", ""), ("--device", "nonsense"), ("--device", "cuda:abc"),
                    ("--device", "tpu"), ("--knob", "close_min_stock"), ("--knob", "bogus=1"),
                    ("--knob", "close_min_stock=-3"), ("--knob", "=3"), ("--knob", "ruleset=sixtysix24"), ("--ray-address", ""),
                    ("--inline-samplers", "x"), ("--run-name", "../../x"), ("--run-name", ".."),
                    ("--run-name", "a/b"), ("--run-name", ""), ("--run-name", "."), ("--run-dir", p["good"]),
                    ("--run-dir", ""), ("--run-dir", p["ro"]), ("--run-dir", p["good"] + "/sub"),
                    ("--resume", str(tmp / "missing.pt")), ("--resume", p["dir.pt"]), ("--resume", p["garbage"]),
                    ("--resume", p["corrupt"]), ("--resume", p["truncated"]), ("--resume", p["policy"]),
                    ("--resume", p["partial"]), ("--resume", p["list"]), ("--resume", p["good"]),
                    ("--final-eval-opponents", "grandmaster"), ("--final-eval-opponents", "rollout:n_samples=abc"),
                    ("--final-eval-opponents", "policy+expert:search_stock=99"),  # refused when built, not after
                    ("--final-eval-opponents", "rollout:n_samples=0"),            # the training (review)
                    ("--tensorboard", "x"), ("--anneal-lr", "yes")):
        cases.append(("train", tbase + [flag, v]))
    cases += [("train", tbase + ["--final-eval-opponents"]), ("train", tbase + ["--bogus"]),
              ("train", tbase + ["--ruleset", "sixtysix24", "--final-eval-opponents", "trained"]),
              ("train", tbase + ["positional"]), ("train", tbase + ["--num-envs"]), ("train", tbase + ["-x"]),
              ("train", tbase + ["--resume"]), ("train", tbase + ["--run-name"])]
    return cases


def test_bad_inputs_never_end_in_a_traceback(tmp_path, monkeypatch):
    p = _sandbox(tmp_path)
    ReadOnly(monkeypatch, p["ro"])

    def no_work(*a, **k):  # a bad command line must be refused before any work starts
        raise AssertionError("work started for a bad command line")

    monkeypatch.setattr(train, "start_samplers", no_work)
    monkeypatch.setattr("agents.evaluation.arena.play_deals", no_work)
    monkeypatch.setattr(play_cli, "play_hand", no_work)
    if importlib.util.find_spec("uvicorn") is not None:  # schnapsen-web: no server starts for a bad command line
        monkeypatch.setattr("uvicorn.Server.run", no_work)
    cases = _cases(p, tmp_path)
    before = files_under(tmp_path)
    tracebacks, zero_exits, not_one_line, changed = [], [], [], []
    per_prog = dict.fromkeys(PROGS, 0)
    for prog, argv in cases:
        status, out, err = _run(prog, argv)
        per_prog[prog] += 1
        label = f"{prog} {argv!r}"[:300]
        if isinstance(status, BaseException):
            tracebacks.append(f"{label}: {type(status).__name__}: {status}"[:500])
            continue
        if not status:
            zero_exits.append(f"{label}: {out[-300:]}")
        lines = err.splitlines()
        if len(lines) != 1 or not lines[0].startswith(f"{PROGS[prog]}: error: ") or "Traceback" in err:
            not_one_line.append(f"{label}: {err[:500]!r}")
        now = files_under(tmp_path)
        if now != before:
            changed.append(f"{label}: {sorted(set(now) ^ set(before))}")
            before = now
    assert tracebacks == [], f"{len(tracebacks)} tracebacks in {len(cases)} bad inputs: " + "\n".join(tracebacks)
    assert zero_exits == [], "\n".join(zero_exits)
    assert not_one_line == [], "\n".join(not_one_line)
    assert changed == [], "\n".join(changed)
    assert len(cases) >= 300 and all(n >= 30 for n in per_prog.values()), per_prog


@pytest.mark.parametrize("prog, argv, line", [
    ("arena", ["rollout:n_samples=abc", "random"],
     "schnapsen-arena: error: agent 'rollout': n_samples='abc' is a str, expected int (see schnapsen-arena --help)"),
    ("arena", ["rollout:n_samples=1.5", "random"],
     "schnapsen-arena: error: agent 'rollout': n_samples=1.5 is a float, expected int (see schnapsen-arena --help)"),
    ("arena", ["rollout:n_samples=10**12", "random"],
     "schnapsen-arena: error: agent 'rollout': n_samples='10**12' is a str, expected int (see schnapsen-arena "
     "--help)"),
    ("arena", ["rollout:n_samples=1000000000000", "random"],
     "schnapsen-arena: error: agent 'rollout:n_samples=1000000000000' cannot be built: n_samples must be an int from "
     "1 to 100000, got 1000000000000 (see schnapsen-arena --help)"),
    ("arena", ["random", "random", "--deals", "10000000000"],
     "schnapsen-arena: error: --deals 10000000000: expected an int from 1 to 1,000,000 (see schnapsen-arena --help)"),
    ("arena", ["random", "random", "--workers", "0"],
     "schnapsen-arena: error: --workers 0: expected an int from 1 to 256 (see schnapsen-arena --help)"),
    ("arena", ["random", "random", "--seed", "-1"],
     "schnapsen-arena: error: --seed -1: expected an int from 0 to 2**63 - 1 (see schnapsen-arena --help)"),
    ("arena", ["random", "random", "--deals", "abc"],
     "schnapsen-arena: error: argument --deals: invalid int value: 'abc' (see schnapsen-arena --help)"),
    ("arena", ["random", "random", "--knob", "ruleset=sixtysix24"],
     "schnapsen-arena: error: --knob ruleset=sixtysix24: the ruleset is chosen with --ruleset: expected a rule knob "
     "of RULES.md section 5 (see schnapsen-arena --help)"),
    ("arena", ["random", "random", "--knob", "seed=1"],
     "schnapsen-arena: error: --knob seed=1: unknown rule key 'seed': expected one of "
     f"{', '.join(sorted(KNOBS))} (see schnapsen-arena --help)"),
    ("arena", ["rollout:n_samples=3,n_samples=4", "random"],
     "schnapsen-arena: error: agent 'rollout:n_samples=3,n_samples=4' gives n_samples twice: expected each argument "
     "once (see schnapsen-arena --help)"),
    ("replay", ["a\x00b"],
     "schnapsen-replay: error: 'a\\x00b' contains a NUL character: expected the path of a JSON Lines file of records"),
    ("play", ["--seed", "-1"], "schnapsen-play: error: --seed -1: expected an int from 0 to 2**63 - 1 (see "
                               "schnapsen-play --help)"),
    ("play", ["--hands", "0"], "schnapsen-play: error: --hands 0: expected an int >= 1 (see schnapsen-play --help)"),
    ("train", ["--num-envs", "abc"],
     "train.py: error: --num-envs: invalid literal for int() with base 10: 'abc': expected --num-envs INT"),
    ("train", ["--hidden", "1.5"],
     "train.py: error: --hidden: invalid literal for int() with base 10: '1.5': expected --hidden INT"),
    ("train", ["--knob", "close_min_stock"], "train.py: error: --knob 'close_min_stock' is not KEY=VALUE: expected a "
                                             "rule knob of RULES.md section 5 and its value, e.g. --knob "
                                             "close_min_stock=3"),
    ("train", ["--num-envs"], "train.py: error: --num-envs needs a value: expected --num-envs INT"),
    ("train", ["--knob", "ruleset=sixtysix24"], "train.py: error: --knob ruleset=sixtysix24: the ruleset is chosen "
                                                "with --ruleset: expected a rule knob of RULES.md section 5"),
    ("train", ["--bogus"], "train.py: error: unrecognized argument(s) --bogus: expected the flags that train.py --help "
                           "lists (each --flag followed by its value, if it takes one)"),
    ("train", ["--seed", "-1"], "train.py: error: --seed must be an int from 0 to 2**63 - 1, got -1"),
    ("train", ["--threads", "100000"], "train.py: error: --threads must be from 1 to 1024, got 100000"),
    ("train", ["--learning-rate", "nan"], "train.py: error: --learning-rate must be a finite number in (0, inf), "
                                          "got nan"),
])
def test_exact_one_line_messages(prog, argv, line, tmp_path):
    status, _, err = _run(prog, argv + (["--run-dir", str(tmp_path)] if prog == "train" else []))
    assert status == 2 and err == line + "\n"


@pytest.mark.parametrize("flag, value, problem", [
    ("--num-envs", "1000000000", "GiB for the hands and the rollout buffer"),
    ("--hidden", "10000000", "GiB for the networks"),
])
def test_sizes_beyond_memory_are_refused_before_allocating(flag, value, problem, tmp_path):
    status, _, err = _run("train", [flag, value, "--run-dir", str(tmp_path)])
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("train.py: error: ") and f"{flag} {value}" in err and problem in err
    assert "more than this machine's" in err and err.rstrip().endswith("GiB: expected smaller values")
    assert list(tmp_path.iterdir()) == []


def test_replay_index_and_missing_file_messages(tmp_path):
    write_records(tmp_path / "g.jsonl", random_records(2))
    status, _, err = _run("replay", [str(tmp_path / "g.jsonl"), "--index", "5"])
    assert status == 2 and err == ("schnapsen-replay: error: --index 5: the file holds 2 record(s): expected 0 to 1 "
                                   "(see schnapsen-replay --help)\n")
    status, _, err = _run("replay", [str(tmp_path / "nope.jsonl")])
    assert status == 2 and err == (f"schnapsen-replay: error: {tmp_path / 'nope.jsonl'} does not exist: expected a JSON "
                                   "Lines file of records\n")
    status, _, err = _run("replay", [str(tmp_path)])
    assert status == 2 and err == f"schnapsen-replay: error: {tmp_path} is a folder: expected a JSON Lines file of records\n"


def test_real_entry_points_print_one_line(tmp_path):
    """The scripts as a user runs them: ``python train.py`` and ``python -m agents.cli.arena``."""
    for cmd, prefix in (([sys.executable, "train.py", "--num-envs", "abc"], "train.py: error: --num-envs"),
                        ([sys.executable, "-m", "agents.cli.arena", "rollout:n_samples=abc", "random"],
                         "schnapsen-arena: error: agent 'rollout'")):
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.startswith(prefix) and proc.stderr.count("\n") == 1, proc.stderr[-2000:]
        assert proc.stdout == ""


def test_train_parse_errors_stay_one_line_without_tyros_hook(monkeypatch, capsys):
    """A tyro without its parse-error hook: its message box is flattened to one line."""
    import tyro._errors

    monkeypatch.delattr(tyro._errors, "on_parse_error")
    for argv, words in ((["--num-envs", "abc"], ("--num-envs", "'abc'")), (["--bogus"], ("--bogus",)),
                        (["--samplers", "x"], ("'x'", "--samplers"))):
        assert train.cli(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("train.py: error: ") and err.count("\n") == 1, err
        assert all(w in err for w in words) and "│" not in err and "\x1b" not in err


# ---------------------------------------------------------------------------------------------------------------
# The programs as a user runs them, in a subprocess: a reader that goes away (``| head``), a full disk behind
# standard output, Ctrl-C with worker processes.

_REPLAY_MODULE = {"arena": "agents.cli.arena", "play": "agents.cli.play", "replay": "agents.cli.replay"}


def _spawn(prog: str, argv: list[str], cwd: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", _REPLAY_MODULE[prog]] + argv, cwd=cwd,
                            env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}, **kwargs)


def _cases_for_output(tmp_path: Path) -> list[tuple[str, list[str]]]:
    write_records(tmp_path / "g.jsonl", random_records(3))
    return [("arena", ["random", "random", "--deals", "2", "--workers", "1", "--no-progress", "--json",
                       str(tmp_path / "out.json")]),
            ("replay", [str(tmp_path / "g.jsonl")]),
            ("play", ["--opponent", "random", "--seed", "1", "--seat", "player_1", "--record",
                      str(tmp_path / "p.jsonl")])]


@pytest.mark.parametrize("prog", ["arena", "replay", "play"])
def test_a_reader_that_goes_away_is_no_traceback(prog, tmp_path):
    """``PROG ... | head -1``: the reader has gone when the program writes; it stops quietly, and what it was asked
    to save (the arena's --json, play's unfinished hand) is saved."""
    import os

    (argv,) = [a for p, a in _cases_for_output(tmp_path) if p == prog]
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write: every write fails with EPIPE
    try:
        proc = _spawn(prog, argv, tmp_path, stdin=subprocess.DEVNULL, stdout=w, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(w)
    _, err = proc.communicate(timeout=300)
    assert "Traceback" not in err and err == "", err[-2000:]
    assert proc.returncode == 0
    if prog == "arena":
        assert json.loads((tmp_path / "out.json").read_text())["deals"] == 2


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("prog", ["arena", "replay", "play"])
def test_a_full_disk_behind_standard_output_is_one_line(prog, tmp_path):
    (argv,) = [a for p, a in _cases_for_output(tmp_path) if p == prog]
    with open("/dev/full", "w") as full:
        proc = _spawn(prog, argv, tmp_path, stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE,
                      text=True)
        _, err = proc.communicate(timeout=300)
    assert err == f"{PROGS[prog]}: error: cannot write to standard output: no space left on device\n", err[-2000:]
    assert proc.returncode == 1
    if prog == "arena":
        assert json.loads((tmp_path / "out.json").read_text())["deals"] == 2


def _live_processes_in_group(pgid: int) -> list[str]:
    """The processes of group ``pgid`` that are not zombies (Linux /proc)."""
    live = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            live.append(stat[:200])
    return live


@contextlib.contextmanager
def _arena_group(proc, ends_within: float):
    """Around a test's signals to the arena ``proc`` (started in a session of its own, with two workers): wait until
    the arena and its workers run; after the block, every process of the group must end within ``ends_within``
    seconds. The group is killed in any case, so that no worker outlives the test."""
    import os
    import signal
    import time

    try:
        deadline = time.monotonic() + 120
        while len(_live_processes_in_group(proc.pid)) < 3:  # the arena and its two workers
            assert proc.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        yield
        deadline = time.monotonic() + ends_within
        while _live_processes_in_group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _live_processes_in_group(proc.pid) == []
    finally:
        if proc.poll() is None or _live_processes_in_group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
# Matches far longer than the 3 s before the signal (rollout on the compiled core plays 2,002 hands in about 3 s
# here: 1,001 deals once finished before the signal, a flaky failure); interrupted, their size costs nothing.
@pytest.mark.parametrize("layout", [["--deals", "40000", "--chunk-size", "5"],  # both workers busy, work queued
                                    ["--deals", "20001", "--chunk-size", "20000"]])  # one worker idle
def test_ctrl_c_with_workers_stops_at_once_in_one_line(layout, tmp_path):
    """Ctrl-C in a terminal sends SIGINT to the whole process group: the arena and its workers. It stops within
    seconds (not after the queued work), prints one line, and leaves no worker behind."""
    import os
    import signal
    import time

    records = tmp_path / "r.jsonl"
    proc = _spawn("arena", ["rollout", "heuristic", "--workers", "2", "--no-progress", "--records", str(records)]
                  + layout, tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                  text=True, start_new_session=True,
                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a terminal's shell starts it
    with _arena_group(proc, ends_within=10):
        time.sleep(3)  # the workers are playing (and with the second layout one has finished its one deal)
        os.killpg(proc.pid, signal.SIGINT)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    assert err == ("schnapsen-arena: error: interrupted: no result (the records file keeps the records written so "
                   "far)\n"), err[-3000:]
    assert proc.returncode == 130 and out == ""
    assert took < 15, took
    replay_status, _, replay_err = _run("replay", [str(records)])
    if records.read_text(encoding="utf-8").strip():  # the complete records written before the signal replay
        assert replay_status == 0 and replay_err == ""
    else:  # none finished in deal order before the signal: an empty file, which replay names as such
        assert replay_status == 2 and "holds no complete record" in replay_err


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_workers_end_with_a_killed_arena(sig, tmp_path):
    """``kill PID`` (or a job scheduler's SIGKILL) ends the arena's main process alone: its workers must not be left
    behind, waiting forever for work."""
    import os
    import signal
    import time

    proc = _spawn("arena", ["rollout", "heuristic", "--workers", "2", "--no-progress", "--deals", "4000",
                            "--chunk-size", "5"], tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL, start_new_session=True)
    with _arena_group(proc, ends_within=15):
        time.sleep(1)
        os.kill(proc.pid, getattr(signal, sig))
        proc.wait(timeout=60)


@pytest.mark.parametrize("error, status, message", [
    (BrokenPipeError(32, "Broken pipe"), 0, ""),
    (OSError(28, "No space left on device"), 1,
     "schnapsen-play: error: cannot write to standard output: no space left on device\n")])
def test_play_records_the_unfinished_hand_when_its_output_fails(error, status, message, tmp_path, capsys):
    class FailsAtThePrompt(io.StringIO):
        def write(self, text):
            if text == "> ":
                raise error
            return super().write(text)

    path = tmp_path / "g.jsonl"
    with contextlib.redirect_stdout(FailsAtThePrompt()):  # the opponent leads this hand, then the prompt fails
        got = play_cli.main(["--opponent", "random", "--seed", "1", "--seat", "player_1", "--record", str(path)],
                            inp=io.StringIO("QH\n"))
    assert got == status and capsys.readouterr().err == message
    (line,) = path.read_text().splitlines()
    record = json.loads(line)
    assert record["result"] is None and len(record["actions"]) == 1


def test_play_with_standard_input_closed_is_refused_before_play(tmp_path, monkeypatch):
    """``schnapsen-play <&-``: Python's sys.stdin is None."""
    monkeypatch.setattr(sys, "stdin", None)
    status, out, err = _run_play_main(["--opponent", "random", "--record", str(tmp_path / "g.jsonl")])
    assert status == 2 and out == ""
    assert err == ("schnapsen-play: error: standard input is closed: expected a terminal or a file to read your "
                   "moves from (see schnapsen-play --help)\n")
    assert list(tmp_path.iterdir()) == []


def test_play_input_that_fails_is_one_line_and_keeps_the_hand(tmp_path):
    """A read error on standard input (EIO: the terminal went away) ends play in one line, the unfinished hand
    recorded."""
    class Gone(io.StringIO):
        def readline(self, *a):
            raise OSError(5, "Input/output error")

    path = tmp_path / "g.jsonl"
    out = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()) as err:
        status = play_cli.main(["--opponent", "random", "--seed", "1", "--seat", "player_1", "--record", str(path)],
                               inp=Gone(), out=out)
    assert status == 1
    assert err.getvalue() == "schnapsen-play: error: cannot read your move: input/output error\n"
    (line,) = path.read_text().splitlines()
    assert json.loads(line)["result"] is None


def _run_play_main(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = play_cli.main(argv)
        except SystemExit as e:
            status = e.code
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("prog, argv", [
    ("arena", ["ck.pt", "random", "--records", "ck.pt"]),
    ("arena", ["random", "ck.pt", "--json", "ck.pt"]),
    ("arena", ["ck.pt", "random", "--records", "link.pt"]),
    ("arena", ["--round-robin", "random", "ck.pt", "--json", "./ck.pt"]),
    ("arena", ["random", "random", "--records", "out", "--json", "link_out"]),
    ("play", ["--opponent", "ck.pt", "--record", "ck.pt"]),
    ("play", ["--opponent", "link.pt", "--record", "ck.pt"]),
    ("arena", ["policy+expert:policy=ck.pt,worlds=2", "random", "--records", "ck.pt"]),  # a checkpoint in an option
    ("play", ["--opponent", "policy+expert:policy=ck.pt", "--record", "link.pt"]),
    ("play", ["--opponent", "random", "--record", "ck.pt"]),  # any checkpoint, e.g. a shipped one behind a name
])
def test_an_output_that_is_an_input_is_refused_before_it_is_overwritten(prog, argv, tmp_path, monkeypatch):
    """``schnapsen-arena ck.pt random --records ck.pt`` emptied the checkpoint and then failed to load it in the
    workers; ``--json ck.pt`` replaced it with the results; ``schnapsen-play --opponent ck.pt --record ck.pt``
    emptied it; so did a checkpoint named by a shipped name or inside an agent spec (review). Two outputs that are
    one file through a link overwrote each other. No output replaces an existing checkpoint."""
    import os

    monkeypatch.chdir(tmp_path)
    ck_bytes = (ROOT / "agents" / "learned" / "data" / "schnapsen20_policy.pt").read_bytes()
    (tmp_path / "ck.pt").write_bytes(ck_bytes)
    (tmp_path / "link.pt").symlink_to(tmp_path / "ck.pt")
    (tmp_path / "link_out").symlink_to(tmp_path / "out")
    if prog == "arena":
        argv = argv + ["--deals", "1", "--workers", "1", "--no-progress"]
    status, out, err = _run(prog, argv)
    assert status == 2 and out == "", (status, err)
    assert err.count("\n") == 1 and err.startswith(f"{PROGS[prog]}: error: "), err
    assert ("same file" if "link_out" in argv else "is an existing checkpoint") in err, err
    assert (tmp_path / "ck.pt").read_bytes() == ck_bytes
    assert sorted(os.listdir(tmp_path)) == ["ck.pt", "link.pt", "link_out"]


def test_an_output_that_is_an_agent_checkpoint_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ck.pt").write_bytes((ROOT / "agents" / "learned" / "data" / "schnapsen20_policy.pt").read_bytes())
    status, _, err = _run("arena", ["ck.pt", "random", "--records", "ck.pt"])
    assert status == 2 and err == ("schnapsen-arena: error: --records 'ck.pt' is an existing checkpoint (a zip "
                                   "archive, as torch.save writes): expected another file (writing it would destroy "
                                   "the checkpoint) (see schnapsen-arena --help)\n")


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("flag", ["--json", "--records"])
def test_arena_writes_into_a_named_pipe_and_leaves_it_one(flag, tmp_path):
    """An output that exists and is not a regular file (a named pipe, a device such as /dev/null or /dev/stdout) is
    written into, as the shell's '>' does: --json used to replace it with a regular file (run as root,
    '--json /dev/null' replaced the device), and --records ended in 'cannot flush ... to disk: invalid argument'."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    status, out, err = _run("arena", ["random", "random", "--deals", "2", "--workers", "1", "--no-progress", flag,
                                      str(fifo)])
    reader.join(60)
    assert status == 0 and err == "", err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(os.listdir(tmp_path)) == ["pipe"]
    if flag == "--json":
        assert json.loads(got[0])["deals"] == 2
    else:
        assert len(got[0].decode().splitlines()) == 4


def test_arena_json_through_a_link_keeps_the_link(tmp_path):
    """--json LINK writes the file the link points to (atomically, beside it) instead of replacing the link."""
    import os

    (tmp_path / "results").mkdir()
    target = tmp_path / "results" / "out.json"
    target.write_text("old\n")
    (tmp_path / "latest.json").symlink_to(target)
    status, _, err = _run("arena", ["random", "random", "--deals", "2", "--workers", "1", "--no-progress", "--json",
                                    str(tmp_path / "latest.json")])
    assert status == 0 and err == ""
    assert os.path.islink(tmp_path / "latest.json") and json.loads(target.read_text())["deals"] == 2
    assert sorted(os.listdir(tmp_path)) == ["latest.json", "results"]
    assert os.listdir(tmp_path / "results") == ["out.json"]


def test_replay_refuses_an_overlong_line_at_once(tmp_path):
    """A file that is no records file (a large binary; /dev/zero, which never ends) was read whole into memory
    before its first line was looked at: /dev/zero ended in MemoryError, or in the machine's out-of-memory killer.
    Lines are read one at a time, each at most 1 MiB (a record is about 1 KB)."""
    big = tmp_path / "big.bin"
    big.write_bytes(b"0" * (3 << 20))
    status, out, err = _run("replay", [str(big)])
    assert status == 2 and out == ""
    assert err == (f"schnapsen-replay: error: {big} line 1: longer than 1,048,576 bytes: expected a JSON Lines file "
                   "of records (about 1 KB a line)\n")
    good = tmp_path / "good.jsonl"
    write_records(good, random_records(2))
    with good.open("ab") as f:
        f.write(b"\n\n" + b" " * (1 << 20) + b"\n")  # blank lines, one of exactly the limit: still skipped
    status, _, err = _run("replay", [str(good)])
    assert status == 0 and err == ""


@pytest.mark.parametrize("prog", ["replay", "play", "arena"])
def test_an_output_encoding_without_suit_symbols_shows_letters(prog, tmp_path):
    """``LC_ALL=C`` (a container, cron) or a Windows code page makes standard output ASCII or Latin-1: the table's
    suit symbols ended in a UnicodeEncodeError traceback (schnapsen-play lost the hand in progress). They are shown
    as the suit letters that the card codes use (K♣ -> KC)."""
    import os
    import re

    (argv,) = [a for p, a in _cases_for_output(tmp_path) if p == prog]
    if prog == "arena":  # the round robin's table has signs beyond ASCII (± —)
        argv = ["--round-robin", "random", "heuristic", "--deals", "2", "--workers", "1", "--no-progress"]
    proc = subprocess.run([sys.executable, "-m", _REPLAY_MODULE[prog]] + argv, cwd=tmp_path, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr.decode()[-2000:]
    out = proc.stdout.decode("ascii")
    if prog == "arena":
        assert " +/-" in out and "?" not in out, out
        return
    assert re.search(r"trump [CDHS] ", out) and re.search(r"turn-up (10|[AKQJ9])[CDHS]", out), out[:500]
    if prog == "play":
        (line,) = (tmp_path / "p.jsonl").read_text().splitlines()  # the hand in progress is recorded
        assert json.loads(line)["result"] is None


def test_replay_step_with_standard_input_closed_is_refused(tmp_path, monkeypatch):
    """``schnapsen-replay --step <&-`` ended in 'RuntimeError: input(): lost sys.stdin' after the first action."""
    write_records(tmp_path / "g.jsonl", random_records(1))
    monkeypatch.setattr(sys, "stdin", None)
    status, out, err = _run("replay", [str(tmp_path / "g.jsonl"), "--step"])
    assert status == 2 and out == ""
    assert err == ("schnapsen-replay: error: --step: standard input is closed: expected a terminal (or a file) to "
                   "read the Enter presses from (see schnapsen-replay --help)\n")


@pytest.mark.parametrize("prog", ["arena", "replay", "play"])
@pytest.mark.parametrize("buffered", [True, False])
def test_help_to_a_reader_that_goes_away(prog, buffered, tmp_path):
    """``PROG --help | head -1``: argparse prints the help and exits; with standard output block-buffered (a pipe,
    no PYTHONUNBUFFERED) the text was flushed only at exit, which failed with 'Exception ignored in: ...
    BrokenPipeError' and status 120."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(ROOT)
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-m", _REPLAY_MODULE[prog], "--help"], cwd=tmp_path, stdout=w,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env, timeout=300)
    finally:
        os.close(w)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_arena_with_standard_error_closed_still_plays_and_prints(monkeypatch, capsys):
    """``schnapsen-arena ... 2>&-`` (a daemon, a script): the progress bar wrote to Python's sys.stderr, which is
    None, and the arena ended in an AttributeError after the games, the results lost (and the traceback, with
    nowhere to go, unseen)."""
    monkeypatch.setattr(sys, "stderr", None)
    status = arena_cli.main(["random", "random", "--deals", "3", "--workers", "1"])
    assert status == 0 and "duplicate deals       3" in capsys.readouterr().out


def test_arena_progress_to_a_reader_that_goes_away_loses_nothing(tmp_path, monkeypatch, capsys):
    """``schnapsen-arena ... --json out.json 2>&1 | head -1``: the progress bar's next update on the closed pipe
    ended the match in a BrokenPipeError, out.json never written. The bar stops; the match goes on."""
    class GoneAfterOneWrite(io.StringIO):
        writes = 0

        def write(self, text):
            GoneAfterOneWrite.writes += 1
            if GoneAfterOneWrite.writes > 1:
                raise BrokenPipeError(32, "Broken pipe")
            return len(text)

    monkeypatch.setattr(sys, "stderr", GoneAfterOneWrite())
    status = arena_cli.main(["random", "random", "--deals", "30", "--workers", "1", "--json",
                             str(tmp_path / "out.json")])
    assert status == 0 and GoneAfterOneWrite.writes > 1
    assert json.loads((tmp_path / "out.json").read_text())["deals"] == 30
    assert "duplicate deals       30" in capsys.readouterr().out


def test_arena_json_gets_the_permissions_of_a_plain_file(tmp_path):
    """--json was written through mkstemp, whose files are private (0600): a results file that others (or a web
    server) could read before the atomic write came out unreadable to them. A new file gets what open() would
    give it (0666 less the umask); a file that is replaced keeps its mode."""
    import os
    import stat

    (tmp_path / "plain").write_text("")
    plain_mode = stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)
    base = ["random", "random", "--deals", "1", "--workers", "1", "--no-progress", "--json"]
    assert _run("arena", base + [str(tmp_path / "new.json")])[0] == 0
    assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == plain_mode
    (tmp_path / "old.json").write_text("old\n")
    os.chmod(tmp_path / "old.json", 0o640)
    assert _run("arena", base + [str(tmp_path / "old.json")])[0] == 0
    assert stat.S_IMODE(os.stat(tmp_path / "old.json").st_mode) == 0o640


def test_play_refuses_an_endless_input_line(tmp_path):
    """``schnapsen-play < /dev/zero`` read one line without end: a MemoryError traceback (or the out-of-memory
    killer). A line longer than any move ends play in one line, the hand in progress recorded."""
    path = tmp_path / "g.jsonl"
    with contextlib.redirect_stderr(io.StringIO()) as err:
        status = play_cli.main(["--opponent", "random", "--seed", "1", "--seat", "player_1", "--record", str(path)],
                               inp=io.StringIO("\0" * 100_000), out=io.StringIO())
    assert status == 1
    assert err.getvalue() == ("schnapsen-play: error: cannot read your move: an input line longer than 10,000 "
                              "characters: expected one move (like QH) per line\n")
    (line,) = path.read_text().splitlines()
    assert json.loads(line)["result"] is None


def test_replay_step_reads_bounded_lines(tmp_path, monkeypatch):
    """``schnapsen-replay FILE --step < /dev/zero``: input() read one line without end (a MemoryError, or the
    out-of-memory killer). Each Enter press is read with a size limit."""
    class Endless:
        def readline(self, size=-1):
            if size is None or size < 0:
                raise AssertionError("a read without a size limit from an endless input")
            return "\0" * size

    write_records(tmp_path / "g.jsonl", random_records(1))
    monkeypatch.setattr(sys, "stdin", Endless())
    status, out, err = _run("replay", [str(tmp_path / "g.jsonl"), "--step"])
    assert status == 0 and err == "" and out.count("-- ") >= 5
