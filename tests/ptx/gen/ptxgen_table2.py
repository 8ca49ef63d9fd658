# SPDX-License-Identifier: MIT
#
# ptxgen's table, continued: memory, warp-wide instructions, special
# registers and the rest (see ptxgen_table.py for how a row reads).

import itertools

import ptxgen_values as V

LDT = ['b8', 'u8', 's8', 'b16', 'u16', 's16', 'b32', 'u32', 's32', 'b64', 'u64', 's64',
       'f32', 'f64', 'f16', 'bf16', 'f16x2', 'bf16x2']
KIND = {'b8': 'u8', 'f16x2': 'f16x2', 'bf16x2': 'bf16x2'}


def kind(t):
    return KIND.get(t, t)


def rcl(t):
    return V.regclass(kind(t))


def vec(n, regs):
    return '{{%s}}' % ', '.join(regs[:n]) if n > 1 else regs[0]


def braces(s):
    return s.replace('{', '{{').replace('}', '}}')


def mem_forms(add, Form, mangle):
    m = 'mem'
    W = 32  # bytes of shared or local memory per thread
    for t in LDT:
        for n, v in ((1, ''), (2, '.v2'), (4, '.v4'), (8, '.v8')):
            k = kind(t)
            r = rcl(t)
            ds = ['{d%d}' % i for i in range(n)]
            ss = ['{s%d}' % i for i in range(n)]
            # global: load this row's inputs, store its outputs
            f = 'ld.global%s.%s' % (v, t)
            add(Form(m, 'ld', f, [r] * n, [k] * n, '%s %s, [{in}];' % (f, vec(n, ds))))
            f = 'st.global%s.%s' % (v, t)
            add(Form(m, 'st', f, [r] * n, [k] * n, '%s [{out}], %s;' % (f, vec(n, ss)),
                     stores=False))
            # generic addresses of global memory
            f = 'ld%s.%s' % (v, t)
            add(Form(m, 'ld', f + ' (generic)', [r] * n, [k] * n,
                     '%s %s, [{in}];' % (f, vec(n, ds)), name=mangle(f + '_generic')))
            # shared and local: a store, then a load of the same place
            for sp in ('shared', 'local'):
                decl = '.%s .align 16 .b8 buf[%d];' % (sp, W * 32 if sp == 'shared' else W)
                addr = ['mov.u32 {b32_0}, buf;' if sp == 'shared' else 'mov.u64 {b64_0}, buf;']
                if sp == 'shared':
                    addr.append('mad.lo.u32 {b32_0}, {tid}, %d, {b32_0};' % W)
                a = '{b32_0}' if sp == 'shared' else '{b64_0}'
                f = 'st.%s%s.%s+ld.%s%s.%s' % (sp, v, t, sp, v, t)
                add(Form(m, 'ld', f, [r] * n, [k] * n,
                         addr + ['st.%s%s.%s [%s], %s;' % (sp, v, t, a, vec(n, ss)),
                                 'ld.%s%s.%s %s, [%s];' % (sp, v, t, vec(n, ds), a)],
                         decls=[decl], scratch=[('b32', 1), ('b64', 1)]))
                if sp == 'shared' and n == 1:
                    # through a generic address
                    f = 'st%s.%s+ld%s.%s (generic shared)' % (v, t, v, t)
                    add(Form(m, 'ld', f, [r] * n, [k] * n,
                             addr + ['cvt.u64.u32 {b64_0}, {b32_0};',
                                     'cvta.shared.u64 {b64_0}, {b64_0};',
                                     'st%s.%s [{b64_0}], %s;' % (v, t, vec(n, ss)),
                                     'ld%s.%s %s, [{b64_0}];' % (v, t, vec(n, ds))],
                             decls=[decl], scratch=[('b32', 1), ('b64', 1)],
                             name=mangle('st_ld_generic_shared' + v + '_' + t)))
    # narrow loads into wider registers, sign- and zero-extending
    for t, r in (('u8', 'b32'), ('s8', 'b32'), ('u16', 'b32'), ('s16', 'b32'), ('s8', 'b64'),
                 ('u32', 'b64'), ('s32', 'b64'), ('s16', 'b64')):
        f = 'ld.global.%s' % t
        add(Form(m, 'ld', f + ' (into .%s)' % r, [r], [kind(t)], '%s {d0}, [{in}];' % f,
                 name=mangle(f + '_' + r)))
    # cache operators, orderings and eviction hints on a 32-bit load and store
    lmods = ['.ca', '.cg', '.cs', '.lu', '.cv', '.nc', '.volatile', '.weak',
             '.L1::evict_normal', '.L1::evict_unchanged', '.L1::evict_first',
             '.L1::evict_last', '.L1::no_allocate', '.L2::64B', '.L2::128B', '.L2::256B',
             '.nc.L1::no_allocate', '.nc.L2::128B']
    for sem in ('relaxed', 'acquire'):
        for sc in ('cta', 'cluster', 'gpu', 'sys'):
            lmods.append('.%s.%s' % (sem, sc))
    for mod in lmods:
        for v, n in (('', 1), ('.v4', 4)):
            if mod in ('.volatile',):
                f = 'ld.volatile.global%s.b32' % v
            elif mod.startswith('.relaxed') or mod.startswith('.acquire') or mod == '.weak':
                f = 'ld%s.global%s.b32' % (mod, v)
            else:
                f = 'ld.global%s%s.b32' % (mod, v)
            add(Form(m, 'ld', f, ['b32'] * n, ['b32'] * n,
                     '%s %s, [{in}];' % (f, vec(n, ['{d%d}' % i for i in range(n)]))))
    smods = ['.wb', '.cg', '.cs', '.wt', '.L1::no_allocate', '.L1::evict_last']
    for sem in ('relaxed', 'release'):
        for sc in ('cta', 'cluster', 'gpu', 'sys'):
            smods.append('%s.%s' % (sem, sc))
    smods += ['volatile', 'weak']
    for mod in smods:
        f = ('st.%s.global.b32' % mod) if not mod.startswith('.') else 'st.global%s.b32' % mod
        add(Form(m, 'st', f, ['b32'], ['b32'], '%s [{out}], {s0};' % f, stores=False))
    # .const: a module variable per kernel
    cwords = [0x80000001, 0xffffffff, 0x7fc12345, 0x00000001, 0x3f800000, 0x12345678,
              0xdeadbeef, 0x00ff8000]
    for t in ('u8', 's8', 's16', 'b32', 'b64', 'f32', 'f64'):
        for v, n in (('', 1), ('.v2', 2), ('.v4', 4)):
            if t in ('b64', 'f64') and n == 4:
                continue
            f = 'ld.const%s.%s' % (v, t)
            cname = mangle(f) + '_data'
            r = rcl(t)
            add(Form(m, 'ld', f, [r] * n, [], [
                'and.b32 {b32_0}, {tid}, 1;',
                'mul.wide.u32 {b64_0}, {b32_0}, 16;',
                'mov.u64 {b64_1}, %s;' % cname,
                'add.s64 {b64_0}, {b64_0}, {b64_1};',
                '%s %s, [{b64_0}];' % (f, vec(n, ['{d%d}' % i for i in range(n)]))],
                scratch=[('b32', 1), ('b64', 2)],
                globals_=['.const .align 16 .b32 %s[8] = {%s};' % (
                    cname, ', '.join('%d' % w for w in cwords))]))
    atom_forms(add, Form, mangle)


