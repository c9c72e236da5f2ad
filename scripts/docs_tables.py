"""Figures of the documentation rendered from the measurement files under ``benchmarks/`` (one source for each number).

Two markers, in any page or the README:

* ``<!-- table: NAME [FILE] -->`` followed by a table and ``<!-- end table -->``: :func:`render` makes the table NAME
  (from FILE, for the tables that take one, e.g. ``<!-- table: rates vector_speed.json -->``);
* ``<!-- value: FILE:PATH[:FORMAT] -->123<!-- end value -->``: one figure inline, the value at PATH in
  ``benchmarks/FILE`` written in FORMAT (:func:`value`). PATH is dotted keys (``elo.expert``), list indices
  (``pairs.0``, ``curve.-1``) and selectors of the one list item whose fields equal the given ones
  (``pairs[agent_a=expert,agent_b=trained-220m].mean``). FORMAT is a Python format spec (``+.3f``, ``,.0f``,
  ``.1%``), optionally after ``~`` (negate: the other side of a pair) and ``/N`` or ``*N`` and a space (scale:
  ``/60 .1f`` gives minutes from seconds); or ``ci`` / ``~ci``: a pair record's mean and 95% interval,
  ``+0.127 [+0.063, +0.190]`` (``~``: from the other agent's side). Without FORMAT: integers with thousands
  separators, anything else as ``str``.

The MkDocs build fills every marker of every page (:func:`on_page_markdown`, registered under ``hooks:`` in
``mkdocs.yml``; a value's markers are dropped from the built page), and ``tests/test_docs.py`` checks that every
page's source already holds what :func:`fill` makes (the README, read on GitHub, is not built), so a rerun benchmark
cannot leave a stale number behind, and that no measured figure stands in the prose outside these markers.
``python scripts/docs_tables.py README.md CONTRIBUTING.md docs/*.md`` rewrites the markers in place after a
benchmark wrote its JSON.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"(<!-- table: (?P<name>[\w-]+)(?: (?P<arg>[\w.-]+))? -->\n)(?P<body>.*?)(<!-- end table -->)",
                    re.S)
VALUE = re.compile(r"(<!-- value: (?P<spec>[^>]*?) -->)(?P<body>.*?)(<!-- end value -->)", re.S)
PATH_PART = re.compile(r"\[(?P<select>[^\]]*)\]|(?P<key>[^.\[\]]+)")


def _load(name: str) -> Any:
    path = ROOT / "benchmarks" / name
    if not path.is_file():
        raise KeyError(f"no file benchmarks/{name}: expected a JSON file written by a benchmark")
    return json.loads(path.read_text(encoding="utf-8"))


def lookup(data: Any, path: str) -> Any:
    """The value at ``path`` (dotted keys, list indices, ``[field=value,...]`` selectors) in ``data``.

    Raises:
        KeyError: a key, index or selector that matches nothing, or a selector that matches several items.
    """
    node = data
    for m in PATH_PART.finditer(path):
        if m.group("select") is not None:
            want = dict(kv.split("=", 1) for kv in m.group("select").split(","))
            found = [x for x in node if isinstance(x, dict) and all(str(x.get(k)) == v for k, v in want.items())]
            if len(found) != 1:
                raise KeyError(f"{path!r}: [{m.group('select')}] matches {len(found)} items, expected 1")
            node = found[0]
        elif isinstance(node, list):
            try:
                node = node[int(m.group("key"))]
            except (ValueError, IndexError):
                raise KeyError(f"{path!r}: {m.group('key')!r} is no index of a list of {len(node)}") from None
        elif isinstance(node, dict) and m.group("key") in node:
            node = node[m.group("key")]
        else:
            keys = sorted(node) if isinstance(node, dict) else type(node).__name__
            raise KeyError(f"{path!r}: no key {m.group('key')!r} (found {keys})")
    return node


def _ci(mean: float, low: float, high: float) -> str:
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def pair_ci(pair: dict, flip: bool = False) -> str:
    """A pair record's mean and 95% CI, from its first agent's side (``flip``: the second's)."""
    if flip:
        return _ci(-pair["mean"], -pair["ci_high"], -pair["ci_low"])
    return _ci(pair["mean"], pair["ci_low"], pair["ci_high"])


def formatted(x: Any, fmt: str | None) -> str:
    """``x`` in the marker's FORMAT (see the module's docstring)."""
    if fmt is None:
        return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x)
    negate = fmt.startswith("~")
    fmt = fmt.removeprefix("~")
    if fmt == "ci":
        return pair_ci(x, flip=negate)
    scale = 1.0
    if fmt[:1] in "/*" and " " in fmt:
        factor, fmt = fmt.split(" ", 1)
        scale = 1 / float(factor[1:]) if factor[0] == "/" else float(factor[1:])
    x = -x if negate else x
    return format(x * scale if scale != 1.0 else x, fmt)


