# SPDX-License-Identifier: MIT
#
# ptxgen's table: per instruction, the types and modifiers to try.  A row
# is a call of op() (or a small loop of them) naming the instruction,
# its modifier sets and its type sets; every combination becomes a
# candidate form, ptxas (ptxgen --probe) keeps the legal ones.  Adding a
# row adds tests.
#
# Operands: a source is a value kind of ptxgen_values.KINDS (its register
# class and edge-case values); a destination is a register class
# (b16/b32/b64/pred).  An instruction template names sources {s0}..,
# destinations {d0}.., scratch registers {b32_0}.., the row's output
# address {out} and the thread index {tid}.

import hashlib
import itertools

import ptxgen_values as V


class Form:
    def __init__(self, module, instr_name, form, dsts, srcs, instr, name=None,
                 scratch=(), decls=(), rows=None, stores=True, globals_=(), cap=None,
                 dirs=()):
        self.module = module
        self.instr_name = instr_name
        self.form = form
        self.dsts = list(dsts)
        self.srcs = list(srcs)
        self.instr = [instr] if isinstance(instr, str) else list(instr)
        self.name = short(name or mangle(form))
        self.scratch = list(scratch)
        self.decls = list(decls)
        self.rows = rows
        self.stores = stores
        self.globals = list(globals_)
        # the entry's performance-tuning directives (.reqnctapercluster ...)
        self.dirs = list(dirs)
        # rows at most (ptxgen_values.rows_for): all pairs of two sources'
        # first values for arithmetic, half of them for comparisons, memory
        # and three sources
        self.cap = cap or {'cmp': 128, 'mem': 32, 'atom': 64}.get(module, 256 if len(srcs) < 3
                                                                   else 128)


def mangle(s):
    out = s.replace('::', '_').replace('.', '_').replace('|', '_').replace(' ', '_')
    return 'g_' + ''.join(c if c.isalnum() or c == '_' else 'x' for c in out)


def short(name):
    """At most 31 characters (the longest name the front end takes today;
    one form of misc tests a longer one on purpose), unique by a hash."""
    if len(name) <= 31 or name.startswith('_Z'):
        return name
    return name[:22] + '_' + hashlib.sha256(name.encode()).hexdigest()[:8]


FORMS = []


def add(f):
    FORMS.append(f)


def rc(kind):
    return V.regclass(kind)


def op(module, mnem, mods, dst_kind, src_kinds, suffix=''):
    """One form per combination of @mods (a list of lists of modifiers,
    '' meaning none): MNEM MODS d0, s0, s1..."""
    for combo in itertools.product(*mods):
        form = mnem + ''.join(combo)
        srcs = list(src_kinds)
        ops = ', '.join('{s%d}' % i for i in range(len(srcs)))
        add(Form(module, mnem.split('.')[0], form, [rc(dst_kind)], srcs,
                 '%s {d0}, %s;' % (form, ops), name=mangle(form + suffix)))


INT = ['s16', 'u16', 's32', 'u32', 's64', 'u64']
BITS = ['b16', 'b32', 'b64']
WIDE = {'s16': 's32', 'u16': 'u32', 's32': 's64', 'u32': 'u64', 's8': 's16', 'u8': 'u16'}
V.KINDS['u16x2'] = ('b32', 32, V.U32)
V.KINDS['s16x2'] = ('b32', 32, V.U32)
HALF = ['f16', 'f16x2', 'bf16', 'bf16x2']
FLT = ['f32', 'f64']
RND = ['', '.rn', '.rz', '.rm', '.rp']
IRND = ['.rni', '.rzi', '.rmi', '.rpi']


