"""Fuzz tests (hypothesis): mutated records, mutated positions and random command lines raise only the
documented exceptions and change nothing they should not.

* records: a JSON Lines file of records with a mutated value, key or byte is either read (every record replays) or
  refused with ``RecordError`` (an ``IncompleteLineWarning`` for a cut-off last line); the file is never changed;
  ``schnapsen-replay`` exits 0 or 2 with one line;
* positions: a mutated position dict is either loaded or refused with ``InvalidPositionError``; the dict given is
  never changed, and an env whose reset is refused keeps its hand;
* command lines: random argument lists for the four programs end with an exit status, never an exception; a
  refused one prints one line and writes no file.

Hypothesis runs derandomized and without an example database, so the examples are fixed.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from fault_util import files_under
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.cli import arena as arena_cli
from agents.cli import play as play_cli
from agents.cli import replay as replay_cli
from helpers.scripts import load_script
from schnapsen_env import GameState, InvalidPositionError, RuleSet, schnapsen_v0
from schnapsen_env.records import IncompleteLineWarning, Recorder, RecordError, read_records, record_of

train = load_script("train.py")


def fuzz_settings(n: int):
    return settings(max_examples=n, derandomize=True, database=None, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


JSON = st.recursive(st.none() | st.booleans() | st.integers(-10 ** 20, 10 ** 20) |
                    st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
CARD_LIKE = st.sampled_from(["AS", "TS", "KS", "QS", "JS", "AH", "9C", "XX", "", "as", "A♠", None, 3])


def _paths(obj, prefix=()):
    """Every (path) into a JSON tree, the root included."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _mutate(obj, data):
    """One random change to a JSON tree, in place: replace a value, delete an entry, add a key, or swap two list
    items. Returns the (possibly new) root."""
    paths = list(_paths(obj))
    path = data.draw(st.sampled_from(paths), label="path")
    op = data.draw(st.sampled_from(["replace", "card", "delete", "add", "swap"]), label="op")
    if not path:
        return data.draw(JSON, label="root") if op == "replace" else obj
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if op == "replace":
        parent[key] = data.draw(JSON, label="value")
    elif op == "card":
        parent[key] = data.draw(CARD_LIKE, label="card")
    elif op == "delete":
        del parent[key]
    elif op == "add" and isinstance(parent[key], dict):
        parent[key][data.draw(st.text(max_size=8), label="new key")] = data.draw(JSON, label="new value")
    elif op == "add" and isinstance(parent[key], list):
        parent[key].append(data.draw(JSON | CARD_LIKE, label="new item"))
    elif op == "swap" and isinstance(parent, list) and len(parent) > 1:
        j = data.draw(st.integers(0, len(parent) - 1), label="swap with")
        parent[key], parent[j] = parent[j], parent[key]
    return obj


def _played(seed: int, ruleset: str, steps: int | None = None) -> GameState:
    rng = np.random.default_rng(seed)
    rec = Recorder.deal(RuleSet.make(ruleset), rng)
    n = 0
    while rec.state.result is None and (steps is None or n < steps):
        legal = rec.state.legal_actions()
        rec.step(legal[int(rng.integers(len(legal)))])
        n += 1
    return rec.state


RECORDS = [json.loads(json.dumps(Recorder.deal(RuleSet.make(), np.random.default_rng(0)).record().to_dict()))] + [
    json.loads(json.dumps(record_of(_played(s, r)).to_dict()))
    for s, r in ((1, "schnapsen20"), (2, "sixtysix24"), (3, "schnapsen20"))]


@fuzz_settings(250)
@given(st.data())
def test_fuzz_records_only_record_errors_and_the_file_is_unchanged(data):
    lines = [copy.deepcopy(r) for r in RECORDS]
    k = data.draw(st.integers(0, len(lines) - 1), label="record")
    lines[k] = _mutate(lines[k], data)
    blob = b"".join(json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines)
    byte_op = data.draw(st.sampled_from(["none", "cut", "flip", "insert"]), label="byte op")
    if byte_op != "none" and blob:
        i = data.draw(st.integers(0, len(blob) - 1), label="at")
        if byte_op == "cut":
            blob = blob[:i]
        elif byte_op == "flip":
            blob = blob[:i] + bytes([blob[i] ^ data.draw(st.integers(1, 255), label="xor")]) + blob[i + 1:]
        else:
            blob = blob[:i] + data.draw(st.binary(min_size=1, max_size=4), label="bytes") + blob[i:]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        path.write_bytes(blob)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                recs = read_records(path)
            except RecordError as e:
                assert str(e).startswith(str(path)) and "\n" not in str(e)
                recs = None
        assert all(issubclass(w.category, IncompleteLineWarning) for w in caught), [str(w.message) for w in caught]
        if recs is not None:
            assert len(recs) <= len(lines)
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = replay_cli.main([str(path), "--index", "0"]) if recs else replay_cli.main([str(path)])
        assert status in (0, 2)
        assert all(line.startswith("schnapsen-replay: ") for line in err.getvalue().splitlines())
        assert status == 0 or err.getvalue().count("schnapsen-replay: error: ") == 1
        assert path.read_bytes() == blob


