"""The documentation: the site builds with warnings as errors; every code block of the README and the docs runs (the
Python blocks in a fresh namespace, the shell blocks command by command in a fresh folder); every other block is
checked (JSON parses, the citation matches CITATION.cff, a ``text`` block after a Python block is that block's
output); every figure rendered from a benchmark's JSON file equals its rendering, and no measured figure stands in
the prose outside those renderings (one source for each number).

The markers a page may put on the lines right above a fenced block (HTML comments, invisible on the site):

* ``<!-- slow -->``: the block takes a minute or more; its test is marked slow (still run by CI);
* ``<!-- run-with: OLD => NEW -->``: the test runs the block with the text OLD replaced by NEW, e.g. a smaller
  ``--total-steps`` than the page shows; OLD must occur in the block. ``{port}`` in NEW is a free port;
* ``<!-- cwd: clone -->``: the block runs in the clone itself (commands that read it, as ``ruff check .``), not in a
  fresh folder;
* ``<!-- stdin: TEXT -->``: what the block's commands read (``\\n`` for a new line; default ``quit``);
* ``<!-- skip: REASON -->``: the block is not run, for REASON (few, each justified: a second machine, an extra
  that CI does not install).

``docs/RULES.md`` and ``docs/API.md``, the rule book and the interface specification copied from the project's
shared folder, are specification text: their blocks are scenarios (``tests/test_scenarios.py``), not commands, and
their numbers are rules.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
SPEC_PAGES = {"RULES.md", "API.md"}  # the rule book and the interface spec: specification text, left as written
DOC_PAGES = [p for p in PAGES if p.name not in SPEC_PAGES]
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<code>.*?)^```\s*$", re.S | re.M)
SHELL = {"bash", "sh", "shell", "console"}
KINDS = SHELL | {"python", "text", "json", "bibtex"}  # every fence says which of these it is
COMMENT = re.compile(r"^<!-- (?P<key>slow|run-with|stdin|skip|cwd)(?::\s*(?P<value>.*?))? -->\s*$")


def _tables():
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "scripts" / "docs_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclasses.dataclass
class Block:
    page: Path
    line: int
    kind: str
    code: str
    markers: list[tuple[str, str]]  # (key, value) of the marker comments right above the fence, top to bottom

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def marker(self, key: str) -> list[str]:
        return [v for k, v in self.markers if k == key]


#: Markers of a block whose page does not carry them yet, by (page, the block's first line): docs/web-app.md is being
#: rewritten on another branch; once merged, these move onto the page above the block and leave this table.
MARKERS_FOR = {
    ("web-app.md", "bash scripts/bootstrap.sh --extras web schnapsen-web --open"): [
        ("run-with", '"--open " => "--open --port {port} "'),
        ("run-with", f'"--port 8080 --policy runs/NAME/policy.pt" => '
                     f'"--port {{port}} --policy {ROOT}/agents/learned/data/schnapsen20_policy.pt"')],
}


def _blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        markers = []
        for ln in reversed(text[:m.start()].rstrip("\n").split("\n")):
            c = COMMENT.match(ln.strip())
            if c is None:
                break
            markers.insert(0, (c.group("key"), c.group("value") or ""))
        first = m.group("code").split("\n", 1)[0].split("  #")[0].strip()
        markers = markers or MARKERS_FOR.get((page.name, first), [])
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, m.group("info").strip().split(" ")[0],
                         m.group("code"), markers))
    return out


BLOCKS = [b for page in DOC_PAGES for b in _blocks(page)]


# --- Python blocks ------------------------------------------------------------------------------------------------

def _python_params() -> list:
    return [pytest.param(b, id=b.id, marks=[pytest.mark.slow] if b.marker("slow") else [])
            for b in BLOCKS if b.kind == "python"]


def test_the_pages_hold_python_blocks():
    """The extraction finds the README's examples (so that the test below can fail)."""
    assert sum(b.page.name == "README.md" and b.kind == "python" for b in BLOCKS) >= 3


def _run_python(code: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "<doc block>", "exec"), {"__name__": "__doc_block__"})
    return out.getvalue()