ATOM = [('and', ['b32', 'b64']), ('or', ['b32', 'b64']), ('xor', ['b32', 'b64']),
        ('exch', ['b32', 'b64']), ('cas', ['b16', 'b32', 'b64']),
        ('add', ['u32', 's32', 'u64', 's64', 'f32', 'f64', 'f16', 'f16x2', 'bf16', 'bf16x2']),
        ('add.noftz', ['f16', 'f16x2', 'bf16', 'bf16x2']),
        ('inc', ['u32', 'u64']), ('dec', ['u32', 'u64']),
        ('min', ['u32', 's32', 'u64', 's64', 'f32']), ('max', ['u32', 's32', 'u64', 's64', 'f32']),
        # ptxas: "Vector modifier required" (the half min/max are vector forms only)
        ('min.noftz', ['f16', 'bf16', 'f16x2', 'bf16x2']),
        ('max.noftz', ['f16', 'bf16', 'f16x2', 'bf16x2'])]


def atom_forms(add, Form, mangle):
    m = 'atom'
    for (o, types), sp in itertools.product(ATOM, ('.global', '.shared', '')):
        for t in types:
            k, r = kind(t), rcl(t)
            cas = o == 'cas'
            srcs = [k, k, k] if cas else [k, k]
            opnds = '{s1}, {s2}' if cas else '{s1}'
            if sp == '.shared':
                pre = ['mov.u32 {b32_0}, buf;', 'mad.lo.u32 {b32_0}, {tid}, 8, {b32_0};']
                a, decls = '{b32_0}', ['.shared .align 8 .b8 buf[256];']
            else:
                pre, a, decls = [], '{out}+{o1}', []
            st = 'st%s.%s [%s], {s0};' % (sp, 'b16' if r == 'b16' else 'b%s' % r[1:], a)
            ld = 'ld%s.%s {d1}, [%s];' % (sp, 'b16' if r == 'b16' else 'b%s' % r[1:], a)
            f = 'atom%s.%s.%s' % (sp, o, t)
            body = pre + [st, '%s {d0}, [%s], %s;' % (f, a, opnds), ld]
            stores = [True, sp == '.shared']
            if sp != '.shared':
                body = pre + [st, '%s {d0}, [%s], %s;' % (f, a, opnds)]
            add(Form(m, 'atom', f, [r, r], srcs, body, decls=decls, scratch=[('b32', 1)],
                     stores=stores))
            if cas or o == 'exch':
                continue
            f = 'red%s.%s.%s' % (sp, o, t)
            body = pre + [st, '%s [%s], {s1};' % (f, a)] + ([ld] if sp == '.shared' else [])
            add(Form(m, 'red', f, [r, r], [k, k], body, decls=decls, scratch=[('b32', 1)],
                     stores=[False, sp == '.shared']))
    # orderings and scopes on one form each
    for sem in ('', '.relaxed', '.acquire', '.release', '.acq_rel'):
        for sc in ('', '.cta', '.cluster', '.gpu', '.sys'):
            if not sem and not sc:
                continue
            f = 'atom%s%s.global.add.u32' % (sem, sc)
            add(Form(m, 'atom', f, ['b32', 'b32'], ['u32', 'u32'],
                     ['st.global.b32 [{out}+{o1}], {s0};', '%s {d0}, [{out}+{o1}], {s1};' % f],
                     stores=[True, False]))
            f = 'red%s%s.global.add.u32' % (sem, sc)
            add(Form(m, 'red', f, ['b32', 'b32'], ['u32', 'u32'],
                     ['st.global.b32 [{out}+{o1}], {s0};', '%s [{out}+{o1}], {s1};' % f],
                     stores=[False, False]))
    # vector float atomics (sm_90)
    for t, n in (('f32', 2), ('f32', 4), ('f16x2', 2), ('f16x2', 4), ('bf16x2', 2),
                 ('bf16x2', 4), ('f16', 2), ('f16', 4), ('f16', 8), ('bf16', 8)):
        k, r = kind(t), rcl(t)
        # the half types need .noftz, after the operation (PTX ISA 9.7.13.5)
        f = ('atom.global.v%d.%s.add' % (n, t) if t == 'f32' else
             'atom.global.add.noftz.v%d.%s' % (n, t))
        ds = ['{d%d}' % i for i in range(n)]
        ss = ['{s%d}' % i for i in range(n)]
        add(Form(m, 'atom', f, [r] * n, [k] * n,
                 ['%s %s, [{in}], %s;' % (f, vec(n, ds), vec(n, ss))]))
    # every lane of the block on one shared word: the final value
    for o, t in (('add', 'u32'), ('add', 'u64'), ('and', 'b32'), ('or', 'b32'),
                 ('xor', 'b64'), ('min', 's32'), ('max', 'u32'), ('inc', 'u32'),
                 ('dec', 'u32'), ('min', 's64'), ('max', 'u64')):
        k, r = kind(t), rcl(t)
        b = 'b' + r[1:]
        f = 'red.shared.%s.%s' % (o, t)
        init = {'inc': 5, 'dec': 3, 'min': 1000}.get(o, 0x55)
        add(Form(m, 'red', f + ' (contended)', [r], [k],
                 ['setp.eq.u32 {pred_0}, {tid}, 0;',
                  'mov.%s {%s_0}, %d;' % (b, r, init),
                  '@{pred_0} st.shared.%s [buf], {%s_0};' % (b, r),
                  'bar.sync 0;',
                  '%s [buf], {s0};' % f,
                  'bar.sync 0;',
                  'ld.shared.%s {d0}, [buf];' % b],
                 decls=['.shared .align 8 .b8 buf[8];'], scratch=[('pred', 1), (r, 1)],
                 name=mangle(f + '_contended')))
    vector_atom_forms(add, Form, mangle)


