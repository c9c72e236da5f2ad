"""The numba plumbing every compiled module shares: the cache guard, views numba does not reference-count, bit
intrinsics, and seeded draws from a numpy generator inside compiled code.

Nothing here knows the rules or the state array's layout (:mod:`schnapsen_env.state_layout`); the compiled rules
(:mod:`schnapsen_env.rules_core`), the vector env's loops and the compiled agents (:mod:`agents.search.solver_core`,
:mod:`agents.search.rollout_core`, :mod:`agents.search.worlds`) build on it.

* :func:`drop_stale_cache`: every module whose compiled functions read another module's constants calls it at
  import (numba's ``cache=True`` checks only a function's own source file);
* :func:`uncounted`: an array view without numba's reference counting, for the hot loops;
* :func:`trailing_zeros`, :func:`popcount`, :func:`float_bits`, :func:`bits_float`: one LLVM instruction each;
* :func:`bitgen_addresses`, :func:`random_interval`, :func:`draw_deal`: numpy's ``Generator`` draws made in compiled
  code, value for value (``GameState.new_hand``'s deal, the rollout agent's random playouts).
"""

from __future__ import annotations

import ctypes
import hashlib
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: The package's folder: its sources are fingerprinted by :func:`drop_stale_cache`.
PACKAGE = Path(__file__).parent


# ---------------------------------------------------------------------------------------------- cache guard
def drop_stale_cache(dispatcher, *uses) -> None:
    """Drop the numba cache of the module that defines ``dispatcher`` if it was compiled against other sources.

    numba freezes global constants (:data:`schnapsen_env.state_layout.F` and ``SEARCH_SIZE``, which derive from
    :data:`schnapsen_env.rules.FIELDS`; the rule table's offsets ``K``; the observation offsets from
    :mod:`schnapsen_env.encoding`) and the compiled functions a function calls into the machine code, and checks only
    the compiled function's own source file before reusing its cache. So after a change to another module (a
    ``git pull`` that touched ``rules.py`` only) a cached function would run with an old layout: wrong values, or
    memory errors. Every module with compiled functions that read another module's constants or call its compiled
    functions calls this at import, before any cached function loads, with one of its dispatchers (to find its
    source file and cache folder) and, in ``uses``, a dispatcher of each module outside ``schnapsen_env`` whose
    compiled functions it calls (the solver: :func:`agents.search.worlds.fill_world`). The cache is reused only
    while the sources of ``schnapsen_env``, the module's own and those of ``uses`` are those it was compiled
    against; a change to any of them costs one recompilation.

    The cache files are numba's, named after the module's file (``rules_core.apply-….nbi``); the fingerprint is
    kept beside them (``rules_core.sources-sha256``).
    """
    source = Path(dispatcher.py_func.__code__.co_filename)
    module_name = source.stem
    files = set(PACKAGE.glob("*.py")) | {source} | {Path(d.py_func.__code__.co_filename) for d in uses}
    digest = hashlib.sha256()
    for f in sorted(files):
        digest.update(f"{f.parent.name}/{f.name}".encode() + b"\0" + f.read_bytes())
    fingerprint = digest.hexdigest()
    folder = Path(dispatcher.stats.cache_path)
    stamp = folder / f"{module_name}.sources-sha256"
    try:
        if stamp.read_text() == fingerprint:
            return
    except OSError:
        pass
    try:
        for f in folder.glob(f"{module_name}.*.nb[ic]"):
            f.unlink(missing_ok=True)
        stamp.write_text(fingerprint)
    except OSError:  # an unwritable cache folder: numba cannot have cached there either
        pass