@pytest.mark.parametrize("block", _python_params())
def test_python_block_runs(block, tmp_path, monkeypatch):
    """Each block runs as a user pastes it, in a fresh namespace, from a folder of its own; where a ``text`` block
    follows it, that is its output, printed exactly."""
    monkeypatch.chdir(tmp_path)
    printed = _run_python(block.code)
    following = BLOCKS[BLOCKS.index(block) + 1] if BLOCKS.index(block) + 1 < len(BLOCKS) else None
    if following is not None and following.page == block.page and following.kind == "text" and \
            _only_blank_between(block, following):
        assert printed == following.code, f"{following.id} is not what {block.id} prints:\n{printed}"


def _only_blank_between(a: Block, b: Block) -> bool:
    lines = a.page.read_text(encoding="utf-8").split("\n")
    closing = a.line + a.code.count("\n") + 1  # the closing fence's line (1-based)
    return all(not ln.strip() for ln in lines[closing:b.line - 1])


# --- the other blocks ---------------------------------------------------------------------------------------------

def test_every_fence_says_what_it_holds():
    """A bare fence could be code, output or an example: each names its kind, so that the tests know what to do
    with it (run it, parse it, compare it)."""
    bad = [f"{b.id}: ```{b.kind}" for b in BLOCKS if b.kind not in KINDS]
    assert not bad, f"fences without a known kind ({sorted(KINDS)}): {bad}"


def test_every_text_block_is_the_output_of_the_python_block_above():
    """A ``text`` block is checked: it must directly follow a Python block, whose printed output it is (compared by
    ``test_python_block_runs``)."""
    for i, b in enumerate(BLOCKS):
        if b.kind == "text":
            before = BLOCKS[i - 1] if i else None
            assert before is not None and before.page == b.page and before.kind == "python" and \
                _only_blank_between(before, b), f"{b.id}: a text block that no Python block prints"


def test_json_blocks_parse():
    for b in BLOCKS:
        if b.kind == "json":
            json.loads(b.code)


def test_the_citation_block_matches_citation_cff():
    """The README's BibTeX entry says what CITATION.cff says (title, version, year of release)."""
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    field = {k: v.strip().strip("'\"") for k, v in re.findall(r"^(\w[\w-]*):\s*(.+)$", cff, re.M)}
    (bib,) = [b for b in BLOCKS if b.kind == "bibtex"]
    entry = dict(re.findall(r"^\s*(\w+)\s*=\s*\{+(.*?)\}+,?\s*$", bib.code, re.M))
    assert entry["title"] == field["title"]
    assert entry["version"] == field["version"]
    assert entry["year"] == field["date-released"][:4]


# --- shell blocks -------------------------------------------------------------------------------------------------

BOOTSTRAP = re.compile(r"^(?P<env>(?:\w+=\S*\s+)*)bash scripts/bootstrap\.sh(?: --extras (?P<extras>\S+))? "
                       r"(?P<rest>.*)$")
REPO_PATH = re.compile(r"(?<![\w/.-])((?:train|train_rllib)\.py|(?:benchmarks|examples|notebooks|tests|scripts)/"
                       r"[\w./-]+)")
SERVERS = ("schnapsen-web", "mkdocs serve", "tensorboard", "jupyter lab")  # commands that serve until stopped