# the half types' edge values for the vector atomics and the bulk reductions:
# NaNs (quiet and signalling, payloads, either sign), zeros, infinities,
# subnormals, the largest finite and ordinary numbers
HALF_EDGE = {'f16': V.F16 + [0xfc01, 0x7fff, 0x83ff, 0xfbff],
             'bf16': V.BF16 + [0xff81, 0x7fff, 0x807f, 0xff7f]}


def half_pair_rows(t, per_row):
    """Every (memory, operand) pair of the edge values of half type @t,
    @per_row of them a row: the row's memory words, then its operand words
    (two halves a word, the low half first)."""
    vals = HALF_EDGE[t]
    pairs = [(a, b) for a in vals for b in vals]
    rows = []
    for i in range(0, len(pairs), per_row):
        chunk = [pairs[(i + j) % len(pairs)] for j in range(per_row)]
        mem = [chunk[j][0] | chunk[j + 1][0] << 16 for j in range(0, per_row, 2)]
        opnd = [chunk[j][1] | chunk[j + 1][1] << 16 for j in range(0, per_row, 2)]
        rows.append(tuple(mem + opnd))
    return rows


def vector_atom_forms(add, Form, mangle):
    """atom/red .global or generic .v2/.v4/.v8 of .f16/.bf16 and .v2/.v4 of
    .f16x2/.bf16x2 with .add/.min/.max.noftz (PTX ISA 8.1, sm_90), and
    .v2/.v4.f32.add: each row's memory (its words of `out`, stored first)
    against its operands, every pair of the half edge values; atom stores
    the old values too.  Orderings, scopes, the cache hint and the other
    order of the modifiers on a few."""
    m = 'atom'
    shapes = [('f16', 2), ('f16', 4), ('f16', 8), ('bf16', 2), ('bf16', 4), ('bf16', 8),
              ('f16x2', 2), ('f16x2', 4), ('bf16x2', 2), ('bf16x2', 4)]
    cases = [(ins, o, t, n, sp, '', False, False)
             for ins in ('atom', 'red') for o in ('min', 'max') for t, n in shapes
             for sp in ('.global', '')]
    cases += [(ins, 'add', t, n, '', '', False, False)
              for ins in ('atom', 'red') for t, n in shapes + [('f32', 2), ('f32', 4)]]
    cases += [(ins, o, t, n, '.global', '', False, True)
              for ins in ('atom', 'red') for o in ('min', 'max')
              for t, n in (('f16', 4), ('bf16x2', 2))]
    for ins in ('atom', 'red'):
        sems = ('.relaxed', '.acquire', '.release', '.acq_rel') if ins == 'atom' else \
            ('.relaxed', '.release')
        for sem in ('',) + sems:
            for sc in ('', '.cta', '.cluster', '.gpu', '.sys'):
                if sem or sc:
                    cases.append((ins, 'max' if sem else 'min', 'f16x2', 2, '.global', sem + sc,
                                  False, False))
        cases.append((ins, 'min', 'bf16', 8, '.global', '', True, False))
        cases.append((ins, 'max', 'f16x2', 4, '', '', True, False))
    for ins, o, t, n, sp, semsc, hint, swapped in cases:
        half = t in ('f16', 'bf16')
        w = n // 2 if half else n  # 32-bit words of memory
        if t == 'f32':
            vals = V.F32[:24]
            pairs = [(a, b) for a in vals for b in vals]
            rows = [tuple([pairs[(i + j) % len(pairs)][0] for j in range(n)] +
                          [pairs[(i + j) % len(pairs)][1] for j in range(n)])
                    for i in range(0, len(pairs), n)]
        else:
            rows = half_pair_rows(t.replace('x2', ''), 2 * w)
        if semsc:
            rows = rows[:64]
        nf = '' if t == 'f32' else '.noftz'
        if swapped:  # the operation before the vector
            f = '%s%s%s.%s%s.v%d.%s' % (ins, semsc, sp, o, nf, n, t)
        else:
            f = '%s%s%s.v%d.%s.%s%s' % (ins, semsc, sp, n, t, o, nf)
        if hint:
            f += '.L2::cache_hint'
        ws = ['{s%d}' % i for i in range(w)]
        body = ['st.global%s.b32 [{out}+{o%d}], %s;' % ('.v%d' % w if w > 1 else '',
                                                         w if ins == 'atom' else 0, vec(w, ws))]
        if half:
            ops = ['{b16_%d}' % i for i in range(2 * w)]
            olds = ['{b16_%d}' % i for i in range(2 * w, 4 * w)]
            body += ['mov.b32 {{{b16_%d}, {b16_%d}}}, {s%d};' % (2 * i, 2 * i + 1, w + i)
                     for i in range(w)]
            scratch = [('b16', 4 * w), ('b64', 1)]
        else:
            ops = ['{s%d}' % i for i in range(w, 2 * w)]
            olds = ['{d%d}' % i for i in range(w)]
            scratch = [('b64', 1)]
        if hint:
            body.append('createpolicy.fractional.L2::evict_last.b64 {b64_0}, 1.0;')
        a = '[{out}+{o%d}]' % (w if ins == 'atom' else 0)
        tail = ', {b64_0};' if hint else ';'
        if ins == 'atom':
            body.append('%s %s, %s, %s%s' % (f, vec(n, olds), a, vec(n, ops), tail))
            if half:
                body += ['mov.b32 {d%d}, {{{b16_%d}, {b16_%d}}};' % (i, 2 * (w + i),
                                                                   2 * (w + i) + 1)
                         for i in range(w)]
            dsts, stores = ['b32'] * (2 * w), [True] * w + [False] * w
        else:
            body.append('%s %s, %s%s' % (f, a, vec(n, ops), tail))
            dsts, stores = ['b32'] * w, [False] * w
        k = 'f32' if t == 'f32' else 'bf16x2' if t.startswith('bf') else 'f16x2'
        add(Form(m, ins, f + ('' if sp else ' (generic)'), dsts, [k] * (2 * w), body,
                 scratch=scratch, rows=rows, stores=stores,
                 name=mangle('v_' + f + ('' if sp else '_generic'))))


