"""Tables of the documentation rendered from the measurement files under ``benchmarks/`` (one source for each number).

A page (or the README) holds a marker ``<!-- table: NAME -->`` followed by the table and ``<!-- end table -->``;
:func:`render` makes the table NAME from its JSON file. The MkDocs build fills every marker of every page
(:func:`on_page_markdown`, registered under ``hooks:`` in ``mkdocs.yml``), and ``tests/test_docs.py`` checks that
the README's tables equal what :func:`render` makes, so a rerun benchmark cannot leave a stale number behind.
``python scripts/docs_tables.py README.md`` rewrites the README's tables in place.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end table -->)", re.S)


def _load(name: str) -> dict:
    return json.loads((ROOT / "benchmarks" / name).read_text(encoding="utf-8"))


def _ci(mean: float, low: float, high: float) -> str:
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


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


TABLES = {"strength": strength, "ladder": ladder, "exploitability": exploitability}


def render(name: str) -> str:
    """The table ``name`` as Markdown.

    Raises:
        KeyError: an unknown table name (the message lists the known ones).
    """
    if name not in TABLES:
        raise KeyError(f"unknown table {name!r}: expected one of {sorted(TABLES)}")
    return TABLES[name]()


def fill(markdown: str) -> str:
    """``markdown`` with the body of every table marker replaced by its rendering."""
    return MARKER.sub(lambda m: m.group(1) + render(m.group("name")) + m.group(4), markdown)


def on_page_markdown(markdown: str, **kwargs) -> str:
    """MkDocs hook: fill the table markers of each page."""
    return fill(markdown)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        path = Path(arg)
        path.write_text(fill(path.read_text(encoding="utf-8")), encoding="utf-8")