def _extras() -> dict[str, list[str]]:
    """The optional extras of pyproject.toml and their requirements (read with a pattern: tomllib is Python 3.11+)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    section = re.sub(r"#[^\n]*", "", section)
    return {name: re.findall(r'"([^"]+)"', body)
            for name, body in re.findall(r"^([\w-]+)\s*=\s*\[(.*?)\]\s*$", section, re.S | re.M)}


EXTRAS = _extras()


def _missing(extras: str) -> list[str]:
    """The requirements of ``extras`` (comma-separated names of pyproject.toml) not installed here."""
    out = []
    for extra in filter(None, extras.split(",")):
        for req in EXTRAS[extra]:
            name = re.split(r"[\[<>=!~ ;]", req, maxsplit=1)[0]
            try:
                importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                out.append(f"{name} ({extra})")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _command(line: str) -> str:
    """The command a user types, as it runs here: ``bash scripts/bootstrap.sh [--extras E] CMD`` runs CMD in this
    environment (whose install is the test's precondition; the extras it names must be installed), ``.venv/bin/`` is
    this environment's bin folder, and paths of the clone (``train.py``, ``benchmarks/...``) are the checkout's."""
    m = BOOTSTRAP.match(line)
    if m:
        missing = _missing(m.group("extras") or "")
        assert not missing, f"{line!r} needs {missing}, not installed here: install the extras the tests use"
        line = m.group("env") + m.group("rest")
    line = line.replace(".venv/bin/", f"{Path(sys.executable).parent}/")
    return REPO_PATH.sub(lambda p: str(ROOT / p.group(1)) if (ROOT / p.group(1).split("/")[0]).exists()
                         else p.group(1), line)


def _serve(command: str, cwd: Path, env: dict) -> None:
    """Start a server command, wait until its port answers HTTP, then stop it."""
    port = re.search(r"(?:--port[ =]|-a \S+:|--dev-addr[ =]\S+:)(\d+)", command)
    assert port, f"{command!r}: a server command in a doc block needs its port on the line (run-with: --port {{port}})"
    proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port.group(1)}/"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, f"{command!r} exited with {proc.returncode}:\n{proc.stdout.read()[-3000:]}"
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    assert r.status == 200
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert time.monotonic() < deadline, f"{command!r}: {url} did not answer"
                time.sleep(1)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _run_shell_block(block: Block, cwd: Path) -> None:
    code = block.code
    if block.marker("cwd") == ["clone"]:
        cwd = ROOT
    for spec in block.marker("run-with"):
        old, new = (s.strip() for s in spec.split("=>"))
        old, new = old.strip('"'), new.strip('"').replace("{port}", str(_free_port()))
        assert old in code, f"{block.id}: run-with {old!r} is not in the block"
        code = code.replace(old, new)
    stdin = (block.marker("stdin") or ["quit"])[0].replace("\\n", "\n") + "\n"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), BROWSER="true",
               NO_MKDOCS_2_WARNING="1")
    for line in filter(None, (ln.split("  #")[0].strip() for ln in code.splitlines())):
        command = _command(line)
        if any(re.search(rf"(^|/|\s){re.escape(s)}\b", command) for s in SERVERS):
            _serve(command, cwd, env)
            continue
        out = subprocess.run(["bash", "-c", command], cwd=cwd, input=stdin, capture_output=True, text=True,
                             env=env, timeout=1200)
        assert out.returncode == 0, (block.id, line, out.stdout[-3000:], out.stderr[-3000:])


#: Pages whose shell blocks take tens of seconds together on 2 cores, though no one block is marked slow (each trains,
#: solves or serves a little): their tests are marked slow too, so that the README's test command stays short.
SLOW_SHELL_PAGES = {"README.md", "docs/rllib.md", "docs/getting-started.md", "docs/libraries.md", "docs/strength.md",
                    "docs/openspiel.md", "docs/agents.md"}


def _shell_pages() -> list:
    pages = {}
    for b in BLOCKS:
        if b.kind in SHELL:
            pages.setdefault(b.page, []).append(b)
    return [pytest.param(blocks, id=str(page.relative_to(ROOT)),
                         marks=[pytest.mark.slow] if str(page.relative_to(ROOT)) in SLOW_SHELL_PAGES
                         or any(b.marker("slow") for b in blocks) else [])
            for page, blocks in pages.items()]


def test_the_slow_pages_are_pages_with_shell_blocks():
    pages = {str(b.page.relative_to(ROOT)) for b in BLOCKS if b.kind in SHELL}
    assert SLOW_SHELL_PAGES <= pages, SLOW_SHELL_PAGES - pages


@pytest.mark.parametrize("blocks", _shell_pages())
def test_shell_blocks_run(blocks, tmp_path):
    """A page's shell blocks run in order, line by line as a user types them, from one fresh folder (so that a
    block may use what an earlier one of the page made, as ``runs/quick/policy.pt``), with this checkout first on
    the path; interactive programs read ``quit`` (or the block's ``stdin``); servers are started, asked for their
    page and stopped. Every command must exit 0. A block marked ``skip`` is not run, for the reason it gives."""
    ran = skipped = 0
    for block in blocks:
        if block.marker("skip"):
            skipped += 1
            continue
        _run_shell_block(block, tmp_path)
        ran += 1
    if not ran:
        pytest.skip("; ".join(f"{b.id}: {b.marker('skip')[0]}" for b in blocks))


def test_skips_are_few_and_say_why():
    skips = [(b.id, b.marker("skip")[0]) for b in BLOCKS if b.marker("skip")]
    assert all(len(reason) > 20 for _id, reason in skips), skips
    assert len(skips) <= 4, skips


def test_shell_commands_map_to_this_checkout(monkeypatch):
    """The translation of a typed command (so that the runner above cannot pass by running something else)."""
    cmd = _command("bash scripts/bootstrap.sh python train.py --total-steps 10")
    assert cmd == f"python {ROOT / 'train.py'} --total-steps 10"
    assert _command("X=1 .venv/bin/schnapsen-arena runs/a/policy.pt random") == \
        f"X=1 {Path(sys.executable).parent}/schnapsen-arena runs/a/policy.pt random"
    monkeypatch.setitem(EXTRAS, "absent", ["surely-no-such-distribution>=1"])
    with pytest.raises(AssertionError, match="not installed here"):
        _command("bash scripts/bootstrap.sh --extras docs,absent python -c 1")


# --- figures: rendered from JSON, none by hand --------------------------------------------------------------------

def test_rendered_figures_are_current():
    """Every table and value marker holds what its JSON file gives (the README is read unrendered on GitHub, so its
    source must hold the figures; the pages too, so that a reader of the source sees them)."""
    tables = _tables()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert tables.fill(text) == text, f"{page.name}: a figure differs from its JSON source; rerun " \
                                          f"python scripts/docs_tables.py {page.relative_to(ROOT)}"


def test_every_marker_names_a_figure():
    tables = _tables()
    names = {m.group("name") for p in PAGES for m in tables.MARKER.finditer(p.read_text(encoding="utf-8"))}
    assert names and names <= set(tables.TABLES) | set(tables.FILE_TABLES)
    assert any(tables.VALUE.search(p.read_text(encoding="utf-8")) for p in PAGES)
    with pytest.raises(KeyError, match="unknown table 'nope': expected one of"):
        tables.render("nope")
    with pytest.raises(KeyError, match="matches 0 items"):
        tables.value("ladder_schnapsen20.json:pairs[agent_a=nobody].mean:+.3f")
    with pytest.raises(KeyError, match="no key 'nope'"):
        tables.value("ladder_schnapsen20.json:elo.nope")
    deals = tables.lookup(tables._load("ladder_schnapsen20.json"), "pairs.0.deals")
    assert tables.value("ladder_schnapsen20.json:pairs.0.deals") == f"{deals:,}"
    assert tables.formatted(90.0, "~/60 .1f") == "-1.5" and tables.formatted(0.25, ".0%") == "25%"


def test_every_figure_file_says_how_it_was_made():
    """Each JSON file a page renders holds the command that wrote it and the commit it measured (the speed records
    also the machine and its load)."""
    tables = _tables()
    files = {m.group("arg") for p in PAGES for m in tables.MARKER.finditer(p.read_text(encoding="utf-8"))
             if m.group("arg")}
    files |= {m.group("spec").split(":")[0] for p in PAGES
              for m in tables.VALUE.finditer(p.read_text(encoding="utf-8"))}
    for name in sorted(files):
        d = json.loads((ROOT / "benchmarks" / name).read_text(encoding="utf-8"))
        text = json.dumps(d)
        assert '"command"' in text, f"benchmarks/{name} does not say which command wrote it"
        if "unit" in d:
            assert d.get("commit") and d.get("machine"), f"benchmarks/{name}: no commit or machine"


def _recorded_commits(node, where: str):
    """``(where, commit)`` for every ``commit``, ``train_commit`` and ``peer`` string under ``node``."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("commit", "train_commit", "peer") and isinstance(v, str):
                yield where, v.removesuffix("+changes")
            else:
                yield from _recorded_commits(v, where)
    elif isinstance(node, list):
        for v in node:
            yield from _recorded_commits(v, where)


def test_every_recorded_commit_is_in_this_history():
    """The commits that the figure files and the shipped policies name (the code that measured or trained them) are
    commits of this repository's history, so that a reader can check them out: a record of work that was rebased
    or never landed names a commit no clone has."""
    from agents.learned.data import SHIPPED

    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True,
                             text=True, check=False)
    if shallow.returncode or shallow.stdout.strip() != "false":
        pytest.skip("not a git clone with its whole history")
    named = [(f"agents.SHIPPED {p.name}", p.commit) for p in SHIPPED]
    for path in sorted((ROOT / "benchmarks").glob("*.json")):
        named += _recorded_commits(json.loads(path.read_text(encoding="utf-8")), f"benchmarks/{path.name}")
    named = [(w, c) for w, c in named if re.fullmatch(r"[0-9a-f]{7,40}", c)]
    assert len(named) > len(SHIPPED)  # the records name commits too
    found = subprocess.run(["git", "cat-file", "--batch-check"], cwd=ROOT, capture_output=True, text=True,
                           input="".join(f"{c}^{{commit}}\n" for _, c in named), check=True).stdout.splitlines()
    missing = [f"{w}: {c}" for (w, c), line in zip(named, found) if line.endswith("missing")]
    assert not missing, "commits not in this history: " + "; ".join(missing)


