"""The shipped policy files (package data), declared once: each policy's registered name, file, ruleset, SHA-256
and how it was made (:data:`SHIPPED`), and the strongest policy of each ruleset. The loaders are in
:mod:`agents.learned.shipped`.

To ship a policy: copy the run's ``policy.pt`` here and add its :class:`ShippedPolicy` to :data:`SHIPPED`; every
other table (the registered agents, the rulesets they play, the web app's and ``schnapsen-play``'s opponents)
is derived from it, and the tests check each file against its declared checksum.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The folder of the shipped policy files (package data).
DATA_DIR = Path(__file__).parent


@dataclass(frozen=True)
class ShippedPolicy:
    """One shipped policy file.

    Attributes:
        name: its registered agent name (``make_agent(name, rules)``, ``opponent=name``).
        file: its file name in :data:`DATA_DIR`.
        ruleset: the ruleset it was trained for and plays (under any knobs of that ruleset: the observation layout
            is the same; another ruleset's layout differs).
        sha256: the SHA-256 of the file's bytes, hex (a changed or truncated file fails the tests).
        commit: the commit whose ``train.py`` ran the first of ``commands`` (a later resume may say another).
        commands: the commands that made it, in order, run from the repository root at ``commit`` (a resume is
            one more command); the run's ``policy.pt`` is the file.
    """

    name: str
    file: str
    ruleset: str
    sha256: str
    commit: str
    commands: tuple[str, ...]

    @property
    def path(self) -> Path:
        """The file's path in :data:`DATA_DIR`."""
        return DATA_DIR / self.file


#: Every shipped policy, by ruleset and then from the oldest to the newest. How strong each is: the docs'
#: "Strength of the agents"; the training runs: the docs' "Training".
SHIPPED: tuple[ShippedPolicy, ...] = (
    ShippedPolicy(
        "trained", "schnapsen20_policy.pt", "schnapsen20",
        "619caf348ec57699aeba0d45a510cdedb5698c3543b5e22ce1db41ac7e13c49e", "b341ce3",
        ("python train.py --seed 1 --run-name shipped",)),  # 6M decisions, the single-process trainer
    ShippedPolicy(
        "trained-long", "schnapsen20_policy_long.pt", "schnapsen20",
        "f52d3d9e4f7a677add48d45f23aa7acfa54eb384f9eb71bd3c3f04d577c8db62", "1ea76dd",
        ("python train.py --total-steps 36000000 --eval-every 150 --final-eval-opponents random heuristic rollout "
         "--run-name long36m",)),
    ShippedPolicy(
        "trained-100m", "schnapsen20_policy_100m.pt", "schnapsen20",
        "8f219e5f10cf678cc678d88bb02c6a83329259c0ea4353d3e1065dc9431e4075", "5bc141a",
        ("python train.py --total-steps 100000000 --eval-every 500 --final-eval-opponents random heuristic rollout "
         "--learning-rate 3e-4 --run-name long100m",)),
    ShippedPolicy(
        "trained-220m", "schnapsen20_policy_220m.pt", "schnapsen20",
        "96afa4da43eb98a9f41e7426467c4dab1312c103e99c855156bde44fd297ff41", "5bc141a",
        ("python train.py --total-steps 100000000 --eval-every 500 --final-eval-opponents random heuristic rollout "
         "--learning-rate 3e-4 --run-name long100m",
         "cp -r runs/long100m runs/long220m",
         # the resume with the trainer of the commit that shipped it (75dcbbe's parent); 163 minutes in all
         "python train.py --resume runs/long220m/checkpoint.pt --total-steps 220000000")),
    ShippedPolicy(
        "trained-18m", "schnapsen20_policy_18m.pt", "schnapsen20",
        "62417ab23be20ba3815d617f1d870908e8c23a6f14515e3d185fb619220acd43", "a54a350",
        ("python train.py --run-name default --no-progress",)),
    # the default run, timed by benchmarks/default_run_time.py on a 2-core AMD EPYC with AVX2 only (float32, 2
    # learner threads), 31 minutes; against expert: benchmarks/trained_18m_schnapsen20.json
    ShippedPolicy(
        "trained-185m", "schnapsen20_policy_185m.pt", "schnapsen20",
        "2a900d52b5ab6961319f312566b4f35cc0abbf74a47459e51a6f207fbacc69a2", "2a1a20c",
        ("python train.py --total-steps 150000000 --run-name long150m --eval-every 1500 --eval-opponents pimc expert "
         "--eval-deals 100 --eval-rollout-every 0",  # stopped by SIGTERM at 132,960,020 decisions, checkpoint kept
         "python train.py --resume runs/long150m/checkpoint.pt",  # to 150M (runs/long150m is in git)
         "cp -r runs/long150m/. runs/long185m",  # the folder's files (a clone has runs/long185m already)
         "python train.py --resume runs/long185m/checkpoint.pt --total-steps 185000000")),
    # the default recipe (128 wide) for 150M decisions, resumed to 185M: 166 minutes of training in all on a 2-core
    # AMD EPYC with AVX2 only; against expert: runs/long185m/arena_expert.json (benchmarks/learning_curves_schnapsen20.json)
    # and the ladder
    ShippedPolicy(
        "trained-sixtysix24", "sixtysix24_policy.pt", "sixtysix24",
        "94a53f96c4301809c21fc47228aa8fd693b4918e817a2432273981c4acc022c7", "41a7a39",
        ("python train.py --ruleset sixtysix24 --total-steps 36000000 --samplers 1 --eval-every 500 "
         "--final-eval-deals 500 --learning-rate 3e-4 --run-name sixtysix24_36m",)),  # 36M decisions, 28 minutes on 2 shared cores
    ShippedPolicy(
        "trained-schnapsen10", "schnapsen10_policy.pt", "schnapsen10",
        "a55244d1423baa361f819e204adc0bb2efc9a57bec07a0b9d0910f805173451e", "4cfb6e7",
        ("python train.py --ruleset schnapsen10 --total-steps 20000000 --hidden 1024 --search-teacher cfr "
         "--search-teacher-share 1.0 --search-teacher-coef 10 --endgame-teacher-coef 10 --heuristic-prob 0 "
         "--random-prob 0.4 --eval-every 0 --final-eval-deals 0 --nash-conv-every 250 --samplers 1 "
         "--learning-rate 3e-4 --run-name s10_w1024_rand40",)),
    # 20M decisions with the equilibrium teacher (CFR+) on every hidden-card decision and 40% of the hands against a
    # uniformly random player, 34 minutes of training on 2 cores shared with other work
)

#: The strongest shipped policy of each ruleset that has one: the default opponent of ``schnapsen-play`` and the
#: web app for that ruleset.
STRONGEST_POLICIES: dict[str, str] = {
    "schnapsen20": "trained-185m",
    "sixtysix24": "trained-sixtysix24",
    "schnapsen10": "trained-schnapsen10",
}
#: The strongest ``schnapsen20`` policy.
STRONGEST_POLICY = STRONGEST_POLICIES["schnapsen20"]
#: The policy of each ruleset that the searches with a policy play until they hand over to the search and model the
#: opponent with (``policy+expert``, ``expert+``, ``policy-rollout``'s playouts, the expert's opponent model ``"policy"``,
#: :mod:`agents.search.inference`): the strongest, except where their measured results were played with another
#: (``schnapsen20``: ``trained-220m``, the strongest when they were measured).
SEARCH_POLICIES: dict[str, str] = {**STRONGEST_POLICIES, "schnapsen20": "trained-220m"}
#: The ``schnapsen20`` policy of the searches with a policy (``policy+expert``'s default).
SEARCH_POLICY = SEARCH_POLICIES["schnapsen20"]

#: The shipped policies by registered name.
SHIPPED_BY_NAME: dict[str, ShippedPolicy] = {p.name: p for p in SHIPPED}
#: The shipped policies: registered name -> file in :data:`DATA_DIR` (every ruleset; :data:`SHIPPED` has each
#: one's ruleset).
SHIPPED_POLICIES: dict[str, str] = {p.name: p.file for p in SHIPPED}


def shipped_policies(ruleset: str) -> list[str]:
    """The registered names of the shipped policies that play ``ruleset`` (a ruleset name), in :data:`SHIPPED`'s
    order; empty for a ruleset without one."""
    return [p.name for p in SHIPPED if p.ruleset == ruleset]


__all__ = ["DATA_DIR", "SHIPPED", "SHIPPED_BY_NAME", "SEARCH_POLICIES", "SEARCH_POLICY", "SHIPPED_POLICIES", "STRONGEST_POLICIES",
           "STRONGEST_POLICY", "ShippedPolicy", "shipped_policies"]
