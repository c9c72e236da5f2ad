"""The AEC env on one engine against two, in one process: ``raw_env`` playing on the compiled state alone (its
``GameState`` built only when asked for) against the same env with its ``GameState`` asked for at every deal, which
plays as the env did before: ``GameState`` for the rules and a ``CoreMirror`` replaying each action into the
compiled array for the observations. Interleaved rounds, medians.

Run:

    python benchmarks/aec_engine.py [--seconds 0.7] [--rounds 7] [--seed 0]

The script measures the checkout it lives in (its root goes first on ``sys.path``).

Rows (random legal play through PettingZoo's AEC loop, exactly as ``benchmarks/env.py`` plays it: its
``run_aec``; a *decision* is one action of a live agent):

* ``one engine raw_env()`` / ``one engine env()``: ``schnapsen_v0.raw_env()`` and ``schnapsen_v0.env()`` as they
  are (nobody asks for the ``GameState``, as in an RL loop);
* ``two engines raw_env()`` / ``two engines env()``: :class:`TwoEnginesEnv`, the same env asked for its ``GameState``
  after every reset (what ``position()``, ``render()``, records or ``env.game`` do), unwrapped and with
  ``env()``'s wrappers;
* PettingZoo's ``leduc_holdem_v4`` and ``connect_four_v3`` when installed (the ``bench`` extra), the peers of
  ``benchmarks/env.py``, with the ratios of our rows to the faster of them.

Noise: every row runs once untimed, then ``--rounds`` times, rounds interleaved; the table gives each row's median
decisions/s with its min and max, and the ratios of medians with the range of the same ratio within each round.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout, not an installed copy

sys.path.append(str(Path(__file__).resolve().parent))  # the shared harness, however this file is loaded
import harness  # noqa: E402

import schnapsen_env  # noqa: E402
from schnapsen_env import aec, schnapsen_v0  # noqa: E402

RULESET = "schnapsen20"
WARMUP_S = 0.2


def _load_env_benchmark():
    """``benchmarks/env.py`` as a module (for its ``run_aec``: the very loop that benchmark times)."""
    spec = importlib.util.spec_from_file_location("_env_benchmark", Path(__file__).with_name("env.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TwoEnginesEnv(aec.raw_env):
    """``raw_env`` as it played before it ran on one engine: the ``GameState`` asked for at every deal, so that every
    step pushes into it and the array follows it (:class:`schnapsen_env.mirror.CoreMirror`)."""

    def reset(self, seed=None, options=None):
        super().reset(seed=seed, options=options)
        self.game  # noqa: B018  (builds the live GameState: two engines for the rest of the hand)


def wrapped(cls):
    """``schnapsen_v0.env()``'s wrappers around ``cls``."""
    def make(**kwargs):
        with mock.patch.object(aec, "raw_env", cls):
            return aec.env(**kwargs)
    return make


def _check_same_play(seed: int, hands: int = 50) -> None:
    """Both ways play exactly the same (observations, masks, rewards) over seeded hands."""
    a, b = schnapsen_v0.raw_env(ruleset=RULESET), TwoEnginesEnv(ruleset=RULESET)
    rng = np.random.default_rng(seed)
    a.reset(seed=seed)
    b.reset(seed=seed)
    for _ in range(hands):
        for agent in a.agent_iter():
            oa, ra, ta, _, _ = a.last()
            ob, rb, tb, _, _ = b.last()
            assert agent == b.agent_selection and ra == rb and ta == tb
            assert np.array_equal(oa["observation"], ob["observation"])
            assert np.array_equal(oa["action_mask"], ob["action_mask"])
            action = None if ta else int(rng.choice(np.flatnonzero(oa["action_mask"])))
            a.step(action)
            b.step(action)
        assert a._game is None  # the one-engine env never built its GameState
        a.reset()
        b.reset()


def main(argv: list[str] | None = None) -> int:
    parser = harness.timing_parser(__doc__.splitlines()[0])
    harness.json_option(parser)
    args = parser.parse_args(argv)
    harness.check_timing(parser, args)
    run_aec = _load_env_benchmark().run_aec
    _check_same_play(args.seed)

    def row(make: Callable[[], object]) -> Callable[[float], tuple]:
        return lambda seconds: run_aec(make, args.seed, seconds)

    rows = [
        ("two engines raw_env()", row(lambda: TwoEnginesEnv(ruleset=RULESET))),
        ("one engine raw_env()", row(lambda: schnapsen_v0.raw_env(ruleset=RULESET))),
        ("two engines env()", row(lambda: wrapped(TwoEnginesEnv)(ruleset=RULESET))),
        ("one engine env()", row(lambda: schnapsen_v0.env(ruleset=RULESET))),
    ]
    peers = []
    for name in ("leduc_holdem_v4", "connect_four_v3"):
        try:
            module = importlib.import_module(f"pettingzoo.classic.{name}")
        except ImportError as exc:
            print(f"{name} unavailable ({exc}); the bench extra installs it")
            continue
        rows.append((name, row(module.env)))
        peers.append(name)

    print(f"AEC engine benchmark: random legal play, {RULESET}, seed {args.seed}, median of {args.rounds} "
          f"interleaved rounds of {args.seconds:g} s per row, Python {sys.version.split()[0]}, numpy "
          f"{np.__version__}, schnapsen_env from {Path(schnapsen_env.__file__).parent}; both ways play the same "
          "observations, masks and rewards (checked first)")
    for _label, fn in rows:
        fn(WARMUP_S)
    results: dict[str, list[float]] = {label: [] for label, _ in rows}
    for _ in range(args.rounds):
        for label, fn in rows:
            _n, d, t, _c = fn(args.seconds)
            results[label].append(d / t)
    print(f"{'env':<22} {'decisions/s':>12} {'min':>10} {'max':>10}")
    med = {}
    for label, _ in rows:
        r = results[label]
        med[label] = float(np.median(r))
        print(f"{label:<22} {med[label]:>12,.0f} {min(r):>10,.0f} {max(r):>10,.0f}")

    def ratio(a: str, b: str) -> str:
        per_round = [x / y for x, y in zip(results[a], results[b])]
        return f"{med[a] / med[b]:.3f}x (per round {min(per_round):.3f}..{max(per_round):.3f})"

    print(f"one engine / two engines, raw_env(): {ratio('one engine raw_env()', 'two engines raw_env()')}")
    print(f"one engine / two engines, env():     {ratio('one engine env()', 'two engines env()')}")
    pairs = [("one engine raw_env()", "two engines raw_env()"), ("one engine env()", "two engines env()")]
    if peers:
        best = max(peers, key=med.get)
        for label in ("two engines env()", "one engine env()", "two engines raw_env()", "one engine raw_env()"):
            print(f"{label} / {best}: {ratio(label, best)}")
            pairs.append((label, best))
    if args.json:
        harness.write_json(args.json, {
            "title": f"AEC env on one engine against two, random legal play, {RULESET}, median of {args.rounds} "
                     f"interleaved rounds of {args.seconds:g} s",
            "unit": "decisions/s", "peers": peers, "rows": harness.rows_figures(results),
            "ratios": {f"{a} / {b}": harness.ratio_figures(results[a], results[b]) for a, b in pairs}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
