"""The rule knobs are declared once (schnapsen_env/ruleset.py's presets); the rule book's table (docs/RULES.md
section 5), the docs page of rulesets and the RuleSet dataclass must agree with them."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from schnapsen_env.ruleset import KNOBS, RULESETS, RuleSet

ROOT = Path(__file__).resolve().parents[1]


def _knob_table(path: Path, after: str) -> dict[str, tuple[str, str, str]]:
    """``{key: (schnapsen20 cell, sixtysix24 cell, schnapsen10 cell)}`` of the first knob table after the heading
    ``after``."""
    text = path.read_text(encoding="utf-8")
    start = text.index(after)
    rows = {}
    for line in text[start:].splitlines():
        m = re.match(r"\| `([a-z0-9_]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip(), m.group(4).strip())
        elif rows and not line.startswith("|"):
            break
    return rows


def _cell(value, python: bool) -> str:
    """How a table writes a value: strings quoted in backticks, "—" for no effect, booleans as in JSON (the rule
    book) or Python (the docs page of rulesets, whose examples are Python)."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return f'`"{value}"`'
    return repr(value) if python else json.dumps(value)


@pytest.mark.parametrize("path, heading, python", [(ROOT / "docs" / "RULES.md", "## 5. Rule knobs", False),
                                                   (ROOT / "docs" / "rulesets.md", "| key | schnapsen20 | sixtysix24 | schnapsen10 |", True)])
def test_knob_tables_match_the_presets(path, heading, python):
    table = _knob_table(path, heading)
    assert list(table) == list(KNOBS), f"{path.name}: the knob keys differ from schnapsen_env/ruleset.py's"
    presets = {name: RuleSet.make(name).to_dict() for name in RULESETS}
    for key, cells in table.items():
        want = tuple(_cell(presets[name].get(key), python) for name in RULESETS)
        assert tuple(c.replace("**", "") for c in cells) == want, (path.name, key)


def test_ruleset_fields_are_the_knobs():
    fields = [f.name for f in dataclasses.fields(RuleSet) if f.init and f.name != "name"]
    assert fields == list(KNOBS)
    assert RuleSet() == RuleSet.make("schnapsen20")
