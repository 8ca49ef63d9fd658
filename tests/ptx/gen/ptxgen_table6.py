# SPDX-License-Identifier: MIT
#
# ptxgen's table, continued (issue 31), module `b128w`: .b128 registers
# where ptxas 13.0 takes them in place of a narrower register: cvt's
# destination and source (extension into the .b128 register, truncation
# of it) and the elements of vector ld/ldu/st (.v2/.v4 of 8- to 64-bit
# types, sinks and literal elements).  Each .b128 result is written as
# its two 64-bit halves (the low one first).  Rows: ptxgen_values' for
# the sources' kinds, table 5's (lo, hi) pairs for a .b128 source.

from ptxgen_table5 import pair_rows


def more_forms(add, Form):
    def form(n, line, d, s, body, rows=None, **kw):
        add(Form('b128w', line.split('.')[0], line, d, s, body, rows=rows,
                 decls=['.reg .b128 %q<6>;'] + kw.pop('decls', []), name='g_b128w_' + n, **kw))

    def un(q, d):
        return 'mov.b128 {{{d%d}, {d%d}}}, %%q%d;' % (d, d + 1, q)

    pk = ['mov.b128 %q1, {{{s0}, {s1}}};', 'mov.b128 %q2, {{{s1}, {s0}}};']
    B = ['b64']
    # cvt into a .b128 register
    for i in ('s64.s32', 'u64.u32', 's32.s32', 'u32.s32', 's8.s32', 'u16.s32', 'sat.s8.s32',
              's16.u64', 'rn.f32.s32', 'f64.f32', 'rni.s64.f32', 'rzi.s32.f32', 'rn.f16.f32'):
        form('cvt_' + i.replace('.', '_'), 'cvt.%s q, a' % i, B * 2, [i[-3:]],
             ['cvt.%s %%q1, {s0};' % i, un(1, 0)])
    form('cvt_f16x2_f32', 'cvt.rn.f16x2.f32 q, a, b', B * 2, ['f32'] * 2,
         ['cvt.rn.f16x2.f32 %q1, {s0}, {s1};', un(1, 0)])
    # cvt from a .b128 register: its low bits
    for i, d in (('u32.u64', 'b32'), ('s32.s8', 'b32'), ('rn.f32.s64', 'b32'),
                 ('rn.f64.s32', 'b64')):
        form('cvt_%s_q' % i.replace('.', '_'), 'cvt.%s d, q' % i, [d], ['u64'] * 2,
             pk + ['cvt.%s {d0}, %%q1;' % i], pair_rows())
    form('cvt_s64_s16_qq', 'cvt.s64.s16 q, q', B * 2, ['u64'] * 2,
         pk + ['cvt.s64.s16 %q3, %q1;', un(3, 0)], pair_rows())
    # vector loads into .b128 registers
    for n, i, k, q in (('ld_v2_b64', 'ld.global.v2.b64', 'u64', 2),
                       ('ld_v2_s32', 'ld.global.v2.s32', 'u32', 2),
                       ('ld_v4_s8', 'ld.global.v4.s8', 'u32', 4),
                       ('ld_v4_u16', 'ld.global.v4.u16', 'u32', 4),
                       ('ld_v2_f32', 'ld.global.nc.v2.f32', 'u32', 2),
                       ('ldu_v2_s64', 'ldu.global.v2.s64', 'u64', 2),
                       ('ld_v4_s32_sink', 'ld.global.v4.s32', 'u32', 4)):
        el = ['%%q%d' % (j + 1) for j in range(q)]
        if n[-4:] == 'sink':
            el[1::2] = ['_', '_']
        nq = len([e for e in el if e != '_'])
        ns = 1 if n == 'ld_v4_s8' else 2 if k == 'u64' or q == 2 or n[-3:] == 'u16' else 4
        form(n, i + ' {q, ...}', B * (2 * nq), [k] * ns,
             ['%s {{%s}}, [{in}];' % (i, ', '.join(el))] + [un(j + 1, 2 * j) for j in range(nq)],
             pair_rows() if k == 'u64' else None)
    # vector stores of .b128 registers: their low bits
    for n, st, d, ld in (('st_v2_b64', 'v2.b64 [{out}], {{%q1, %q2}}', 2, 'v2.b64 {{{d0}, {d1}}}'),
                         ('st_v4_b16', 'v4.b16 [{out}], {{%q1, %q2, %q2, %q1}}', 1, 'b64 {d0}'),
                         ('st_v4_b32_imm', 'v4.b32 [{out}], {{%q1, 7, -1, %q2}}', 2,
                          'v2.b64 {{{d0}, {d1}}}')):
        form(n, 'st.global.' + st.split(' [')[0] + ' [a], {q, ...}', B * d, ['u64'] * 2,
             pk + ['st.global.%s;' % st, 'ld.global.%s, [{out}];' % ld], pair_rows())
    form('st_ld_shared_v2_s32', 'st.shared.v2.s32 ld.shared.v2.s32 {q, r}', B * 4, ['u64'] * 2,
         pk + ['mov.u32 {b32_0}, sbuf;', 'mad.lo.u32 {b32_0}, {tid}, 8, {b32_0};',
               'st.shared.v2.s32 [{b32_0}], {{%q1, %q2}};',
               'ld.shared.v2.s32 {{%q3, %q4}}, [{b32_0}];', un(3, 0), un(4, 2)],
         pair_rows(), scratch=[('b32', 1)], decls=['.shared .align 16 .b8 sbuf[256];'])