def int_forms():
    m = 'int'
    for t in INT + ['u16x2', 's16x2']:
        for mn in ('add', 'sub'):
            for mod in ('', '.sat', '.cc'):
                op(m, mn + mod + '.' + t, [], t, [t, t])
        for mn in ('min', 'max'):
            for mod in ('', '.relu'):
                op(m, mn + mod + '.' + t, [], t, [t, t])
    for t in INT:
        w = WIDE.get(t, t)
        for mod in ('.lo', '.hi', '.wide'):
            op(m, 'mul' + mod + '.' + t, [], w if mod == '.wide' else t, [t, t])
            for sat in ('', '.sat'):
                op(m, 'mad' + mod + sat + '.' + t, [], w if mod == '.wide' else t,
                   [t, t, w if mod == '.wide' else t])
        for mn in ('sad', 'div', 'rem'):
            n = 3 if mn == 'sad' else 2
            op(m, mn + '.' + t, [], t, [t] * n)
        for mn in ('abs', 'neg'):
            op(m, mn + '.' + t, [], t, [t])
    for t in ('s32', 'u32'):
        for mod in ('.lo', '.hi'):
            op(m, 'mul24' + mod + '.' + t, [], t, [t, t])
            for sat in ('', '.sat'):
                op(m, 'mad24' + mod + sat + '.' + t, [], t, [t, t, t])
    # carry chains: the carry out of the first into the rest
    for t in ('u32', 's32', 'u64', 's64'):
        r = rc(t)
        for a, b in (('add', 'addc'), ('sub', 'subc')):
            form = '%s.cc.%s+%s.cc.%s+%s.%s' % (a, t, b, t, b, t)
            add(Form(m, b, form, [r, r, r], [t, t],
                     ['%s.cc.%s {d0}, {s0}, {s1};' % (a, t),
                      '%s.cc.%s {d1}, {s1}, {s0};' % (b, t),
                      '%s.%s {d2}, {s0}, {s0};' % (b, t)]))
        for hl in ('lo', 'hi'):
            form = 'mad.%s.cc.%s+madc.%s.cc.%s+madc.%s.%s' % (hl, t, hl, t, hl, t)
            add(Form(m, 'madc', form, [r, r, r], [t, t, t],
                     ['mad.%s.cc.%s {d0}, {s0}, {s1}, {s2};' % (hl, t),
                      'madc.%s.cc.%s {d1}, {s1}, {s2}, {s0};' % (hl, t),
                      'madc.%s.%s {d2}, {s2}, {s0}, {s1};' % (hl, t)]))
    for t in ('b32', 'b64'):
        for mn in ('popc', 'clz'):
            op(m, mn + '.' + t, [], 'u32', [t])
        op(m, 'brev.' + t, [], t, [t])
        op(m, 'bfi.' + t, [], t, [t, t, 'sh', 'sh'])
    for t in ('u32', 's32', 'u64', 's64'):
        for mod in ('', '.shiftamt'):
            op(m, 'bfind' + mod + '.' + t, [], 'u32', [t])
        op(m, 'bfe.' + t, [], t, [t, 'sh', 'sh'])
    op(m, 'fns.b32', [], 'u32', ['b32', 'u32', 's32'])
    for mode in ('', '.f4e', '.b4e', '.rc8', '.ecl', '.ecr', '.rc16'):
        op(m, 'prmt.b32' + mode, [], 'b32', ['b32', 'b32', 'b32'])
    for d in ('.l', '.r'):
        for mode in ('.clamp', '.wrap'):
            op(m, 'shf' + d + mode + '.b32', [], 'b32', ['b32', 'b32', 'sh'])
    for t in BITS:
        op(m, 'shl.' + t, [], t, [t, 'sh'])
    for t in BITS + INT:
        op(m, 'shr.' + t, [], t, [t, 'sh'])
    for t in ('b32', 's32', 'u64', 'b64'):
        # a shift by an immediate at and past the width
        for n in (0, 1, 31, 32, 33, 63, 64):
            for mn in ('shl', 'shr'):
                f = '%s.%s' % (mn, t)
                add(Form(m, mn, f + ' (imm %d)' % n, [rc(t)], [t], '%s {d0}, {s0}, %d;' % (f, n),
                         name=mangle('%s_imm%d' % (f, n))))
    for a in ('u32', 's32'):
        for b in ('u32', 's32'):
            op(m, 'dp4a.%s.%s' % (a, b), [], 's32', ['b32', 'b32', 's32'])
            for hl in ('.lo', '.hi'):
                op(m, 'dp2a%s.%s.%s' % (hl, a, b), [], 's32', ['b32', 'b32', 's32'])
    for mode in ('.clamp', '.wrap'):
        for t in ('u32', 's32'):
            op(m, 'szext' + mode + '.' + t, [], t, [t, 'sh'])
        op(m, 'bmsk' + mode + '.b32', [], 'b32', ['sh', 'sh'])


def logic_forms():
    m = 'logic'
    for t in ['pred'] + BITS:
        for mn in ('and', 'or', 'xor'):
            op(m, mn + '.' + t, [], t, [t, t])
        op(m, 'not.' + t, [], t, [t])
    for t in BITS:
        op(m, 'cnot.' + t, [], t, [t])
    for lut in (0x00, 0xff, 0x96, 0xe8, 0xf0, 0xcc, 0xaa, 0x1e, 0x80, 0x01, 0x6a, 0xfe, 0x3c):
        add(Form(m, 'lop3', 'lop3.b32 (lut 0x%02x)' % lut, ['b32'], ['b32', 'b32', 'b32'],
                 'lop3.b32 {d0}, {s0}, {s1}, {s2}, 0x%02x;' % lut, name='g_lop3_b32_%02x' % lut))
        if lut in (0x96, 0xe8, 0x00):
            for bop in ('or', 'and'):
                add(Form(m, 'lop3', 'lop3.%s.b32 (lut 0x%02x)' % (bop, lut), ['b32', 'pred'],
                         ['b32', 'b32', 'b32', 'pred'],
                         'lop3.%s.b32 {d0}|{d1}, {s0}, {s1}, {s2}, 0x%02x, {s3};' % (bop, lut),
                         name='g_lop3_%s_b32_%02x' % (bop, lut),
                         rows=[r + (i & 1,) for i, r in
                               enumerate(V.rows_for(['b32', 'b32', 'b32'], 128))]))