def value(spec: str) -> str:
    """The text of a value marker ``FILE:PATH[:FORMAT]``.

    Raises:
        KeyError: a malformed spec, a missing file, or a path that names nothing.
    """
    parts = spec.split(":", 2)
    if len(parts) < 2:
        raise KeyError(f"value marker {spec!r}: expected FILE:PATH[:FORMAT]")
    try:
        return formatted(lookup(_load(parts[0]), parts[1]), parts[2] if len(parts) == 3 else None)
    except (TypeError, ValueError) as e:  # a format that does not fit the value
        raise KeyError(f"value marker {spec!r}: {e}") from None


def provenance(d: dict) -> str:
    """The sentence under a table: the command, commit, machine and load average of the record ``d``."""
    load = (d.get("load_average") or {}).get("start")
    commit = str(d["commit"])
    commit = commit[:7] + ("+changes" if commit.endswith("+changes") else "")  # files differed from the commit
    return (f"Measured by `{d['command']}` at commit {commit} on {d['machine']}"
            + (f" (load average {load[0]:g} at the start)" if load else "") + ".")


def strength() -> str:
    """The ladder of ``schnapsen20`` (``benchmarks/ladder_schnapsen20.json``): every agent's Elo and its margin
    against ``expert`` in game points a hand, from the agent's side, with the 95% CI."""
    d = _load("ladder_schnapsen20.json")
    vs: dict[str, tuple[float, float, float, int, int]] = {}
    for p in d["pairs"]:
        if "expert" not in (p["agent_a"], p["agent_b"]):
            continue
        sign = 1 if p["agent_a"] != "expert" else -1
        other = p["agent_b"] if sign == -1 else p["agent_a"]
        lo, hi = sorted((sign * p["ci_low"], sign * p["ci_high"]))
        vs[other] = (sign * p["mean"], lo, hi, p["deals"], p["seed"])
    rows = ["| agent | Elo | against `expert`: game points a hand, 95% CI |", "|---|---:|---|"]
    for name, elo in sorted(d["elo"].items(), key=lambda kv: -kv[1]):
        if name == "expert":
            cell = "(the yardstick)"
        elif name in vs:
            mean, lo, hi, deals, seed = vs[name]
            cell = f"{_ci(mean, lo, hi)} over {deals:,} duplicate deals"
        else:
            cell = "not played"
        rows.append(f"| `{name}` | {elo:.0f} | {cell} |")
    seeds = sorted({p["seed"] for p in d["pairs"]})
    rows.append("")
    n = len(d["agents"])
    rows.append(f"Elo anchored at `{d['anchor']}` = 0, fitted over the {len(d['pairs'])} pairs played (of "
                f"{n * (n - 1) // 2}) "
                f"(seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}); a hand is worth 1 to 3 game "
                "points. Source: `benchmarks/ladder_schnapsen20.json`.")
    return "\n".join(rows) + "\n"


#: The targets of the ``schnapsen20`` exploitability table (``responders``), from the weakest.
EXPLOITABILITY_TARGETS = ("pimc", "expert", "trained-220m", "policy+expert", "expert+")