# A measured figure: a number with a unit of time, speed, size or score, a ratio (2.1x), a share (12%), or a
# decimal (0.123). Rule facts that look alike are listed in ALLOWED, each with its reason.
NUMBER = r"(?<![\w.\-/])[-+±−]?\d[\d,]*(?:\.\d+)?"
MEASURED = re.compile(
    NUMBER + r"(?:[x×](?![\w])|\s?(?:%|ms|µs|us|s|sec|min|minutes?|seconds?|hours?|h|MB|GB|MiB|KiB|GiB|GFLOP/s|"
    r"k decisions|M nodes|Mnodes/s)(?![\w])|"
    r"\s(?:[\w-]+ )?(?:decisions|steps|hands|iterations|nodes)(?:/s| a second| per second)|"
    r"\s(?:game points?|Elo|nodes|duplicate deals|deals|hands|worlds|positions|information sets|subtrees))"
    r"|(?<![\w.\-/])[-+±−]?\d+\.\d+(?![\d.]*\d)")
#: (page name or "*", a pattern of the allowed phrase, why it is no measurement)
ALLOWED = [
    ("*", r"95% (?:CI|confidence|interval)", "the confidence level of every interval, a choice of the arena"),
    ("*", r"1 to 3 game points", "rule: a hand is worth 1 to 3 game points (RULES.md R22)"),
    ("*", r"match to 7 game points|match to 7\b", "rule: a match is played to 7 (RULES.md R25)"),
    ("*", r"Python >= 3\.10", "the supported Python versions (pyproject.toml)"),
    ("rulesets.md", r"2 game points below 17", "rule RS3 of schnapsen10"),
    ("decisions.md", r"1 game point", "rule: the sixtysix24 tie knob's value (RULES.md section 5)"),
    ("libraries.md", r"0\.5/1\.x", "Tianshou's release numbers"),
    ("training.md", r"30% (?:of hands|against the scripted)", "flag defaults --pool-prob and --heuristic-prob, "
                                                             "checked by test_training_defaults_are_the_code_s"),
    ("rllib.md", r"30% of hands|another 30% by the scripted", "the shared recipe's defaults --pool-prob and "
                                                               "--heuristic-prob (agents.training.recipe.PPOArgs), "
                                                               "checked by test_training_defaults_are_the_code_s"),
    ("training.md", r"(?:1,000|200) duplicate deals", "flag defaults --final-eval-deals and --eval-deals, checked "
                                                       "by test_training_defaults_are_the_code_s"),
    ("web-app.md", r"1 MiB|64 KiB|32 MiB", "upload, body and replay-memory limits of the web app "
                                          "(tests/test_web.py, tests/test_web_limits.py)"),
    ("web-app.md", r"closed after 5 s", "uvicorn's keep-alive setting the app passes (agents/cli/web.py)"),
    ("web-app.md", r"repeated 1 MB uploads", "the size of the uploads tests/test_web_reliability.py sends"),
    ("agents.md", r"12 worlds|chunk of 8 worlds", "pimc's default and expert's chunk, checked by "
                                                  "test_agent_defaults_are_the_code_s"),
    ("openspiel.md", r"6,300 deals|72,529,808 nodes|2,278,922 information sets|136,640 subtrees|72\.5 million",
     "the exact size of the schnapsen10 game tree, asserted by tests/test_exact.py"),
]