ICMP = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'lo', 'ls', 'hi', 'hs']
FCMP = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'equ', 'neu', 'ltu', 'leu', 'gtu', 'geu',
        'num', 'nan']


def cmp_forms():
    m = 'cmp'
    types = BITS + INT + FLT + HALF
    for t in types:
        ops = FCMP if t in FLT + HALF else ICMP
        ftz = ['', '.ftz'] if t in ('f32', 'f16', 'f16x2') else ['']
        two = t in ('f16x2', 'bf16x2')
        for c in ops:
            for z in ftz:
                f = 'setp.%s%s.%s' % (c, z, t)
                if two:
                    add(Form(m, 'setp', f, ['pred', 'pred'], [t, t],
                             '%s {d0}|{d1}, {s0}, {s1};' % f))
                else:
                    op(m, f, [], 'pred', [t, t])
                # set: every destination type (u32 with every comparison)
                for d in ('u32', 's32', 'f32', 'f16', 'f16x2', 'bf16', 'bf16x2'):
                    if d != 'u32' and c not in ('eq', 'lt', 'ltu', 'nan'):
                        continue
                    f = 'set.%s%s.%s.%s' % (c, z, d, t)
                    op(m, f, [], d, [t, t])
        # the predicate combiners, with two comparisons each
        for c in (ops[0], ops[2] if t not in FLT + HALF else 'ltu'):
            for z in ftz:
                for bop in ('and', 'or', 'xor'):
                    f = 'setp.%s.%s%s.%s' % (c, bop, z, t)
                    rows = [r + (i & 1,) for i, r in enumerate(V.rows_for([t, t], 128))]
                    if two:
                        add(Form(m, 'setp', f, ['pred', 'pred'], [t, t, 'pred'],
                                 '%s {d0}|{d1}, {s0}, {s1}, {s2};' % f, rows=rows))
                        continue
                    add(Form(m, 'setp', f, ['pred'], [t, t, 'pred'],
                             '%s {d0}, {s0}, {s1}, {s2};' % f, rows=rows))
                    add(Form(m, 'setp', f + ' p|q', ['pred', 'pred'], [t, t, 'pred'],
                             '%s {d0}|{d1}, {s0}, {s1}, !{s2};' % f, rows=rows,
                             name=mangle(f + '_pq')))
                    d = 'u32'
                    add(Form(m, 'set', 'set.%s.%s%s.%s.%s' % (c, bop, z, d, t), [rc(d)],
                             [t, t, 'pred'], 'set.%s.%s%s.%s.%s {d0}, {s0}, {s1}, {s2};'
                             % (c, bop, z, d, t), rows=rows))
    for t in BITS + INT + FLT:
        op(m, 'selp.' + t, [], t, [t, t, 'pred'])
    for d in BITS + INT + FLT:
        for s in ('s32', 'f32'):
            for z in (['', '.ftz'] if s == 'f32' else ['']):
                op(m, 'slct.%s%s.%s' % (d, z, s) if z else 'slct.%s.%s' % (d, s), [], d,
                   [d, d, s])


def float_forms():
    m = 'float'
    for t in FLT:
        z = ['', '.ftz']
        for mn in ('add', 'sub', 'mul'):
            op(m, mn, [RND, z, ['', '.sat'], ['.' + t]], t, [t, t])
        op(m, 'fma', [RND, z, ['', '.sat'], ['.' + t]], t, [t, t, t])
        op(m, 'mad', [RND, z, ['', '.sat'], ['.' + t]], t, [t, t, t])
        op(m, 'div', [['', '.approx', '.full'] + RND[1:], z, ['.' + t]], t, [t, t])
        for mn in ('rcp', 'sqrt'):
            op(m, mn, [['', '.approx'] + RND[1:], z, ['.' + t]], t, [t])
        op(m, 'rsqrt', [['.approx'], z, ['.' + t]], t, [t])
        for mn in ('sin', 'cos', 'lg2', 'ex2', 'tanh'):
            op(m, mn, [['.approx'], z, ['.' + t]], t, [t])
        for mn in ('min', 'max'):
            op(m, mn, [z, ['', '.NaN'], ['', '.xorsign.abs'], ['.' + t]], t, [t, t])
            op(m, mn, [z, ['', '.NaN'], ['', '.abs'], ['.' + t]], t, [t, t, t], suffix='_3')
        for mn in ('abs', 'neg'):
            op(m, mn, [z, ['.' + t]], t, [t])
        for c in ('finite', 'infinite', 'number', 'notanumber', 'normal', 'subnormal'):
            op(m, 'testp.%s.%s' % (c, t), [], 'pred', [t])
        op(m, 'copysign.' + t, [], t, [t, t])