def warp_forms(add, Form, mangle):
    m = 'warp'
    rows32 = [(V.U32[i % len(V.U32)] ^ (i * 0x01010101), i, 0) for i in range(32)]
    for mode in ('up', 'down', 'bfly', 'idx'):
        f = 'shfl.sync.%s.b32' % mode
        add(Form(m, 'shfl', f + ' (b, c in registers)', ['b32', 'pred'], ['b32', 'lane', 'clamp'],
                 '%s {d0}|{d1}, {s0}, {s1}, {s2}, 0xffffffff;' % f, name=mangle(f + '_reg')))
        add(Form(m, 'shfl', f + ' (no predicate)', ['b32'], ['b32', 'lane', 'clamp'],
                 '%s {d0}, {s0}, {s1}, {s2}, 0xffffffff;' % f, name=mangle(f + '_nopred')))
        add(Form(m, 'shfl', f + ' (membermask in a register)', ['b32', 'pred'], ['b32', 'lane'],
                 ['mov.b32 {b32_0}, 0xffffffff;',
                  '%s {d0}|{d1}, {s0}, {s1}, 0x1f, {b32_0};' % f], scratch=[('b32', 1)],
                 name=mangle(f + '_maskreg')))
        for b in (0, 1, 5, 16, 31):
            for c in (0x1f, 0x0, 0x181f, 0x1c00):
                add(Form(m, 'shfl', '%s (b %d, c 0x%x)' % (f, b, c), ['b32', 'pred'], ['b32'],
                         '%s {d0}|{d1}, {s0}, %d, 0x%x, 0xffffffff;' % (f, b, c),
                         name=mangle('%s_b%d_c%x' % (f, b, c)),
                         rows=[(r[0],) for r in rows32]))
    # votes: warp 0 all false, 1 alternating, 2 all true, 3 one lane
    pat = [0] * 32 + [i & 1 for i in range(32)] + [1] * 32 + [int(i == 7) for i in range(32)]
    prows = [(p,) for p in pat]
    for mode in ('all', 'any', 'uni'):
        for neg in ('', '!'):
            f = 'vote.sync.%s.pred' % mode
            add(Form(m, 'vote', f + (' (negated)' if neg else ''), ['pred'], ['pred'],
                     '%s {d0}, %s{s0}, 0xffffffff;' % (f, neg), rows=prows,
                     name=mangle(f + ('_neg' if neg else ''))))
    add(Form(m, 'vote', 'vote.sync.ballot.b32', ['b32'], ['pred'],
             'vote.sync.ballot.b32 {d0}, {s0}, 0xffffffff;', rows=prows))
    vrows = [(0x1234,)] * 32 + [(i % 4,) for i in range(32)] + [(i * 77,) for i in range(32)]
    for t, r in (('b32', 'b32'), ('b64', 'b64')):
        add(Form(m, 'match', 'match.any.sync.%s' % t, ['b32'], [t],
                 'match.any.sync.%s {d0}, {s0}, 0xffffffff;' % t, rows=vrows))
        add(Form(m, 'match', 'match.all.sync.%s' % t, ['b32', 'pred'], [t],
                 'match.all.sync.%s {d0}|{d1}, {s0}, 0xffffffff;' % t, rows=vrows))
    rrows = [(V.U32[i % len(V.U32)],) for i in range(64)] + [(i,) for i in range(32)]
    for o, ts in (('add', ('u32', 's32')), ('min', ('u32', 's32')), ('max', ('u32', 's32')),
                  ('and', ('b32',)), ('or', ('b32',)), ('xor', ('b32',))):
        for t in ts:
            f = 'redux.sync.%s.%s' % (o, t)
            add(Form(m, 'redux', f, ['b32'], [t], '%s {d0}, {s0}, 0xffffffff;' % f, rows=rrows))
    for o in ('min', 'max'):
        for mod in ('', '.abs', '.NaN', '.abs.NaN'):
            f = 'redux.sync.%s%s.f32' % (o, mod)
            add(Form(m, 'redux', f, ['b32'], ['f32'], '%s {d0}, {s0}, 0xffffffff;' % f))
    add(Form(m, 'activemask', 'activemask.b32', ['b32'], [], 'activemask.b32 {d0};',
             rows=[()] * 32))
    add(Form(m, 'elect', 'elect.sync', ['b32', 'pred'], [], 'elect.sync {d0}|{d1}, 0xffffffff;',
             rows=[()] * 32))