def _prose(text: str) -> list[tuple[int, str]]:
    """The lines of a page as a reader sees its prose: fenced blocks (but their comments), rendered markers, HTML
    comments, inline code and link targets blanked (line numbers kept)."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    def code_block(m: re.Match) -> str:
        kind = m.group("info").strip().split(" ")[0]
        if kind not in SHELL | {"python", "bibtex"}:  # output, tables, examples: read as prose
            return m.group(0)
        return "\n".join(ln[ln.index("#"):] if kind != "bibtex" and "#" in ln else ""
                         for ln in m.group(0).split("\n"))

    tables = _tables()
    text = FENCE.sub(code_block, text)
    text = tables.MARKER.sub(blank, text)
    text = tables.VALUE.sub(blank, text)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", blank, text)
    text = re.sub(r"\]\([^)]*\)|<https?://[^>]*>", blank, text)
    return list(enumerate(text.split("\n"), start=1))


def measured_figures(name: str, text: str, allowed=ALLOWED) -> list[str]:
    """``NAME:LINE: figure`` for every measurement-like number of the prose ``text`` of the page ``name`` (a path
    relative to the clone) that no allowed phrase covers."""
    found = []
    for n, line in _prose(text):
        spans = [m.span() for where, pattern, _why in allowed if where in ("*", Path(name).name)
                 for m in re.finditer(pattern, line)]
        for m in MEASURED.finditer(line):
            if not any(a <= m.start() and m.end() <= b for a, b in spans):
                found.append(f"{name}:{n}: {m.group(0).strip()!r} in {line.strip()[:100]!r}")
    return found


def test_no_measured_figure_is_written_by_hand():
    """Each measured number of the docs is rendered from a JSON file under benchmarks/ (a value or table marker),
    where its command, commit and machine are recorded; prose says what it means, not its history. A number written
    by hand with a unit of time, speed or score, a ratio, a share or a decimal fails here, naming its page and line."""
    found = [f for page in DOC_PAGES
             for f in measured_figures(str(page.relative_to(ROOT)), page.read_text(encoding="utf-8"))]
    assert not found, "measured figures written by hand (render them from a JSON file, or cut them):\n" + \
        "\n".join(found)


def test_the_figure_scan_finds_figures():
    """The scan is no pass-through: it flags each kind of figure, and not what it must leave alone."""
    text = ("It ran at 40,122 decisions/s, 2.13x the peer, in 8.0 minutes (5 s, 12%, 0.38 s); +0.127 game points; "
            "72,529,808 nodes.\n`--deals 1000` <!-- value: x.json:a -->3.5x<!-- end value --> R16 and 20 cards.\n"
            "```python\nrun()  # about 5 s\n```\n")
    found = measured_figures("docs/example.md", text, allowed=[])
    figures = [f.split(": ", 1)[1].split(" in ")[0] for f in found]
    assert figures == ["'40,122 decisions/s'", "'2.13x'", "'8.0 minutes'", "'5 s'", "'12%'", "'0.38 s'",
                       "'+0.127 game points'", "'72,529,808 nodes'", "'5 s'"], figures


def test_every_allowed_phrase_is_used():
    """The allow-list holds no stale entry."""
    for where, pattern, why in ALLOWED:
        pages = [p for p in DOC_PAGES if where in ("*", p.name)]
        assert any(re.search(pattern, ln) for p in pages for _n, ln in _prose(p.read_text(encoding="utf-8"))), \
            (where, pattern, why)


def test_ci_runs_the_readme_test_command_and_then_the_slow_tests():
    """CI (``.ci/run``) runs the README's test command as written, and the slow tests it leaves out, so that no test
    is left to nobody; both run even when the first fails, and CI fails if either does."""
    block = (ROOT / "README.md").read_text(encoding="utf-8").split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [ln.split("#", 1)[0].strip() for ln in block.splitlines() if ln.strip()]
    assert len(commands) == 2 and commands[0].endswith("python train.py"), commands
    test_command = commands[1]
    assert "pytest" in test_command and test_command.endswith('-m "not slow"'), test_command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert f"{test_command} || status=$?" in ci
    assert ".venv/bin/python -m pytest -q -m slow || status=$?" in ci and ci[-1] == 'exit "$status"'


def test_training_defaults_are_the_code_s():
    """The defaults docs/training.md names are train.py's (its Args dataclass and the recipe's total steps)."""
    sys.path.insert(0, str(ROOT))
    import train
    from agents.training.recipe import DEFAULT_TOTAL_STEPS

    a = train.Args()
    named = {"num_envs": 256, "endgame_teacher_coef": 1.0, "checkpoint_every": 20, "sampler_nice": 10,
             "pool_size": 10, "pool_every": 10, "pool_prob": 0.3, "heuristic_prob": 0.3, "eval_every": 200,
             "eval_deals": 200, "final_eval_deals": 1000, "eval_rollout_every": 3}
    assert {k: getattr(a, k) for k in named} == named
    assert DEFAULT_TOTAL_STEPS == 18_000_000
    flat = " ".join((ROOT / "docs" / "training.md").read_text(encoding="utf-8").split())
    for phrase in ("`--num-envs 256`", "`--endgame-teacher-coef 1.0`", "every 20 updates", "`nice` 10",
                   "30% of hands against a pool of the last 10 snapshots (one taken every 10 updates)",
                   "30% against the scripted", "18,000,000 learner decisions", "every 200 updates on 200 duplicate",
                   "every third time", "1,000 duplicate deals"):
        assert phrase in flat, phrase


def test_agent_defaults_are_the_code_s():
    """The budgets docs/agents.md names are the agents' defaults."""
    import inspect

    from agents.search import expert
    from agents.search.expert import ExpertAgent
    from agents.search.pimc import PIMCAgent
    from agents.search.rollout import RolloutAgent

    def defaults(cls) -> dict:
        return {k: v.default for k, v in inspect.signature(cls).parameters.items()}

    assert (defaults(PIMCAgent)["n_samples"], defaults(PIMCAgent)["depth"]) == (12, 2)
    assert (defaults(RolloutAgent)["n_samples"], defaults(RolloutAgent)["depth"]) == (16, 4)
    assert (defaults(ExpertAgent)["worlds"], defaults(ExpertAgent)["max_nodes"], expert._CHUNK) == (48, 1_500_000, 8)
    flat = " ".join((ROOT / "docs" / "agents.md").read_text(encoding="utf-8").split())
    for phrase in ("12 worlds (`n_samples=`), 2 tricks deep (`depth=`)",
                   "16 sampled positions (`n_samples=`) finished by random play for 4 tricks (`depth=`)",
                   "`worlds=48`, `max_nodes=1_500_000`", "(default 48)", "no new chunk of 8 worlds"):
        assert phrase in flat, phrase