def responders() -> str:
    """A lower bound on the exploitability of each ``schnapsen20`` target (:data:`EXPLOITABILITY_TARGETS`): the best
    result of any agent that played it on the ladder's duplicate deals (``benchmarks/ladder_schnapsen20.json``), from
    the responder's side, with its 95% CI; the expected result of any strategy against a target is at most the best
    response's, so each row bounds the target's exploitability (game points a hand, both seats) from below. The
    responders that are not ladder agents are in ``benchmarks/responders_schnapsen20.json``."""
    pairs = _load("ladder_schnapsen20.json")["pairs"] + _load("responders_schnapsen20.json")["pairs"]
    rows = ["| target | responders played | best responder | its result: game points a hand, 95% CI |",
            "|---|---:|---|---|"]
    for target in EXPLOITABILITY_TARGETS:
        found = []
        for p in pairs:
            if target not in (p["agent_a"], p["agent_b"]) or p["agent_a"] == p["agent_b"]:
                continue
            sign = 1 if p["agent_b"] == target else -1
            other = p["agent_a"] if sign == 1 else p["agent_b"]
            lo, hi = sorted((sign * p["ci_low"], sign * p["ci_high"]))
            found.append((sign * p["mean"], lo, hi, other, p["deals"]))
        if not found:
            rows.append(f"| `{target}` | 0 | not played | |")
            continue
        mean, lo, hi, other, deals = max(found)
        rows.append(f"| `{target}` | {len(found)} | `{other}` | {_ci(mean, lo, hi)} over {deals:,} deals |")
    rows.append("")
    rows.append("The best of several responders is picked after the fact, so its mean leans slightly high (a "
                "selection effect within the CIs); a negative best result bounds nothing beyond 0. Sources: "
                "`benchmarks/ladder_schnapsen20.json`, `benchmarks/responders_schnapsen20.json`.")
    return "\n".join(rows) + "\n"


def ladder() -> str:
    """Every pair of the ``schnapsen20`` ladder (``benchmarks/ladder_schnapsen20.json``) as a cross table: the mean
    game points a hand of the row agent against the column agent, +- the 95% CI's half-width; agents by Elo."""
    d = _load("ladder_schnapsen20.json")
    names = [n for n, _ in sorted(d["elo"].items(), key=lambda kv: -kv[1])]
    cell: dict[tuple[str, str], str] = {}
    for p in d["pairs"]:
        half = (p["ci_high"] - p["ci_low"]) / 2
        cell[p["agent_a"], p["agent_b"]] = f"{p['mean']:+.2f} ±{half:.2f}"
        cell[p["agent_b"], p["agent_a"]] = f"{-p['mean']:+.2f} ±{half:.2f}"
    rows = ["| row agent vs column | Elo | " + " | ".join(f"`{n}`" for n in names) + " |",
            "|---|---:|" + "---:|" * len(names)]
    for a in names:
        cells = ["—" if a == b else cell.get((a, b), "") for b in names]
        rows.append(f"| `{a}` | {d['elo'][a]:.0f} | " + " | ".join(cells) + " |")
    rows.append("")
    rows.append("Game points a hand of the row agent, ± the 95% CI's half-width over duplicate deals; blank: not "
                "played. Source: `benchmarks/ladder_schnapsen20.json`.")
    return "\n".join(rows) + "\n"


def openspiel() -> str:
    """Every ladder pair of ``openspiel-ismcts`` (``benchmarks/ladder_schnapsen20.json``), from its side: the
    opponent, the deals, game points a hand with the 95% CI, the share of hands it won and the wall time."""
    d = _load("ladder_schnapsen20.json")
    me = "openspiel-ismcts"
    rows = [f"| `{me}` against | deals | game points a hand, 95% CI | hands won | seconds |",
            "|---|---:|---|---:|---:|"]
    for p in d["pairs"]:
        if me not in (p["agent_a"], p["agent_b"]):
            continue
        flip = p["agent_b"] == me
        other = p["agent_a"] if flip else p["agent_b"]
        won = (p["hands_won_b"] if flip else p["hands_won_a"]) / p["hands"]
        rows.append(f"| `{other}` | {p['deals']:,} | {pair_ci(p, flip)} | {won:.1%} | {p['seconds']:,.0f} |")
    rows.append("")
    rows.append(f"Seed {', '.join(sorted({str(p['seed']) for p in d['pairs']}))}, the ladder's deals. Source: "
                "`benchmarks/ladder_schnapsen20.json`.")
    return "\n".join(rows) + "\n"