SREGS = ['%laneid', '%tid.x', '%tid.y', '%tid.z', '%ntid.x', '%ntid.y', '%ntid.z',
         '%ctaid.x', '%ctaid.y', '%ctaid.z', '%nctaid.x', '%nctaid.y', '%nctaid.z',
         '%lanemask_eq', '%lanemask_le', '%lanemask_lt', '%lanemask_ge', '%lanemask_gt',
         '%cluster_ctaid.x', '%cluster_nctaid.x', '%clusterid.x', '%nclusterid.x',
         '%cluster_ctarank', '%cluster_nctarank', '%is_explicit_cluster',
         '%dynamic_smem_size', '%total_smem_size', '%aggr_smem_size', '%nwarpid']


def sreg_forms(add, Form, mangle):
    m = 'sreg'
    for s in SREGS:
        if s == '%is_explicit_cluster':
            add(Form(m, 'mov', 'mov.pred %s' % s, ['pred'], [], 'mov.pred {d0}, %s;' % s,
                     rows=[()] * 64, name=mangle('sreg_' + s[1:])))
            continue
        add(Form(m, 'mov', 'mov.u32 %s' % s, ['b32'], [], 'mov.u32 {d0}, %s;' % s,
                 rows=[()] * 64, name=mangle('sreg_' + s[1:])))
    # clocks: never running backwards between two reads (32-bit ones by
    # their difference, which a wrap-around leaves small)
    for s, t in (('%clock', 'u32'), ('%clock64', 'u64'), ('%globaltimer', 'u64'),
                 ('%globaltimer_lo', 'u32')):
        r = 'b32' if t == 'u32' else 'b64'
        test = ('setp.ge.%s {d0}, {%s_1}, {%s_0};' % (t, r, r) if t == 'u64' else
                'sub.u32 {b32_1}, {b32_1}, {b32_0}; setp.lt.u32 {d0}, {b32_1}, 0x40000000;')
        add(Form(m, 'mov', 'mov.%s %s (advances)' % (t, s), ['pred'], [], [
            'mov.%s {%s_0}, %s;' % (t, r, s), 'mov.%s {%s_1}, %s;' % (t, r, s), test],
            scratch=[(r, 2)], rows=[()] * 32, name=mangle('sreg_' + s[1:])))