def test_web_limits_are_the_code_s():
    """The lowest and highest values docs/web-app.md gives for the limit flags are agents/web/limits.py's, and the
    --workers warning it describes is the command's (over 4 a core)."""
    from agents.web import limits

    flat = " ".join((ROOT / "docs" / "web-app.md").read_text(encoding="utf-8").split())
    for flag, (_default, low, high) in limits.FLAGS.items():
        unit = "minutes" if flag.endswith("minutes") else "seconds"
        phrase = f"`{flag}` from `{low:g}` to `{high:g}` {unit}"
        assert phrase in flat, phrase
    assert "over 4 workers per core" in flat and "args.workers > 4 * cores" in \
        (ROOT / "agents" / "cli" / "web.py").read_text(encoding="utf-8")
    assert "a `Range` (or `If-Range`) header is ignored" in flat


# --- the site -----------------------------------------------------------------------------------------------------

@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="needs the docs extra (mkdocs)")
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    """``mkdocs build --strict``: a broken link, anchor, reference or docstring fails the build."""
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert out.returncode == 0, out.stderr[-5000:]
    reference = tmp_path / "site" / "reference" / "index.html"
    assert reference.is_file()
    # The docstrings' Sphinx roles are rendered (scripts/docs_roles.py): no page shows one as written, and a role
    # naming a rendered object is a link to it (schnapsen_env.aec's :class:`~schnapsen_env.errors.IllegalActionError`)
    raw = [f"{page.relative_to(tmp_path / 'site')}: {m.group(0)}" for page in (tmp_path / "site").rglob("*.html")
           for m in RAW_ROLE.finditer(page.read_text(encoding="utf-8"))]
    assert not raw, f"Sphinx roles shown as written: {raw[:20]}"
    html = reference.read_text(encoding="utf-8")
    assert '<a class="autorefs autorefs-internal" title="IllegalActionError' in html
    # the agent specs (docs/agents.md links them): the module's forms and its resolver
    assert 'id="schnapsen_env.agent_specs"' in html and 'id="schnapsen_env.agent_specs.resolve_agent"' in html
    shutil.rmtree(tmp_path / "site")