def exploitability() -> str:
    """Exact exploitability on ``schnapsen10`` (``benchmarks/exploitability_schnapsen10.json``), least exploitable
    first: NashConv and exploitability (NashConv / 2) in game points a hand, and the seconds the measurement took."""
    d = _load("exploitability_schnapsen10.json")
    rows = ["| policy | NashConv | exploitability | seconds |", "|---|---:|---:|---:|"]
    for r in sorted(d["rows"], key=lambda r: r["nash_conv"]):
        rows.append(f"| {r['policy']} | {r['nash_conv']:.4f} | {r['exploitability']:.4f} | {r['seconds']:.0f} |")
    commands = sorted({r["command"] for r in d["rows"] if r.get("command")})
    rows.append("")
    rows.append("Measured by " + " and ".join(f"`{c}`" for c in commands)
                + ". Source: `benchmarks/exploitability_schnapsen10.json`.")
    return "\n".join(rows) + "\n"


def final_table(name: str) -> str:
    """The final evaluation of a training run (``evaluation`` of a run's ``summary.json`` kept as
    ``benchmarks/NAME``): per opponent the duplicate deals, game points a hand with the 95% CI and hand win rate."""
    d = _load(name)
    rows = ["| opponent | deals | game points a hand, 95% CI | hand win rate |", "|---|---:|---|---:|"]
    for opponent, p in d["evaluation"].items():
        rows.append(f"| `{opponent}` | {p['deals']:,} | {pair_ci(p)} | {p['hand_win_rate']:.1%} |")
    rows.append("")
    rows.append(f"Seed {', '.join(sorted({str(p['seed']) for p in d['evaluation'].values()}))}. Run by "
                f"`{d['command']}` at commit {d['commit']}. Source: `benchmarks/{name}`.")
    return "\n".join(rows) + "\n"


def pairs(name: str) -> str:
    """The pairs of a ladder of few agents (``benchmarks/NAME``, ``pairs`` as ``schnapsen-arena --json`` writes
    each, and the ladder's ``command``): per pair its two agents, duplicate deals, game points a hand of the first
    agent with the 95% CI, its hand win rate (a tied hand half won), and the wall time; in the file's order."""
    d = _load(name)
    rows = ["| agent | against | deals | game points a hand, 95% CI | hand win rate | seconds |",
            "|---|---|---:|---|---:|---:|"]
    for p in d["pairs"]:
        rows.append(f"| `{p['agent_a']}` | `{p['agent_b']}` | {p['deals']:,} | {pair_ci(p)} | "
                    f"{p['hand_win_rate']:.1%} | {p['seconds']:,.0f} |")
    rulesets = sorted({p["ruleset"] for p in d["pairs"]})
    seeds = sorted({str(p["seed"]) for p in d["pairs"]})
    rows.append("")
    rows.append(f"Ruleset {', '.join(rulesets)}, seed {', '.join(seeds)}; a hand is worth 1 to 3 game points. "
                f"Measured by `{d['command']}` at commit {d['commit']} on {d['machine']}. Source: `benchmarks/{name}`.")
    return "\n".join(rows) + "\n"


def rates(name: str) -> str:
    """A speed benchmark's record (``benchmarks/NAME``, written by a script's ``--json``): each row's median with
    its lowest and highest round (or position, for times a move), then each ratio of medians with its per-round range
    and goal."""
    d = _load(name)
    unit = d["unit"]
    digits = 2 if unit.startswith("ms") else 0  # times a move in ms; rates in whole units
    rows = [f"| row | median {unit} | lowest | highest |", "|---|---:|---:|---:|"]
    for label, r in d["rows"].items():
        rows.append(f"| {label} | {r['median']:,.{digits}f} | {r['min']:,.{digits}f} | {r['max']:,.{digits}f} |")
    if not d["ratios"]:
        return "\n".join(rows) + f"\n\n{d['title']}. {provenance(d)} Source: `benchmarks/{name}`.\n"
    rows.append("")
    rows.append("| ratio of medians | ratio | per round | goal |")
    rows.append("|---|---:|---|---:|")
    for label, r in d["ratios"].items():
        goal = "" if r.get("goal") is None else f"{r['goal']:g}x"
        digits = 2 if r["ratio"] >= 0.1 else 3  # RLlib's small fractions of train.py's rate keep a digit
        spread = "" if r.get("low") is None else f"{r['low']:.{digits}f}x..{r['high']:.{digits}f}x"
        rows.append(f"| {label} | {r['ratio']:.{digits}f}x | {spread} | {goal} |")
    rows.append("")
    rows.append(f"{d['title']}. {provenance(d)} Source: `benchmarks/{name}`.")
    return "\n".join(rows) + "\n"


