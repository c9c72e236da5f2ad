"""The command line of ``train.py`` and ``train_rllib.py``: their flags parsed by tyro from a dataclass, and every
user's mistake answered by one line ``PROG: error: ...`` and an exit status instead of a traceback (:func:`cli`).

tyro reports a refused command line through a hook (``tyro._errors.on_parse_error``); :func:`usage_line` turns
each of its events into one line naming the flag, the problem and what it takes. A tyro without the hook prints its
own message box, which :func:`parse_args` flattens to one line.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import io
import os
import re
import shutil
import signal
import sys
import textwrap
import threading

import tyro

from agents.training.self_play import SamplerError
from schnapsen_env.errors import one_line


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a scheduler's time limit, ``docker stop``) during a run: it stops the run as Ctrl-C does,
    through ``train.py``'s interrupt path, so the message names the checkpoint kept and the command that continues."""


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: no change); the previous
    handler is restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class UsageError(ValueError):
    """A command line that tyro refused, as one line naming the flag, the problem and what it takes."""


def usage_line(event, prog: str) -> str:
    """One line for one of tyro's parse-error events (``tyro._errors``)."""
    kind = type(event).__name__
    arg = getattr(event, "argument", None)
    try:
        flag = "/".join(arg.lowered.name_or_flags) or arg.display_name()
        metavar = arg.lowered.metavar
    except AttributeError:
        flag, metavar = "an argument", None
    want = f"{flag} {metavar}" if metavar else flag
    if kind == "UnrecognizedArgs":
        return (f"unrecognized argument(s) {' '.join(map(str, event.tokens))}: expected the flags that "
                f"{prog} --help lists (each --flag followed by its value, if it takes one)")
    if kind == "InvalidChoice":
        return f"{flag} {event.value!r} is not a valid choice: expected one of {', '.join(map(str, event.choices))}"
    if kind == "BadValue":
        if getattr(event, "offending_value", None) is not None:
            return f"{flag} takes no value, got {event.offending_value!r}: expected {want}"
        return f"{flag} needs a value: expected {want}"
    if kind == "InstantiationFailure":
        message = one_line(event.message, 300)
        union = re.search(r"could be instantiated from \[(.*?)\]\.", message)
        if union:  # an Optional flag: tyro lists every alternative's failure; name the value and the alternatives
            # "None" is how tyro spells the default it leaves to the run, not a value anyone types
            kinds = " or ".join(k.strip("{}") for k in str(metavar).split("|") if k.strip("{}") != "None")
            return f"{flag} {union.group(1)} is not a valid value: expected {kinds}"
        return f"{flag}: {message}: expected {want}"
    if kind == "MissingArgs":
        return f"missing argument(s): expected the flags that {prog} --help marks as required"
    return f"the command line was refused ({kind}): expected the flags that {prog} --help lists"