def half_forms():
    m = 'half'
    for t in HALF:
        for mn in ('add', 'sub', 'mul'):
            op(m, mn, [['', '.rn'], ['', '.ftz'], ['', '.sat'], ['.' + t]], t, [t, t])
        op(m, 'fma', [['.rn'], ['', '.ftz'], ['', '.sat', '.relu'], ['.' + t]], t, [t, t, t])
        op(m, 'fma.rn.oob', [['', '.relu'], ['.' + t]], t, [t, t, t])
        for mn in ('min', 'max'):
            op(m, mn, [['', '.ftz'], ['', '.NaN'], ['', '.xorsign.abs'], ['.' + t]], t, [t, t])
        for mn in ('abs', 'neg'):
            op(m, mn, [['', '.ftz'], ['.' + t]], t, [t])
        for mn in ('ex2', 'tanh'):
            op(m, mn + '.approx', [['', '.ftz'], ['.' + t]], t, [t])


CVT_TYPES = ['u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64', 'f16', 'bf16', 'f32', 'f64']


def cvt_forms():
    m = 'cvt'
    # 8-bit sources are read from a 16-bit register; destinations of 8
    # and 16 bits are written to 16-bit registers
    for d in CVT_TYPES:
        for s in CVT_TYPES:
            dk = {'u8': 'u16', 's8': 's16'}.get(d, d)
            rnds = [''] + RND[1:] + IRND + ['.rna']
            for r, z, sat in itertools.product(rnds, ['', '.ftz'], ['', '.sat']):
                relus = ['', '.relu'] if d in ('f16', 'bf16') else ['']
                for relu in relus:
                    f = 'cvt%s%s%s%s.%s.%s' % (r, z, sat, relu, d, s)
                    op(m, f, [], dk, [s])
    # packed and narrow-float conversions
    for d in ('f16x2', 'bf16x2'):
        for relu in ('', '.relu'):
            for sat in ('', '.satfinite'):
                f = 'cvt.rn%s%s.%s.f32' % (relu, sat, d)
                op(m, f, [], d, ['f32', 'f32'])
    for d in ('e4m3x2', 'e5m2x2'):
        for relu in ('', '.relu'):
            op(m, 'cvt.rn.satfinite%s.%s.f32' % (relu, d), [], d, ['f32', 'f32'])
            op(m, 'cvt.rn.satfinite%s.%s.f16x2' % (relu, d), [], d, ['f16x2'])
        for relu in ('', '.relu'):
            op(m, 'cvt.rn%s.f16x2.%s' % (relu, d), [], 'f16x2', [d])
    for r in ('.rna', '.rn', '.rz'):
        for sat in ('', '.satfinite'):
            for relu in ('', '.relu'):
                op(m, 'cvt%s%s%s.tf32.f32' % (r, sat, relu), [], 'b32', ['f32'])
    for d in ('u8', 's8', 'u16', 's16'):
        add(Form(m, 'cvt', 'cvt.pack.sat.%s.s32.b32' % d, ['b32'], ['s32', 's32', 'b32'],
                 'cvt.pack.sat.%s.s32.b32 {d0}, {s0}, {s1}, {s2};' % d))
        if d in ('u8', 's8'):
            add(Form(m, 'cvt', 'cvt.pack.sat.%s.s32.b32 (2)' % d, ['b32'], ['s32', 's32'],
                     'cvt.pack.sat.%s.s32.b32 {d0}, {s0}, {s1}, 0;' % d,
                     name=mangle('cvt.pack.sat.%s.s32.b32_zero' % d)))


def forms():
    import ptxgen_table2 as T2
    import ptxgen_table3 as T3
    import ptxgen_table4 as T4
    import ptxgen_table5 as T5
    import ptxgen_table6 as T6
    del FORMS[:]
    int_forms()
    logic_forms()
    cmp_forms()
    float_forms()
    half_forms()
    cvt_forms()
    T2.more_forms(add, Form, op, mangle)
    T3.more_forms(add, Form, op, mangle)
    T4.more_forms(add, Form)
    T5.more_forms(add, Form)
    T6.more_forms(add, Form)
    return FORMS
