"""Game records (write, read, replay, reproduce, refuse bad ones) and the terminal play program."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from agents.cli.play import main as play_main
from agents.cli.replay import main as replay_main
from schnapsen_env import GameState, RuleSet, schnapsen_v0
from schnapsen_env.records import HandRecord, Recorder, RecordError, deck_of, read_records, replay_to_end, write_records


def _random_records(n, ruleset="schnapsen20", seed=0, **knobs):
    rules = RuleSet.make(ruleset, **knobs)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        rec = Recorder.deal(rules, rng)
        while rec.state.result is None:
            legal = rec.state.legal_actions()
            rec.step(legal[rng.integers(len(legal))])
        out.append((rec.record(), rec.state))
    return out


@pytest.mark.parametrize("ruleset", ["schnapsen20", "sixtysix24", "schnapsen10"])
def test_records_write_read_replay_reproduce(tmp_path, ruleset):
    pairs = _random_records(40, ruleset, seed=1)
    path = tmp_path / "hands.jsonl"
    assert write_records(path, [r for r, _ in pairs]) == 40
    loaded = read_records(path)
    for rec, (orig, final) in zip(loaded, pairs):
        assert rec.to_dict() == orig.to_dict()
        assert replay_to_end(rec).position() == final.position()


def test_record_loads_into_the_env_and_reproduces():
    (rec, final), = _random_records(1, seed=4)
    env = schnapsen_v0.raw_env(**{k: v for k, v in rec.rules.items() if k != "ruleset"})
    env.reset(options={"deck": rec.deck, "dealer": rec.dealer})
    for name in rec.actions:
        env.step(env.unwrapped.action_names.index(name))
    assert env.infos["player_0"]["result"] == rec.result


def test_deck_of_inverts_the_deal():
    rng = np.random.default_rng(2)
    for ruleset in ("schnapsen20", "sixtysix24", "schnapsen10"):
        s = GameState.new_hand(RuleSet.make(ruleset), rng)
        again = GameState.from_deck(s.rules, deck_of(s), f"player_{s.dealer}")
        assert again == s


def _lines(pairs):
    return [json.dumps(r.to_dict()) for r, _ in pairs]


@pytest.mark.parametrize("corrupt, message", [
    (lambda d: "{not json", "line 2: not JSON"),
    (lambda d: json.dumps({**d, "extra": 1}), "line 2: .*unknown key"),
    (lambda d: json.dumps({**d, "actions": d["actions"][:1] + ["play XX"] + d["actions"][2:]}),
     "line 2, action 1 'play XX'"),
    (lambda d: json.dumps({**d, "actions": d["actions"][:-1]}), "line 2: the recorded result"),
    (lambda d: json.dumps({**d, "deck": d["deck"][:-1]}), "line 2: .*deck"),
    (lambda d: json.dumps({**d, "rules": {"ruleset": "bridge"}}), "line 2: .*ruleset"),
])
def test_bad_records_refused_naming_line_and_action(tmp_path, corrupt, message):
    pairs = _random_records(3, seed=5)
    lines = _lines(pairs)
    lines[1] = corrupt(pairs[1][0].to_dict())
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordError, match=message):
        read_records(path)


def test_illegal_action_in_record_named():
    (rec, _), = _random_records(1, seed=6)
    d = rec.to_dict()
    first_legal = d["actions"][0]
    illegal = next(n for n in RuleSet.make().action_names
                   if n not in GameState.from_deck(RuleSet.make(), d["deck"], d["dealer"]).legal_action_names())
    d["actions"][0] = illegal
    with pytest.raises(RecordError, match=f"action 0 '{illegal}'.*legal are"):
        replay_to_end(HandRecord.from_dict(d))
    assert first_legal != illegal


class _Typist:
    """Stdin for the play program: scripted lines, then the first legal action's card or name."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.state = None

    def readline(self, size=-1):  # TextIO.readline: play reads at most a size
        return self.lines.pop(0) + "\n" if self.lines else ""


