"""Two-lane floating-point operations for numba code: two IEEE divisions or square roots as
one SSE instruction; the bit pattern of a float (for hashing) and the trailing zeros of a
word (for walking bit sets).

Each lane is the same correctly rounded operation as its scalar form, so results are
bit-identical; the divider (and square-root unit) serves both lanes in the time of one.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from kacs_cli.engine.hot import PLAIN_INTRINSICS

_DOUBLE2 = ir.VectorType(ir.DoubleType(), 2)
_LANE = (ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 1))
_PAIR = types.UniTuple(types.float64, 2)


def _pack(builder, first, second):
    vector = ir.Constant(_DOUBLE2, ir.Undefined)
    vector = builder.insert_element(vector, first, _LANE[0])
    return builder.insert_element(vector, second, _LANE[1])


def _unpack(context, builder, vector):
    lanes = [builder.extract_element(vector, lane) for lane in _LANE]
    return context.make_tuple(builder, _PAIR, lanes)


@intrinsic
def div_pair(typingctx, a, b, c, d):
    """(a / c, b / d)."""
    sig = _PAIR(types.float64, types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        quotient = builder.fdiv(_pack(builder, args[0], args[1]), _pack(builder, args[2], args[3]))
        return _unpack(context, builder, quotient)

    return sig, codegen


@intrinsic
def sqrt_pair(typingctx, a, b):
    """(sqrt(a), sqrt(b))."""
    sig = _PAIR(types.float64, types.float64)

    def codegen(context, builder, signature, args):
        sqrt = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_DOUBLE2, [_DOUBLE2]), "llvm.sqrt.v2f64"
        )
        return _unpack(context, builder, builder.call(sqrt, [_pack(builder, args[0], args[1])]))

    return sig, codegen


@intrinsic
def float_bits(typingctx, x):
    """The IEEE bit pattern of a float64, as a uint64 (a reinterpretation, no conversion)."""
    sig = types.uint64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """The number of trailing zero bits of a nonzero uint64 (one tzcnt instruction)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        cttz = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)]),
            "llvm.cttz.i64")
        return builder.call(cttz, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen


# The plain numba forms (hot.PLAIN_INTRINSICS): the same values, without a hand-written
# intrinsic.
if PLAIN_INTRINSICS:
    @njit(inline="always")
    def div_pair(a, b, c, d):  # noqa: F811
        """(a / c, b / d)."""
        return a / c, b / d

    @njit(inline="always")
    def sqrt_pair(a, b):  # noqa: F811
        """(sqrt(a), sqrt(b))."""
        return np.sqrt(a), np.sqrt(b)

    @njit(inline="always")
    def float_bits(x):  # noqa: F811
        """The IEEE bit pattern of a float64, as a uint64."""
        return np.float64(x).view(np.uint64)

    @njit(inline="always")
    def trailing_zeros(x):  # noqa: F811
        """The number of trailing zero bits of a nonzero uint64."""
        k = np.uint64(0)
        while (x >> k) & np.uint64(1) == np.uint64(0):
            k += np.uint64(1)
        return k
