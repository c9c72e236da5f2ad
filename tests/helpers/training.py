"""A training run small enough for a test: the ``train.Args`` that the trainer's tests start from."""

from __future__ import annotations

from helpers.scripts import load_script

train = load_script("train.py")

#: A few updates of a small network, one inline sampler, no evaluation, a checkpoint every update.
TINY = dict(total_steps=3000, num_envs=16, batch_size=1024, minibatch_size=256, update_epochs=2, hidden=32, seed=3,
            eval_every=0, final_eval_deals=0, checkpoint_every=1, run_name="tiny", tensorboard=False, progress=False,
            pool_every=1, pool_prob=0.5, samplers=1, inline_samplers=True, threads=1)


def tiny_args(tmp_path, **kw) -> train.Args:
    """:data:`TINY` with its run folder in ``tmp_path`` (the run is ``tmp_path / "tiny"``); ``kw`` overrides."""
    return train.Args(**{**TINY, "run_dir": str(tmp_path), **kw})



def tiny_argv(tmp_path, **kw) -> list[str]:
    """:func:`tiny_args` as ``train.py``'s command line (the flags that differ from the defaults)."""
    args = tiny_args(tmp_path, **kw)
    argv = []
    for name, value in vars(args).items():
        default = getattr(train.Args(), name)
        if value == default:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            argv.append(flag if value else "--no-" + name.replace("_", "-"))
        else:
            argv += [flag, str(value)]
    return argv