def test_play_program_whole_hand_with_bad_input(tmp_path, monkeypatch):
    import agents.cli.play as pc

    typed = []
    orig = pc.parse_action

    def parse(text, state):  # "auto" types the first legal action, as a card code where possible
        if text.strip() == "auto":
            name = state.legal_action_names()[0]
            text = name[5:] if name.startswith("play ") else name
        typed.append(text.strip())
        return orig(text, state)

    monkeypatch.setattr(pc, "parse_action", parse)
    inp = _Typist(["", "ZZ", "marriage Q", "play AC AC", "?", "help"] + ["auto"] * 40)
    out = io.StringIO()
    rec_path = tmp_path / "played.jsonl"
    rc = play_main(["--opponent", "random", "--seed", "1", "--seat", "player_0", "--record", str(rec_path)],
                   inp=inp, out=out)
    text = out.getvalue()
    assert rc == 0
    assert "neither a card code" in text and "Legal:" in text and "legal: " in text
    assert "won" in text and "opponent's remaining cards" in text
    (rec,) = read_records(rec_path)  # the hand was recorded and replays to the same result
    assert rec.result is not None


def test_play_program_quits_on_end_of_input():
    out = io.StringIO()
    assert play_main(["--opponent", "random", "--seed", "2"], inp=_Typist([]), out=out) == 0
    assert "bye" in out.getvalue()


def test_play_program_bad_opponent_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        play_main(["--opponent", "grandmaster"], inp=_Typist([]), out=io.StringIO())
    assert "unknown agent" in capsys.readouterr().err


def test_replay_program(tmp_path, capsys):
    path = tmp_path / "h.jsonl"
    write_records(path, [r for r, _ in _random_records(2, seed=7)])
    assert replay_main([str(path), "--index", "1"]) == 0
    out = capsys.readouterr().out
    assert "=== record 1: " in out and "hand over" in out
    path.write_text("garbage\n")
    assert replay_main([str(path)]) == 2


def test_records_refuse_bad_bytes_and_types(tmp_path):
    (rec, _), = _random_records(1, seed=8)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b"\xff\xfe" + json.dumps(rec.to_dict()).encode())
    with pytest.raises(RecordError, match="line 1: not UTF-8"):
        read_records(bad)
    for change in ({"dealer": 1}, {"result": {**rec.result, "game_points": True}}):
        with pytest.raises(RecordError, match="line 1"):
            p = tmp_path / "t.jsonl"
            p.write_text(json.dumps({**rec.to_dict(), **change}) + "\n")
            read_records(p)


def test_play_program_checks_record_path_before_playing(tmp_path, capsys):
    with pytest.raises(SystemExit):
        play_main(["--opponent", "random", "--record", str(tmp_path / "missing" / "x.jsonl")], inp=_Typist([]),
                  out=io.StringIO())
    assert "--record" in capsys.readouterr().err


def test_play_program_records_an_unfinished_hand_on_quit(tmp_path):
    path = tmp_path / "q.jsonl"
    inp = _Typist(["?"])  # then end of input mid-hand
    out = io.StringIO()
    # With seed 4 the opponent (player_0) leads trick 1, so the hand has actions when the input ends.
    play_main(["--opponent", "random", "--seed", "4", "--seat", "player_1", "--record", str(path)], inp=inp, out=out)
    (rec,) = read_records(path)
    assert rec.result is None and rec.actions[-1].startswith("play ")  # stopped where the human was to follow


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_arena_writes_records_that_replay(tmp_path, episode):
    from agents.evaluation.arena import play_match

    path = tmp_path / "arena.jsonl"
    res = play_match("heuristic", "random", n_deals=4, seed=3, workers=1, progress=False, episode=episode,
                     records_path=path)
    recs = read_records(path)  # every record replays to its recorded result
    assert len(recs) == res.hands
    assert {r.players["player_0"] for r in recs} == {"heuristic", "random"}


def test_play_program_match_score_follows_the_player(monkeypatch):
    import re

    import agents.cli.play as pc

    orig = pc.parse_action

    def parse(text, state):
        if text.strip() == "auto":
            name = state.legal_action_names()[-1]
            text = name[5:] if name.startswith("play ") else name
        return orig(text, state)

    monkeypatch.setattr(pc, "parse_action", parse)
    out = io.StringIO()
    play_main(["--opponent", "heuristic", "--seed", "5", "--match"], inp=_Typist(["auto"] * 400), out=out)
    text = out.getvalue()
    you = sum(int(n) for n in re.findall(r"^you win (\d+) game point", text, re.M))
    opp = sum(int(n) for n in re.findall(r"^the opponent wins (\d+) game point", text, re.M))
    last = re.findall(r"^match: you (\d+), opponent (\d+)", text, re.M)[-1]
    assert (int(last[0]), int(last[1])) == (you, opp)
    assert ("you won the match" in text) == (you > opp)