def solver_core() -> str:
    """The compiled solver against the reference solver (``benchmarks/solver_core_speed.json``): per row the
    positions, the median ms a full solve with the range of the round medians, the median nodes and the node rate;
    then the ratios."""
    d = _load("solver_core_speed.json")
    s = d["speed"]
    rows = ["| row | positions | median ms | round medians | median nodes | Mnodes/s |",
            "|---|---:|---:|---|---:|---:|"]
    for label, r in s["rows"].items():
        lo, hi = r["round_medians_ms"]
        rows.append(f"| {label} | {r['positions']} | {r['median_ms']:.2f} | {lo:.2f}..{hi:.2f} | "
                    f"{r['median_nodes']:,.0f} | {r['mnodes_per_s']:.3f} |")
    rows.append("")
    rows.append(f"Node rate compiled / reference: {s['node_rate_ratio']['trick 1']:.1f}x from trick 1, "
                f"{s['node_rate_ratio']['trick 4']:.1f}x from trick 4 (goal {s['goal_node_rate_ratio']:g}x); median "
                f"time reference / compiled: {s['time_ratio']['trick 1']:.1f}x and {s['time_ratio']['trick 4']:.1f}x. "
                f"{s['title'].capitalize()}. {provenance(d)} Source: `benchmarks/solver_core_speed.json`.")
    return "\n".join(rows) + "\n"