def misc_forms(add, Form, op, mangle):
    m = 'misc'
    for t in ('b16', 'u16', 's16', 'b32', 'u32', 's32', 'f32', 'b64', 'u64', 's64', 'f64',
              'pred'):
        op(m, 'mov.' + t, [], t, [t])
    for f, d, imm in (('mov.f32', 'b32', '0f7FC12345'), ('mov.f32', 'b32', '0f80000000'),
                      ('mov.f64', 'b64', '0dFFF8000000000001'), ('mov.b32', 'b32', '-1'),
                      ('mov.u64', 'b64', '0x8000000000000000'), ('mov.b16', 'b16', '0xffff'),
                      ('mov.s32', 'b32', '-2147483648'), ('mov.f32', 'b32', '0f00000001')):
        add(Form(m, 'mov', '%s (immediate %s)' % (f, imm), [d], [], '%s {d0}, %s;' % (f, imm),
                 name=mangle('%s_imm_%s' % (f, imm.replace('-', 'm'))), rows=[()] * 32))
    add(Form(m, 'mov', 'mov.b64 {a, b} (pack)', ['b64'], ['b32', 'b32'],
             'mov.b64 {d0}, {{{s0}, {s1}}};', name='g_mov_b64_pack'))
    add(Form(m, 'mov', 'mov.b64 {a, b} (unpack)', ['b32', 'b32'], ['b64'],
             'mov.b64 {{{d0}, {d1}}}, {s0};', name='g_mov_b64_unpack'))
    add(Form(m, 'mov', 'mov.b32 {a, b} (pack)', ['b32'], ['b16', 'b16'],
             'mov.b32 {d0}, {{{s0}, {s1}}};', name='g_mov_b32_pack'))
    add(Form(m, 'mov', 'mov.b32 {a, b} (unpack)', ['b16', 'b16'], ['b32'],
             'mov.b32 {{{d0}, {d1}}}, {s0};', name='g_mov_b32_unpack'))
    add(Form(m, 'mov', 'mov.b64 {a, b, c, d} (pack)', ['b64'], ['b16'] * 4,
             'mov.b64 {d0}, {{{s0}, {s1}, {s2}, {s3}}};', name='g_mov_b64_pack4',
             rows=[(V.U16[i % 22], V.U16[(i + 5) % 22], V.U16[(i + 9) % 22],
                    V.U16[(i * 3) % 22]) for i in range(32)]))
    for sp in ('global', 'shared', 'local', 'const', 'param', 'shared::cluster'):
        add(Form(m, 'isspacep', 'isspacep.%s (a global address)' % sp, ['pred'], [],
                 'isspacep.%s {d0}, {in};' % sp, rows=[()] * 32))
    for f in ('membar.cta', 'membar.gl', 'membar.sys', 'fence.sc.cta', 'fence.sc.gpu',
              'fence.sc.sys', 'fence.acq_rel.cta', 'fence.acq_rel.gpu', 'fence.acq_rel.sys',
              'fence.sc.cluster', 'fence.acq_rel.cluster', 'fence.proxy.async',
              'fence.proxy.alias', 'fence.proxy.async.global', 'fence.proxy.async.shared::cta',
              'fence.proxy.async.shared::cluster',
              'fence.mbarrier_init.release.cluster', 'prefetch.global.L1 [{in}]',
              'prefetch.global.L2 [{in}]', 'prefetch.global.L2::evict_last [{in}]',
              'prefetch.global.L2::evict_normal [{in}]', 'prefetchu.L1 [{in}]',
              'prefetch.L1 [{in}]', 'nanosleep.u32 100', 'bar.warp.sync 0xffffffff',
              'bar.sync 0', 'barrier.sync 0', 'barrier.sync.aligned 0',
              'griddepcontrol.wait', 'griddepcontrol.launch_dependents'):
        # the instruction, then this row's input word stored
        name = f.split(' ')[0]
        add(Form(m, name.split('.')[0], f.replace(' [{in}]', '').replace(' [{out}+8]', ''),
                 ['b32'], ['b32'], [f + ';', 'mov.b32 {d0}, {s0};'],
                 name=mangle('run_' + f.replace(' [{in}]', '').replace(' [{out}+8]', '')
                             .replace(',', '').replace(' ', '_'))))
    # a kernel name as long as C++'s mangled ones
    add(Form(m, 'entry', '.entry with a 58-character (mangled C++) name', ['b32'], ['b32'],
             'mov.b32 {d0}, {s0};', name='_Z30ptxgen_kernel_with_a_long_namePjPKjS1_iiiiii'))
    op(m, 'cvta.to.global.u64', [], 'b64', ['b64'])


def more_forms(add, Form, op, mangle):
    mem_forms(add, Form, mangle)
    warp_forms(add, Form, mangle)
    sreg_forms(add, Form, mangle)
    misc_forms(add, Form, op, mangle)