#: A Sphinx role as mkdocstrings shows it when nothing renders it: ``:class:`` before the code.
RAW_ROLE = re.compile(r":(?:py:)?(?:mod|class|meth|func|attr|data|exc|obj|const):(?:<code>|`)")


def test_sphinx_roles_become_optional_cross_references():
    """The conversion the site's build applies to each docstring (scripts/docs_roles.py): every form of a role
    (plain, ``~``, ``title <target>``, a relative name) becomes one autorefs reference with Sphinx's title and the
    name's full path, and the scan above finds a role left as written."""
    pytest.importorskip("griffe", reason="needs the docs extra (mkdocstrings' griffe)")
    spec = importlib.util.spec_from_file_location("docs_roles", ROOT / "scripts" / "docs_roles.py")
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    scope = {"reset": "schnapsen_env.aec.raw_env.reset", "GameState": "schnapsen_env.rules.GameState"}
    text = ("Raises :class:`~schnapsen_env.errors.IllegalActionError` before :meth:`reset`; see :mod:`schnapsen_env.aec`"
            ", :meth:`GameState.position <schnapsen_env.rules.GameState.position>` and :attr:`GameState.deck`.")
    out = roles.roles_to_markdown(text, lambda name: scope.get(name.split(".")[0]) and
                                  scope[name.split(".")[0]] + name[len(name.split(".")[0]):])
    ref = '<autoref identifier="{}" optional><code>{}</code></autoref>'
    assert out == (f"Raises {ref.format('schnapsen_env.errors.IllegalActionError', 'IllegalActionError')} before "
                   f"{ref.format('schnapsen_env.aec.raw_env.reset', 'reset')}; see "
                   f"{ref.format('schnapsen_env.aec', 'schnapsen_env.aec')}, "
                   f"{ref.format('schnapsen_env.rules.GameState.position', 'GameState.position')} and "
                   f"{ref.format('schnapsen_env.rules.GameState.deck', 'GameState.deck')}."), out
    assert RAW_ROLE.search("see :class:<code>GameState</code>") and not RAW_ROLE.search(out)


def test_docs_tables_command_line_bad_input_is_one_line(tmp_path):
    """``python scripts/docs_tables.py FILE...``: a missing file or an unknown table is one line and exit 2, and no
    file is rewritten (the good one before it keeps its text)."""
    good = tmp_path / "good.md"
    good.write_text("<!-- value: ladder_schnapsen20.json:pairs.0.deals -->?<!-- end value -->\n", encoding="utf-8")
    bad = tmp_path / "bad.md"
    bad.write_text("<!-- table: no-such-table -->\n| x |\n<!-- end table -->\n", encoding="utf-8")
    script = str(ROOT / "scripts" / "docs_tables.py")
    for files, expected in (([good, tmp_path / "missing.md"], "cannot read"), ([good, bad], "unknown table")):
        out = subprocess.run([sys.executable, script, *map(str, files)], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and expected in out.stderr, out.stderr
        assert "?" in good.read_text(encoding="utf-8")
    out = subprocess.run([sys.executable, script, str(good)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "1,000" in good.read_text(encoding="utf-8")