def web_soak() -> str:
    """The soak of ``schnapsen-web`` (``benchmarks/web_soak.json``, written by ``benchmarks/web_soak.py``): per kind
    of request in the measured part (after the warm-up), its answers, their times measured by the clients (median,
    90th and 99th percentile, highest) and their statuses; each minute of the run (answers, the heuristic's moves,
    the server's memory, the games and replays it kept, the machine's load average); then each goal, its measured
    value and its limit."""
    d = _load("web_soak.json")
    named = {"-1": "left first"}  # a client that left during a search: no answer read
    rows = ["| request | answers | p50 ms | p90 ms | p99 ms | max ms | statuses |",
            "|---|---:|---:|---:|---:|---:|---|"]
    for kind, k in d["after_warm_up"].items():
        statuses = ", ".join(f"{named.get(s, s)}: {n:,}" for s, n in k["statuses"].items())
        rows.append(f"| {kind} | {k['count']:,} | {k['p50_ms']:,.1f} | {k['p90_ms']:,.1f} | {k['p99_ms']:,.1f} | "
                    f"{k['max_ms']:,.0f} | {statuses} |")
    rows += ["", "| minute | answers | heuristic p50 ms | heuristic p99 ms | server MiB | games kept | replays kept | "
             "load average |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in d["per_minute"]:
        cells = [("" if r[k] is None else f"{r[k]:,.1f}") for k in
                 ("heuristic_p50_ms", "heuristic_p99_ms", "rss_mib")]
        cells += [("" if r[k] is None else f"{r[k]:,}") for k in ("games", "replays")]
        cells.append("" if r["load_1min"] is None else f"{r['load_1min']:.1f}")
        rows.append(f"| {r['minute']} | {r['answers']:,} | " + " | ".join(cells) + " |")
    rows += ["", "| goal | measured | limit | |", "|---|---:|---:|---|"]
    for g in d["goals"]:
        value, limit = g["value"], g["limit"]
        shown = (f"{value:+.1%}", f"{limit:.0%}") if "growth" in g["goal"] else \
            (f"{value:,.0f}" if isinstance(value, float) else f"{value:,}", f"{limit:g}")
        rows.append(f"| {g['goal']} | {shown[0]} | {shown[1]} | {'holds' if g['holds'] else 'missed'} |")
    w = d["warm_up"]
    rows.append("")
    rows.append(f"The measured part ({d['seconds'] - w['seconds']:.0f} s after a warm-up of {w['seconds']:.0f} s, ended "
                f"by {w['ended_by']}) of {d['title']}; its search workers "
                f"{', '.join(f'{k} {v}' for k, v in d['lanes'].items())}. {provenance(d)} Source: "
                "`benchmarks/web_soak.json`.")
    return "\n".join(rows) + "\n"


def search_teacher() -> str:
    """The search teacher's measurement (``benchmarks/search_teacher_schnapsen20.json``, written by
    ``benchmarks/search_teacher.py``): per run (each ``--search-teacher-coef``, and without the teacher) its learner
    decisions, training seconds, the search's labels, seconds and share of the samplers' time, the result against
    ``pimc`` on the final table's duplicate deals and against the run without the teacher; then each run's learning
    curve against ``pimc`` (training seconds, decisions, game points a hand with the 95% CI)."""
    d = _load("search_teacher_schnapsen20.json")
    st = d["settings"]
    names = {k: (f"coef {r['coef']:g}" if "coef" in r else "no teacher") for k, r in d["runs"].items()}
    rows = ["| run | decisions | training s | labels | search s | share of sampler time | against `pimc` | "
            "against no teacher |", "|---|---:|---:|---:|---:|---:|---|---|"]
    for key, r in d["runs"].items():
        t = r["search_teacher"]
        vs = pair_ci(d["against_no_teacher"][key]) if key in d["against_no_teacher"] else ""
        rows.append(f"| {names[key]} | {r['steps']:,} | {r['train_seconds']:,.0f} | {t['labels']:,} | "
                    f"{t['seconds']:,.0f} | {t['share_of_sampler_time']:.1%} | {pair_ci(r['vs_pimc'])} | {vs} |")
    rows += ["", "| run | training s | decisions | against `pimc` |", "|---|---:|---:|---|"]
    for key, r in d["runs"].items():
        for h in r["curve"]:
            lo, hi = h["ci"]["pimc"]
            rows.append(f"| {names[key]} | {h['train_seconds']:,.0f} | {h['step']:,} | {h['pimc']:+.3f} "
                        f"[{lo:+.3f}, {hi:+.3f}] |")
    rows.append("")
    rows.append(f"Game points a hand with the 95% CI. The teacher's runs: `--search-teacher-share {st['share']:g} "
                f"--search-teacher-nodes {st['nodes']}` and the coefficient named. Seed {st['seed']}, "
                f"`--samplers {st['samplers']}`; against `pimc` on {st['deals']:,} duplicate deals (the final table's) "
                f"and against the run without the teacher on {st['deals']:,} others, the curve on "
                f"{st['eval_deals']:,} every {st['eval_every']} updates. {provenance(d)} Source: "
                "`benchmarks/search_teacher_schnapsen20.json`.")
    return "\n".join(rows) + "\n"


def learning_curves() -> str:
    """The learning curves (``benchmarks/learning_curves_schnapsen20.json``, written by
    ``benchmarks/learning_curves.py``): per recipe and evaluation, the training minutes, learner decisions and the
    game points a hand against each opponent of the panel with the 95% CI (the last row of a recipe: its final
    evaluation, on more deals)."""
    d = _load("learning_curves_schnapsen20.json")
    st = d["settings"]
    opps = st["opponents"]
    rows = ["| run | training min | decisions | " + " | ".join(f"against `{o}`" for o in opps) + " |",
            "|---|---:|---:|" + "---|" * len(opps)]
    for name, r in d["runs"].items():
        for h in r["curve"]:
            cells = [_ci(h[o], *h["ci"][o]) if o in h else "" for o in opps]  # an arena's row: its opponent
            final = (f" (final, {h['deals']:,} deals, seed {h['seed']})" if "deals" in h
                     else " (final)" if h.get("final") else "")
            rows.append(f"| {name}{final} | {h['train_seconds'] / 60:.1f} | {h['step']:,} | " + " | ".join(cells) + " |")
    flags = "; ".join(f"{name}: `{r['flags']}`" for name, r in d["runs"].items())
    by_run: dict[str, tuple[dict, list[str]]] = {}  # each run's measurement: its own, else the record's
    for name, r in d["runs"].items():
        m = {**d, **{k: r[k] for k in ("command", "commit", "machine", "load_average") if k in r}}
        by_run.setdefault(provenance(m), (m, []))[1].append(name)
    measured = " ".join(text.replace("Measured by", f"{', '.join(names)}: measured by", 1)
                        for text, (_, names) in by_run.items())
    rows += ["", f"Game points a hand with the 95% CI. The runs' `train.py` flags ({flags}), its defaults otherwise "
                 f"(those of the commit that ran it). An evaluation every {st['eval_every']} updates on "
                 f"{st['eval_deals']:,} duplicate deals (the same deals at the same evaluation of each recipe), the "
                 f"final one on {st['final_deals']:,} (a run added from its folder: its own flags' evaluations, and "
                 f"an arena result of its policy as its final row, on the deals and seed shown there); the minutes "
                 f"leave out the evaluations. {measured} "
                 "Source: `benchmarks/learning_curves_schnapsen20.json`."]
    return "\n".join(rows) + "\n"


def recipe_variants() -> str:
    """The recipe's variants (``benchmarks/recipe_variants_schnapsen20.json``, written by
    ``benchmarks/recipe_variants.py``): per variant its flags, learner decisions, training minutes and rate, the game
    points a hand against ``pimc`` and ``expert`` on the final table's deals and, where measured, against
    ``expert`` on the arena's deals of another seed and, where verified, on those of a third seed, each with the 95%
    CI."""
    d = _load("recipe_variants_schnapsen20.json")
    st = d["settings"]
    arena = [r for r in d["rows"] if "arena_expert" in r]
    verified = [r for r in d["rows"] if "verify_expert" in r]
    head = "| variant | flags | decisions | training min | decisions/s | against `pimc` | against `expert` |"
    rule = "|---|---|---:|---:|---:|---|---|"
    if arena:
        a = arena[0]["arena_expert"]
        head += f" against `expert`, {a['deals']:,} deals of seed {a['seed']} |"
        rule += "---|"
    if verified:
        v = verified[0]["verify_expert"]
        head += f" the same, {v['deals']:,} deals of a seed drawn after the choice |"
        rule += "---|"
    rows = [head, rule]
    for r in sorted(d["rows"], key=lambda r: r["name"] != "default"):  # the defaults first, then as recorded
        cells = [r["name"], f"`{r['flags']}`" if r["flags"] else "(the defaults)", f"{r['steps']:,}",
                 f"{r['train_seconds'] / 60:.1f}", f"{r['steps_per_second']:,}",
                 _ci(r["pimc"]["mean"], r["pimc"]["ci_low"], r["pimc"]["ci_high"]),
                 _ci(r["expert"]["mean"], r["expert"]["ci_low"], r["expert"]["ci_high"])]
        if arena:
            e = r.get("arena_expert")
            cells.append(_ci(e["mean"], e["ci_low"], e["ci_high"]) if e else "")
        if verified:
            e = r.get("verify_expert")
            cells.append(f"{_ci(e['mean'], e['ci_low'], e['ci_high'])} (seed {e['seed']})" if e else "")
        rows.append("| " + " | ".join(cells) + " |")
    commands = sorted({(r["command"], str(r["commit"])[:7]) for r in d["rows"]})
    rows += ["", f"Game points a hand with the 95% CI. Each variant is one `train.py` run of seed {st['seed']} for "
                 f"{st['total_steps']:,} learner decisions (unless its flags set others) with the flags shown added to the "
                 "defaults; against `pimc` "
                 f"and `expert` on the final table's {st['deals']:,} duplicate deals (seed {st['final_seed']}). "
                 + ("The last column's deals were drawn after the variants were compared on the others, a new seed "
                    "for each recipe chosen, to verify that choice. " if verified else "")
                 + "The training minutes were taken on a machine shared with other jobs (pessimistic). Measured by "
                 + "; ".join(f"`{c}` at commit {k}" for c, k in commands)
                 + f" on {d['machine']}. Source: `benchmarks/recipe_variants_schnapsen20.json`."]
    return "\n".join(rows) + "\n"


def train_flags() -> str:
    """``train.py``'s flags (its ``Args`` dataclass) by ``--help``'s groups, each with its default and the first
    clause of its help: the reference of the recipe's hyperparameters, read from the code that declares them (not a
    measurement, so no provenance line)."""
    import importlib.util

    from agents.training.command_line import first_clause, grouped_flags, resolved_default

    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    train = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = train  # dataclasses look their module up there
    spec.loader.exec_module(train)
    rows = ["| group | flag | default | what it sets |", "|---|---|---|---|"]
    for f in grouped_flags(train.Args):
        if isinstance(f.default, tuple):
            shown = " ".join(map(str, f.default)) or "(none)"
        elif f.default is None:  # resolved when the run starts: what the help says it becomes
            shown = resolved_default(f.doc) or "(none)"
        else:
            shown = str(f.default)
        text = first_clause(f.doc).replace("|", "\\|")
        rows.append(f"| {f.group} | `{', '.join(f.flags)}` | `{shown}` | {text} |")
    return "\n".join(rows) + "\n"


TABLES = {"strength": strength, "ladder": ladder, "exploitability": exploitability, "openspiel": openspiel,
          "solver-core": solver_core, "web-soak": web_soak, "search-teacher": search_teacher,
          "learning-curves": learning_curves, "responders": responders,
          "recipe-variants": recipe_variants, "train-flags": train_flags}
FILE_TABLES = {"rates": rates, "final-table": final_table, "pairs": pairs}  # tables that take the JSON file as their argument


def render(name: str, arg: str | None = None) -> str:
    """The table ``name`` (of the file ``arg``, for a table that takes one) as Markdown.

    Raises:
        KeyError: an unknown table name (the message lists the known ones), or a file table without its file.
    """
    if name in FILE_TABLES:
        if arg is None:
            raise KeyError(f"table {name!r} needs its JSON file: <!-- table: {name} FILE.json -->")
        return FILE_TABLES[name](arg)
    if name not in TABLES:
        raise KeyError(f"unknown table {name!r}: expected one of {sorted(TABLES) + sorted(FILE_TABLES)}")
    return TABLES[name]()


def fill(markdown: str) -> str:
    """``markdown`` with the body of every table and value marker replaced by its rendering."""
    markdown = MARKER.sub(lambda m: m.group(1) + render(m.group("name"), m.group("arg")) + m.group(5), markdown)
    return VALUE.sub(lambda m: m.group(1) + value(m.group("spec")) + m.group(4), markdown)


def on_page_markdown(markdown: str, **kwargs) -> str:
    """MkDocs hook: fill the table and value markers of each page, and leave each value's text without its markers
    (an HTML comment that starts a line would end the paragraph around it)."""
    return VALUE.sub(lambda m: m.group("body"), fill(markdown))


def main(argv: list[str] | None = None) -> int:
    """Rewrite the markers of the given Markdown files in place; a missing file or a bad marker is one line, exit
    2, and no file is written until every one has been rendered."""
    import argparse

    parser = argparse.ArgumentParser(description="Fill the table and value markers of Markdown files in place from "
                                                 "the JSON records under benchmarks/.")
    parser.add_argument("files", nargs="+", type=Path, help="Markdown files, e.g. README.md CONTRIBUTING.md docs/*.md")
    args = parser.parse_args(argv)
    filled = {}
    try:
        for path in args.files:
            filled[path] = fill(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        print(f"docs_tables.py: cannot read {path}: {e.strerror or e}", file=sys.stderr)
        return 2
    except (KeyError, ValueError, IndexError, TypeError) as e:
        print(f"docs_tables.py: {path}: {e}", file=sys.stderr)
        return 2
    for path, text in filled.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
