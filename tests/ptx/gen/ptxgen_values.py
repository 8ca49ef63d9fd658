# SPDX-License-Identifier: MIT
#
# Edge-case inputs for ptxgen, by value kind.  A kind names how a source
# operand is read (its register width) and which values it takes: each
# list starts with the values that matter most (a binary operation's rows
# are the cross product of the first CORE values of each source).

import struct

CORE = 16


def f32(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def f64(x):
    return struct.unpack('<Q', struct.pack('<d', x))[0]


U32 = [0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 2, 0xfffffffe, 0x80000001,
       31, 32, 33, 0x12345678, 0xdeadbeef, 0xffff, 0x10000, 7,
       0xff, 0x100, 0x7f, 0x80, 0xfffffff9, 63, 64, 0x55555555,
       0xaaaaaaaa, 0x0000ffff, 0xffff0000, 0x00800000, 0x01000000, 3, 0x80808080, 0x7f7f7f7f]

U64 = [0, 1, 0xffffffffffffffff, 0x8000000000000000, 0x7fffffffffffffff, 2,
       0xffffffff, 0x100000000, 63, 64, 65, 0x123456789abcdef0, 0xfffffffffffffffe,
       0x80000000, 0xdeadbeefcafef00d, 7,
       0x8000000000000001, 0x00000000ffff0000, 0xffffffff00000000, 31, 32, 33,
       0x7fffffff, 0xffffffff80000000, 0x0020000000000000, 0x0020000000000001, 3,
       0xfffffffffffffff9, 0x5555555555555555, 0x0000000100000001]

U16 = [0, 1, 0xffff, 0x8000, 0x7fff, 2, 0xfffe, 0x8001, 15, 16, 17, 0x1234,
       0xbeef, 0xff, 0x100, 7, 0x7f, 0x80, 0xfff9, 3, 0x5555, 0xaaaa]

U8 = [0, 1, 0xff, 0x80, 0x7f, 2, 0xfe, 0x81, 7, 8, 9, 0x12, 0xef, 0x40, 3, 0xf9]

# shift amounts and bit positions: at and past the width
SHIFT = [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 255, 256,
         0xffffffff, 0x80000000, 5, 24]

F32 = [f32(0.0), f32(-0.0), f32(1.0), f32(-1.0), 0x7f800000, 0xff800000,
       0x7fc00000, 0x7fc12345, 0x7f800001, 0xffc00001, 0x00000001, 0x007fffff,
       0x80000010, 0x00800000, 0x7f7fffff, f32(2.5),
       f32(0.5), f32(1.5), f32(-2.5), f32(3.0), f32(-0.75), f32(1.0 / 3.0),
       f32(2147483648.0), f32(-2147483648.0), f32(4294967296.0), f32(-1e10),
       f32(65504.0), f32(65520.0), f32(1e-7), f32(255.5), f32(-128.5), f32(1e30),
       0x807fffff, 0x3f800001, f32(3.14159265), f32(-100.0), f32(0.1), 0x00400000,
       f32(9.2233720e18), f32(1.8446744e19), f32(16777217.0), f32(448.0), f32(57344.0),
       f32(-1.5e-5), 0x38800000, 0xb4000000]

F64 = [f64(0.0), f64(-0.0), f64(1.0), f64(-1.0), 0x7ff0000000000000, 0xfff0000000000000,
       0x7ff8000000000000, 0x7ff8000012345678, 0x7ff0000000000001, 0xfff8000000000001,
       0x0000000000000001, 0x000fffffffffffff, 0x8000000000000010, 0x0010000000000000,
       0x7fefffffffffffff, f64(2.5),
       f64(0.5), f64(1.5), f64(-2.5), f64(3.0), f64(1.0 / 3.0), f64(2147483648.0),
       f64(-2147483649.0), f64(4294967296.0), f64(9.2233720368547758e18),
       f64(1.8446744073709552e19), f64(-9.3e18), f64(1e300), f64(1e-310), f64(3.4028235e38),
       f64(3.4028236e38), f64(1.4e-45), f64(0.7e-45), f64(65504.0), f64(65520.0),
       f64(2.0 ** 53 + 1), f64(-0.1), f64(255.5), f64(-128.5), f64(1e-7)]

F16 = [0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7e01, 0x7c01,
       0xfe01, 0x0001, 0x03ff, 0x8001, 0x0400, 0x7bff, 0x4100,
       0x3800, 0x3e00, 0xc100, 0x4200, 0x3555, 0x5bf8, 0xd800, 0x2e66, 0x0200]

BF16 = [0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x7fc1, 0x7f81,
        0xffc1, 0x0001, 0x007f, 0x8001, 0x0080, 0x7f7f, 0x4020,
        0x3f00, 0x3fc0, 0xc020, 0x4040, 0x3eab, 0x4f00, 0xdf00, 0x3dcd]

# e4m3 / e5m2 pairs (a 16-bit register holding two 8-bit floats)
E4M3X2 = [0x0000, 0x8000, 0x3838, 0xb8b8, 0x7f7f, 0xff7f, 0x7e7e, 0x0101, 0x0708,
          0x8788, 0x4c40, 0x7e01, 0x0008, 0xfefe, 0x2010, 0x5878]
E5M2X2 = [0x0000, 0x8000, 0x3c3c, 0xbcbc, 0x7c7c, 0xfcfc, 0x7e7f, 0x0101, 0x0304,
          0x8384, 0x4440, 0x7b7b, 0x7d01, 0xfbfb, 0x2010, 0x5878]


def pairs(lst, n=32):
    """Packed pairs of 16-bit values: (lo, hi) walking both lists."""
    out = []
    k = len(lst)
    for i in range(n):
        lo = lst[i % k]
        hi = lst[(i * 7 + 3) % k]
        out.append(lo | hi << 16)
    return out


F16X2 = pairs(F16)
BF16X2 = pairs(BF16)

# kind -> (register class, width in bits, values)
KINDS = {
    'u32': ('b32', 32, U32), 's32': ('b32', 32, U32), 'b32': ('b32', 32, U32),
    'u64': ('b64', 64, U64), 's64': ('b64', 64, U64), 'b64': ('b64', 64, U64),
    'u16': ('b16', 16, U16), 's16': ('b16', 16, U16), 'b16': ('b16', 16, U16),
    'u8': ('b16', 16, U8), 's8': ('b16', 16, U8), 'b8': ('b16', 16, U8),
    'u8r': ('b32', 32, U8), 's8r': ('b32', 32, U8),
    'f32': ('b32', 32, F32), 'f64': ('b64', 64, F64),
    'f16': ('b16', 16, F16), 'bf16': ('b16', 16, BF16),
    'f16x2': ('b32', 32, F16X2), 'bf16x2': ('b32', 32, BF16X2),
    'e4m3x2': ('b16', 16, E4M3X2), 'e5m2x2': ('b16', 16, E5M2X2),
    'sh': ('b32', 32, SHIFT), 'pred': ('pred', 32, [0, 1]),
    'lane': ('b32', 32, [0, 1, 31, 3, 16, 32, 5, 0xffffffff, 8, 30]),
    'clamp': ('b32', 32, [0x1f, 0x0, 0x1c1f, 0x181f, 0x101f, 0x3, 0xf, 0x1e]),
}


def values(kind):
    return KINDS[kind][2]


def regclass(kind):
    return KINDS[kind][0]


def width_of_class(rc):
    return {'b16': 16, 'b32': 32, 'b64': 64, 'pred': 32}[rc]


def rows_for(kinds, cap=256):
    """The input rows for sources of these kinds: every value of a single
    source; the cross product of two (of their first CORE values when it
    has more than @cap rows, and then every pair (i, j) with i + j a
    multiple of a step that brings it to @cap, the diagonal included);
    for three or more, those pairs of the first two with the others
    walking their lists."""
    if not kinds:
        return [()]
    vals = [values(k) for k in kinds]
    if len(kinds) == 1:
        return [(v,) for v in vals[0]][:max(cap, 32)]
    a, b = vals[0], vals[1]
    if len(a) * len(b) > cap:
        a, b = a[:CORE], b[:CORE]
    step = -(-len(a) * len(b) // cap)
    pairs = [(x, y) for i, x in enumerate(a) for j, y in enumerate(b) if (i + j) % step == 0]
    rest = vals[2:]
    return [p + tuple(r[(n * 5 + k) % len(r)] for k, r in enumerate(rest))
            for n, p in enumerate(pairs)]