@fuzz_settings(400)
@given(st.data())
def test_fuzz_positions_only_invalid_position_errors_and_nothing_changes(data):
    ruleset = data.draw(st.sampled_from(["schnapsen20", "sixtysix24", "schnapsen10"]), label="ruleset")
    seed = data.draw(st.integers(0, 30), label="seed")
    state = _played(seed, ruleset, steps=data.draw(st.integers(0, 14), label="steps"))
    pos = json.loads(json.dumps(state.position()))
    pos = _mutate(pos, data)
    given_pos = copy.deepcopy(pos)
    rules = RuleSet.make(ruleset)
    env = schnapsen_v0.raw_env(ruleset=ruleset)
    env.reset(seed=seed)
    before = (env.position(), env.agent_selection, {a: env.observe(a)["observation"].tobytes() for a in env.agents})
    try:
        loaded = GameState.from_position(rules, pos)
    except InvalidPositionError as e:
        assert "\n" not in str(e)
        loaded = None
    assert pos == given_pos  # the dict given is not changed
    try:
        env.reset(options={"position": pos})
    except InvalidPositionError:
        assert loaded is None or loaded.result is not None
        after = (env.position(), env.agent_selection, {a: env.observe(a)["observation"].tobytes() for a in env.agents})
        assert after == before  # a refused reset keeps the hand
    else:
        assert loaded is not None and env.position() == loaded.position()
    assert pos == given_pos


TOKENS = {
    "arena": ["random", "heuristic", "rollout:n_samples=1,depth=1", "rollout:n_samples=abc", "rollout:depth=1.5",
              "grandmaster", "x.pt", "--deals", "--seed", "--workers", "--chunk-size", "--episode", "match", "hand",
              "--ruleset", "sixtysix24", "--knob", "must_head=False", "must_head", "--json", "--records",
              "--round-robin", "--no-progress", "0", "1", "2", "-1", "abc", "1.5", "", "OUT", "DIR", "RO"],
    "play": ["--opponent", "random", "heuristic", "grandmaster", "rollout:n_samples=abc", "--hands", "--seed",
             "--seat", "player_0", "player_1", "alternate", "--match", "--record", "--ruleset", "sixtysix24",
             "--no-reveal", "0", "1", "-1", "abc", "", "OUT", "DIR", "RO"],
    "replay": ["GOOD", "BAD", "DIR", "MISSING", "--index", "--viewer", "player_0", "player_1", "--hide", "--step",
               "0", "1", "-1", "99", "abc", ""],
    "train": ["--num-envs", "--hidden", "--seed", "--learning-rate", "--gamma", "--ruleset", "sixtysix24", "--device",
              "cpu", "--run-name", "../x", "ok", "--resume", "GOOD", "BAD", "--backend", "tf", "--pool-prob",
              "--tensorboard", "--no-anneal-lr", "--final-eval-opponents", "grandmaster", "--bogus", "0", "1", "4",
              "-1", "abc", "1.5", "nan", "", "1000000000"],
}
PROG_NAMES = {"arena": "schnapsen-arena", "play": "schnapsen-play", "replay": "schnapsen-replay", "train": "train.py"}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz_cli")
    (root / "dir").mkdir()
    (root / "ro").mkdir()
    good = root / "good.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in RECORDS[1:3]))
    (root / "bad.jsonl").write_text("{not json\n")
    return root


@fuzz_settings(160)
@given(prog=st.sampled_from(sorted(TOKENS)), data=st.data())
@pytest.mark.slow
def test_fuzz_command_lines_end_in_a_status_never_an_exception(sandbox, monkeypatch, prog, data):
    from fault_util import ReadOnly

    argv = data.draw(st.lists(st.sampled_from(TOKENS[prog]) | st.text(max_size=5), max_size=7), label="argv")
    names = {"OUT": str(sandbox / "out" / "o.json"), "DIR": str(sandbox / "dir"), "RO": str(sandbox / "ro" / "x"),
             "GOOD": str(sandbox / "good.jsonl"), "BAD": str(sandbox / "bad.jsonl"),
             "MISSING": str(sandbox / "missing.jsonl")}
    argv = [names.get(a, a) for a in argv]
    # whatever was drawn, a valid command line stays small: these flags come last and win
    safe = {"arena": ["--deals", "1", "--workers", "1", "--no-progress"],
            "play": [], "replay": [],
            "train": ["--total-steps", "64", "--batch-size", "64", "--minibatch-size", "32", "--num-envs", "2",
                      "--hidden", "8", "--final-eval-deals", "0", "--eval-every", "0", "--no-tensorboard",
                      "--no-progress", "--run-dir", str(sandbox / "runs")]}[prog]
    with monkeypatch.context() as m:
        ReadOnly(m, sandbox / "ro")
        before = files_under(sandbox)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                if prog == "arena":
                    status = arena_cli.main(argv + safe)
                elif prog == "play":
                    status = play_cli.main(argv, inp=io.StringIO(""), out=out)
                elif prog == "replay":
                    status = replay_cli.main(argv)
                else:
                    status = train.cli(argv + safe)
            except SystemExit as e:
                status = e.code
    assert isinstance(status, int) and status in (0, 1, 2), status
    lines = err.getvalue().splitlines()
    if status == 2:
        assert len(lines) == 1 and lines[0].startswith(f"{PROG_NAMES[prog]}: error: "), err.getvalue()
        assert files_under(sandbox) == before
    assert "Traceback" not in err.getvalue()