#: ``--help``'s groups: a title, then the fields in it (a field of no group is listed under "other"). ``--help-all``
#: prints every flag with its whole help (tyro's), and the docs' training page has the reference.
HELP_GROUPS: dict[str, tuple[str, ...]] = {
    "the run": ("total_steps", "seed", "ruleset", "knob", "run_name", "run_dir", "resume", "stop_after_updates"),
    "evaluation": ("final_eval_deals", "final_eval_opponents", "eval_every", "eval_opponents", "eval_deals",
                   "eval_rollout_every", "eval_workers", "nash_conv_every"),
    "PPO": ("batch_size", "minibatch_size", "update_epochs", "learning_rate", "anneal_lr", "average_last", "gamma",
            "gae_lambda", "clip_coef", "ent_coef", "vf_coef", "max_grad_norm", "endgame_teacher_coef", "endgame_bootstrap",
            "search_teacher_share",
            "search_teacher_nodes", "search_teacher_stock", "search_teacher_coef", "search_teacher", "cfr_iterations"),
    "network": ("hidden", "layers", "privileged_critic", "canonical_trump", "canonical_suits", "precision", "init_from"),
    "opponents": ("pool_size", "pool_every", "pool_prob", "heuristic_prob", "random_prob", "opponent", "opponent_prob",
                  "opponent_greedy"),
    "machine": ("samplers", "num_envs", "threads", "device", "overlap_sampling", "sampler_nice", "inline_samplers",
                "ray_address", "num_env_runners", "torch_deterministic"),
    "output": ("checkpoint_every", "tensorboard", "progress"),
}


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of the dataclass ``cls`` and its bases (what tyro shows as the flag's help)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        except (OSError, TypeError, IndexError):
            continue
        for node, after in zip(body, body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def first_clause(doc: str) -> str:
    """A help text up to its first ``;`` or sentence end outside parentheses (``e.g.`` is no sentence end)."""
    depth = 0
    for i, ch in enumerate(doc):
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if depth == 0 and (ch == ";" or (ch == "." and doc[i + 1:i + 2] in (" ", "") and
                                          not doc[max(0, i - 3):i + 1].endswith(("e.g.", "i.e.")))):
            return doc[:i]
    return doc


@dataclasses.dataclass(frozen=True)
class Flag:
    """One flag of a trainer's arguments, as ``--help`` and the docs' flag table show it.

    Attributes:
        group: its :data:`HELP_GROUPS` title (``"other"`` for a field no group names).
        name: the dataclass field.
        flags: ``("--x",)``, or ``("--x", "--no-x")`` for a switch.
        default: the default: ``"on"``/``"off"`` for a switch, a tuple for a list, None where the run resolves it.
        doc: the field's whole help text (:func:`field_docs`).
    """

    group: str
    name: str
    flags: tuple[str, ...]
    default: object
    doc: str


def grouped_flags(cls: type) -> list[Flag]:
    """The flags of the dataclass ``cls`` (``train.py``'s ``Args``, ``train_rllib.py``'s ``RLlibArgs``) in
    :data:`HELP_GROUPS`' order, then the fields no group names."""
    docs = field_docs(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    grouped = {title: [n for n in names if n in fields] for title, names in HELP_GROUPS.items()}
    seen = {n for names in grouped.values() for n in names}
    grouped["other"] = [n for n in fields if n not in seen]
    out = []
    for title, names in grouped.items():
        for name in names:
            f = fields[name]
            flag = "--" + name.replace("_", "-")
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            flags: tuple[str, ...] = (flag,)
            if isinstance(default, bool):
                flags, default = (flag, f"--no-{name.replace('_', '-')}"), "on" if default else "off"
            elif isinstance(default, list):
                default = tuple(default)
            out.append(Flag(title, name, flags, default, docs.get(name, "")))
    return out


def resolved_default(doc: str) -> str | None:
    """What a flag whose default the run resolves (a None default) becomes, as its help says it (``default:? X``, up to
    its first clause); None where the help does not say."""
    said = re.search(r"default:? ([^;()]+)", doc)
    return first_clause(said.group(1)).strip().rstrip(".") if said else None


def short_help(cls: type, prog: str, description: str) -> str:
    """``--help``: the flags in groups (:data:`HELP_GROUPS`), one line each with the first clause of its help and
    its default."""
    width = max(80, min(120, shutil.get_terminal_size((100, 20)).columns))
    lines = [f"usage: {prog} [--FLAG VALUE ...]", "", description, "",
             f"{prog} --help-all lists every flag with its whole help; the docs' training page is the reference.",
             "Flags (default in brackets):"]
    group = None
    for f in grouped_flags(cls):
        if f.group != group:
            lines += ["", f"{f.group}:"]
            group = f.group
        flag = " / ".join(f.flags)
        doc = first_clause(f.doc)
        shown = ", ".join(map(str, f.default)) if isinstance(f.default, tuple) else str(f.default)
        if f.default is None:  # what the run resolves it to, where the help says so briefly (else the help alone)
            shown = resolved_default(f.doc)
            shown = shown if shown is not None and len(shown) <= 45 else None
        text = doc if shown is None or "default" in doc else f"[{shown}] {doc}"
        head = f"  {flag:<32}"
        if len(flag) > 30:  # a long flag: its help on the next line
            lines.append("  " + flag)
            head = " " * 34
        # at most two lines a flag, cut at a word (the whole text is in --help-all)
        lines += textwrap.wrap(text, width, initial_indent=head, subsequent_indent=" " * 34, max_lines=2,
                               placeholder=" …") or [head.rstrip()]  # a flag without help: its name alone
    return "\n".join(lines)


def parse_args(argv: list[str] | None, cls: type, prog: str):
    """The arguments from the command line (tyro, from the dataclass ``cls``: ``train.py``'s ``Args`` or
    ``train_rllib.py``'s ``RLlibArgs``).

    Raises:
        UsageError: an unknown flag, a value of the wrong type, a choice not offered, a missing value: one line
            (through tyro's parse-error hook, ``tyro._errors.on_parse_error``; a tyro without it prints its own
            message and exits with status 2).
    """
    try:
        from tyro import _errors as tyro_errors
        on_parse_error = tyro_errors.on_parse_error
    except (ImportError, AttributeError):  # a tyro without the hook: its own message, flattened to one line
        return _parse_flattened(argv, cls, prog)

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--help-all" in argv:  # tyro's own help: every flag with its whole help
        argv = ["--help"]
    elif "-h" in argv or "--help" in argv:
        doc = (sys.modules.get("__main__").__doc__ or "") if cls.__module__ == "__main__" else \
            (sys.modules[cls.__module__].__doc__ or "")
        try:
            print(short_help(cls, prog, (doc.strip().split("\n\n")[0] if doc else cls.__doc__ or "").replace("``", "")))
            sys.stdout.flush()
        except BrokenPipeError:  # | head: the reader has what it wanted
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter closes it at exit
        raise SystemExit(0)
    with on_parse_error(_Refuse(prog)):
        return tyro.cli(cls, args=merge_repeated(argv, "--knob"), prog=prog)


def typed_fields(argv: list[str] | None, cls: type) -> frozenset[str]:
    """The fields of the dataclass ``cls`` whose flags the command line names (``--ent-coef 0``, ``--ent-coef=0``,
    ``--no-progress``), whatever their values: ``train.py --resume`` refuses a flag typed at its default that differs
    from the checkpoint's, which a comparison of values alone cannot tell from a flag not given."""
    names = {f.name for f in dataclasses.fields(cls)}
    typed = set()
    for tok in sys.argv[1:] if argv is None else argv:
        if not tok.startswith("--"):
            continue
        name = tok[2:].split("=", 1)[0].replace("-", "_")
        if name in names:
            typed.add(name)
        elif name.startswith("no_") and name[3:] in names:
            typed.add(name[3:])
    return frozenset(typed)


class _Refuse:
    """tyro's parse-error hook: raise the event as one :class:`UsageError` line."""

    def __init__(self, prog: str) -> None:
        self.prog = prog

    def __call__(self, event) -> None:
        raise UsageError(usage_line(event, self.prog))


def merge_repeated(argv: list[str] | None, flag: str) -> list[str]:
    """The command line with every ``flag`` (a flag taking several values) gathered into one at its end.

    tyro keeps only the values of the last occurrence of such a flag, so ``--knob a=1 --knob b=2`` would train
    without ``a=1``, silently; the arena takes ``--knob`` repeated, so train.py takes both ``--knob a=1 b=2`` and
    ``--knob a=1 --knob b=2``. The values of one occurrence are the tokens after it up to the next one that starts
    with ``-`` (or ``--flag=VALUE``: that one value), as argparse reads them.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if sum(tok == flag or tok.startswith(flag + "=") for tok in argv) < 2:
        return argv
    rest: list[str] = []
    values: list[str] = []
    tail: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if tok == "--":  # everything after it is positional
            tail = argv[i - 1:]
            break
        if tok.startswith(flag + "="):
            values.append(tok[len(flag) + 1:])
        elif tok == flag:
            while i < len(argv) and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
        else:
            rest.append(tok)
    return rest + [flag, *values] + tail


def _parse_flattened(argv: list[str] | None, cls: type, prog: str):
    """tyro.cli with its error box (stderr) turned into one line: :class:`UsageError`."""
    box = io.StringIO()
    try:
        with contextlib.redirect_stderr(box):
            return tyro.cli(cls, args=merge_repeated(argv, "--knob"), prog=prog)
    except SystemExit as e:
        if e.code in (0, None):
            sys.stderr.write(box.getvalue())
            raise
        text = re.sub(r"\x1b\[[0-9;]*m|[\u2500-\u257f]", " ", box.getvalue())  # colours and box drawing
        text = one_line(text.split("For full helptext")[0], 300)
        raise UsageError(f"{text}: expected the flags that {prog} --help lists") from None


def cli(argv: list[str] | None, cls: type, prog: str, run) -> int:
    """``python PROG``: parse the flags into ``cls``, call ``run`` with them, return the exit status (``train.py``:
    its ``Args`` and ``main``; ``train_rllib.py``: its ``RLlibArgs`` and ``main``).

    A user's mistake never ends in a traceback: a bad flag or value, a path that cannot be used, a bad or
    incompatible checkpoint print one line ``train.py: error: ...`` and return 2; a write that fails (a full disk)
    prints one line naming the last good checkpoint and returns 1. A sampler process or Ray actor that dies (killed,
    out of memory, its node lost) prints one line naming it, the last good checkpoint and the command that continues
    the run, and returns 1; one that fails (a bug, not a user's mistake) prints the same line and its traceback.
    Ctrl-C (status 130) and SIGTERM (status 143, :class:`Terminated`) print one line: the last good checkpoint and
    the command that continues from it.
    """
    try:
        args = parse_args(argv, cls, prog)
        with sigterm_as_interrupt():
            run(args)
    except ValueError as e:  # bad flags, paths, checkpoints (CheckpointError and UsageError are ValueErrors)
        print(f"{prog}: error: {one_line(e, 2000)}", file=sys.stderr)
        return 2
    except SamplerError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a write that failed (WriteError names the file and the last good checkpoint)
        print(f"{prog}: error: {one_line(e, 2000)}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{prog}: error: out of memory: expected smaller --num-envs, --batch-size or --hidden",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:  # train.py's main says what it kept and the command that continues
        kept = e.args[0] if e.args else "the last checkpoint written is kept (continue with --resume)"
        terminated = isinstance(e, Terminated)
        print(f"\n{prog}: {'terminated' if terminated else 'interrupted'}: {kept}", file=sys.stderr)
        return 128 + (signal.SIGTERM if terminated else signal.SIGINT)
    return 0
