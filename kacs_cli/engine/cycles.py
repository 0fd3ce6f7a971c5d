"""The CPU's cycle counter, for the per-phase profile of a KACS iteration (`kacs bench
--profile`, docs/performance.md).

The phases of an iteration (matching, weighted means, rule update, GA, ...) are inlined into
one compiled function, kacs.train_step, so no sampling profiler can tell them apart, and
keeping them out of line to profile them would change the code being measured. Instead
train_step reads the counter at each phase boundary and adds the difference to a slot of a
`clock` array, but only in the specialization compiled for a clock array: `lap` and `now`
are overloaded on the clock's type, and for clock=None they compile to nothing, so the
machine code of an ordinary run contains no counter code at all. The counter reads no data
and only the clock is written, so a profiled run computes the same numbers.

On x86 the counter is the time-stamp counter (rdtsc), which ticks at the processor's nominal
frequency whatever its current clock, and is synchronized across cores.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from kacs_cli.engine.hot import OVERLOAD


@intrinsic
def read_counter(typingctx):
    """llvm.readcyclecounter: rdtsc on x86, the cycle counter elsewhere (0 where none)."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        counter = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), []), "llvm.readcyclecounter")
        return builder.call(counter, [])

    return sig, codegen


@njit(cache=True)
def counter_now():
    """The counter, read from Python: the whole run's cycles around the driver's loop."""
    return read_counter()


def now(clock):
    """The counter if `clock` is an array; 0 and no code if it is None."""


def lap(clock, phase, since):
    """Add the cycles since `since` to clock[phase] and return the counter; with clock=None,
    nothing (compiled away)."""


@overload(now, jit_options=OVERLOAD)
def _now(clock):
    if isinstance(clock, types.NoneType):
        return lambda clock: 0
    return lambda clock: read_counter()


@overload(lap, jit_options=OVERLOAD)
def _lap(clock, phase, since):
    if isinstance(clock, types.NoneType):
        return lambda clock, phase, since: since

    def impl(clock, phase, since):
        t = read_counter()
        clock[phase] += t - since
        return t

    return impl