# ---------------------------------------------------------------------------------------------- uncounted views
@intrinsic
def _as_pointer(typingctx, address):
    """An integer address as a ``void *`` (for :func:`numba.carray`)."""
    sig = types.voidptr(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return sig, codegen


@njit(cache=True)
def uncounted(a):
    """A view of the C-contiguous array ``a`` (same shape, dtype and memory) that numba does not reference-count.

    numba counts the references to an array with an atomic increment and decrement each time the array is bound
    in a called function or sliced; in the solver's and the batch loops' millions of small calls, those atomics
    took about half the solver's time (``benchmarks/solver_core.py`` measures it). Compiled entry points wrap their
    arrays with this once; the caller keeps ``a`` alive for the call (it holds the argument). ``a`` must be
    C-contiguous (every array the project passes is allocated so); raises ValueError if it is not."""
    if not a.flags.c_contiguous:
        raise ValueError("uncounted() needs a C-contiguous array")
    return carray(_as_pointer(a.ctypes.data), a.shape, a.dtype)


# ---------------------------------------------------------------------------------------------- numpy generators
@intrinsic
def _next_uint32(typingctx, fn, state):
    """``fn(state)``: numpy's ``bitgen_t.next_uint32`` called through its address (both ``int64``), as numba's own
    ``Generator`` support calls it, without boxing a Generator object per call."""
    sig = types.uint32(fn, state)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), (cgutils.voidptr_t,))
        return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), (builder.inttoptr(args[1], cgutils.voidptr_t),))
    return sig, codegen


def bitgen_addresses(rng: np.random.Generator) -> tuple[int, int]:
    """``(next_uint32, state)`` addresses of ``rng``'s bit generator, for :func:`draw_deal`; valid while ``rng``
    lives (the caller keeps it)."""
    c = rng.bit_generator.ctypes
    return ctypes.cast(c.next_uint32, ctypes.c_void_p).value, int(c.state_address)


@njit(cache=True)
def random_interval(fn, state, hi):
    """A uniform int in ``0..hi`` (``hi < 2 ** 32``) from a numpy bit generator (``fn``/``state`` from
    :func:`bitgen_addresses`), drawn as numpy's own ``random_interval``: 32-bit draws masked to the smallest
    all-ones mask >= ``hi`` until one is at most ``hi``."""
    if hi == 0:
        return 0
    mask = hi
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    while True:
        v = np.int64(_next_uint32(fn, state)) & mask
        if v <= hi:
            return v


@njit(cache=True)
def draw_deal(fn, state, order):
    """A new deal from a numpy generator, exactly ``GameState.new_hand``'s draws: ``order`` (int64 ``(n,)``) gets
    ``rng.permutation(n)`` (numpy's shuffle of ``arange(n)``: Fisher-Yates from the end, :func:`random_interval`), and
    the return value is the dealer, ``rng.integers(2)`` (the top bit of one 32-bit draw: Lemire's method with
    range 2 never rejects). ``fn``/``state`` from :func:`bitgen_addresses`. ``SchnapsenVectorEnv`` checks once
    that this matches the installed numpy (values and generator state) and otherwise deals in Python."""
    n = order.shape[0]
    for c in range(n):
        order[c] = c
    for i in range(n - 1, 0, -1):
        j = random_interval(fn, state, i)
        t = order[i]
        order[i] = order[j]
        order[j] = t
    return np.int64(_next_uint32(fn, state) >> 31)


# ---------------------------------------------------------------------------------------------- bit helpers
@intrinsic
def trailing_zeros(typingctx, bits):
    """The index of the lowest set bit of a non-zero ``int64`` (LLVM's ``cttz``: one instruction)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])
    return sig, codegen


@intrinsic
def popcount(typingctx, bits):
    """The number of set bits of an ``int64`` (LLVM's ``ctpop``)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.call(builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)]), [args[0]])
    return sig, codegen


@intrinsic
def float_bits(typingctx, x):
    """The IEEE-754 bits of a ``float64`` as an ``int64`` (LLVM's ``bitcast``; :func:`bits_float` undoes it)."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return sig, codegen


@intrinsic
def bits_float(typingctx, x):
    """The ``float64`` whose IEEE-754 bits are the ``int64`` ``x`` (the inverse of :func:`float_bits`)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return sig, codegen


__all__ = ["PACKAGE", "bitgen_addresses", "bits_float", "draw_deal", "drop_stale_cache", "float_bits", "popcount",
           "random_interval", "trailing_zeros", "uncounted"]
