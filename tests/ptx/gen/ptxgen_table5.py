# SPDX-License-Identifier: MIT
#
# ptxgen's table, continued (issue 31): the .b128 type (PTX ISA 8.3+),
# module `b128`: mov.b128's pack, unpack, copy and literals; ld/st .b128
# on global, generic, shared and local memory with the memory-model and
# cache qualifiers ptxas takes for them; atom.cas.b128 and atom.exch.b128
# (sm_90) on global, shared and generic addresses with their .sem and
# .scope forms; and a compare-and-swap loop incrementing one 128-bit
# counter per CTA (its carry from the low to the high half) by every
# thread of the CTA, in shared and in global memory, read by all after a
# barrier.  A row's operands are 64-bit halves (the low one first); its
# results are the halves of each 128-bit value.

Q = ['.reg .b128 %q<6>;']

# (lo, hi) pairs: carries, signs, all ones, alternating bits
M = (1 << 64) - 1
L32 = 0xffffffff
PAIRS = [(0, 0), (1, 0), (M, 0), (0, 1), (M, M), (1 << 63, M >> 1),
         (0x0123456789abcdef, 0xfedcba9876543210), (M - 1, M), (M // 3, M // 3 * 2),
         (L32, M ^ L32), (1 << 32, 1 << 31), (7, (1 << 63) + 1),
         (0xdeadbeefcafef00d, 0x0f1e2d3c4b5a6978), (M >> 1, 1 << 63), (M ^ L32, L32), (2, 3)]


def pair_rows(n=32):
    return [PAIRS[i % len(PAIRS)] if i < len(PAIRS) else
            (PAIRS[i % len(PAIRS)][1], PAIRS[(i * 7) % len(PAIRS)][0]) for i in range(n)]


def cas_rows(n=32):
    """memory (lo, hi), compare (lo, hi), new (lo, hi): the compare equal
    to the memory in every other row, else one bit off in one half."""
    rows = []
    for i in range(n):
        m = PAIRS[i % len(PAIRS)]
        nw = PAIRS[(i * 5 + 3) % len(PAIRS)]
        c = m if i % 2 == 0 else ((m[0] ^ 1, m[1]) if i % 4 == 1 else (m[0], m[1] ^ (1 << 63)))
        rows.append(m + c + nw)
    return rows


def more_forms(add, Form):
    m = 'b128'

    def form(name, line, dsts, srcs, body, rows, scratch=(), decls=()):
        add(Form(m, line.split('.')[0].split()[-1], line, dsts, srcs, body, rows=rows,
                 scratch=list(scratch), decls=Q + list(decls), name=name))

    pack = 'mov.b128 %q1, {{{s0}, {s1}}};'
    unpack = 'mov.b128 {{{d0}, {d1}}}, %q2;'
    # mov
    form('g_b128_mov_pack', 'mov.b128 q, {a, b}; mov.b128 {d, e}, q', ['b64'] * 2, ['u64'] * 2,
         [pack, 'mov.b128 {{{d0}, {d1}}}, %q1;'], pair_rows())
    form('g_b128_mov_copy', 'mov.b128 q, r', ['b64'] * 2, ['u64'] * 2,
         [pack, 'mov.b128 %q2, %q1;', unpack], pair_rows())
    form('g_b128_mov_x4', 'mov.b128 q, {a, b, c, d} (.b32)', ['b64'] * 2, ['u32'] * 4,
         ['mov.b128 %q1, {{{s0}, {s1}, {s2}, {s3}}};', 'mov.b128 {{{d0}, {d1}}}, %q1;'],
         [(0x11111111 * (i % 15), 0xffffffff - i, 0x80000000 >> (i % 32), i * 0x01010101)
          for i in range(32)])
    form('g_b128_unpack_x4', 'mov.b128 {a, b, c, d}, q (.b32)', ['b32'] * 4, ['u64'] * 2,
         [pack, 'mov.b128 {{{d0}, {d1}, {d2}, {d3}}}, %q1;'], pair_rows())
    form('g_b128_unpack_sink', 'mov.b128 {_, d}, q', ['b64'], ['u64'] * 2,
         [pack, 'mov.b128 {{_, {d0}}}, %q1;'], pair_rows())
    for name, lit in (('g_b128_mov_imm5', '5'), ('g_b128_mov_imm_m1', '-1'),
                      ('g_b128_mov_imm_u64max', '0xffffffffffffffff'),
                      ('g_b128_mov_imm_wide', '0x123456789abcdef0123'),
                      ('g_b128_mov_vimm', '{1, -2}'), ('g_b128_mov_vimm4', '{1, -2, 3, 0x80000000}')):
        form(name, 'mov.b128 q, %s' % lit, ['b64'] * 2, ['u64'],
             ['mov.b128 %%q2, %s;' % lit.replace('{', '{{').replace('}', '}}'), unpack],
             [(0,)] * 32)
    # ld / st on the row's own 16 bytes of `out` (then overwritten by the results)
    st_ld = [
        ('g_b128_ldst_global', 'st.global.b128 [{out}], %q1;', 'ld.global.b128 %q2, [{out}];'),
        ('g_b128_ldst_generic', 'st.b128 [{out}], %q1;', 'ld.b128 %q2, [{out}];'),
        ('g_b128_ldst_volatile', 'st.volatile.global.b128 [{out}], %q1;',
         'ld.volatile.global.b128 %q2, [{out}];'),
        ('g_b128_ldst_relaxed', 'st.relaxed.gpu.global.b128 [{out}], %q1;',
         'ld.relaxed.gpu.global.b128 %q2, [{out}];'),
        ('g_b128_ldst_acq_rel', 'st.release.sys.b128 [{out}], %q1;', 'ld.acquire.sys.b128 %q2, [{out}];'),
        ('g_b128_ldst_cta', 'st.release.cta.global.b128 [{out}], %q1;',
         'ld.acquire.cta.global.b128 %q2, [{out}];'),
        ('g_b128_ldst_cache', 'st.global.wt.b128 [{out}], %q1;', 'ld.global.cv.b128 %q2, [{out}];'),
        ('g_b128_ldst_evict', 'st.global.L1::no_allocate.b128 [{out}], %q1;',
         'ld.global.L1::evict_last.L2::256B.b128 %q2, [{out}];'),
        ('g_b128_ldst_hint', 'st.global.L2::cache_hint.b128 [{out}], %q1, {b64_0};',
         'ld.global.L2::cache_hint.b128 %q2, [{out}], {b64_0};'),
        ('g_b128_ldst_imm', 'st.global.b128 [{out}], 0x8000000000000001;',
         'ld.global.b128 %q2, [{out}];'),
        ('g_b128_ldst_imm_m1', 'st.global.b128 [{out}], -1;', 'ld.global.b128 %q2, [{out}];'),
    ]
    pol = 'createpolicy.fractional.L2::evict_last.b64 {b64_0}, 1.0;'
    for name, st, ld in st_ld:
        form(name, '%s %s' % (st.split()[0], ld.split()[0]), ['b64'] * 2, ['u64'] * 2,
             [pack] + ([pol] if '{b64_0}' in st else []) + [st, ld, unpack], pair_rows(),
             scratch=[('b64', 1)])
    form('g_b128_ld_nc', 'ld.global.nc.b128', ['b64'] * 2, ['u64'] * 2,
         ['ld.global.nc.b128 %q2, [{in}];', unpack], pair_rows())
    form('g_b128_ldu', 'ldu.global.b128', ['b64'] * 2, ['u64'] * 2,
         ['ldu.global.b128 %q2, [{in}];', unpack], pair_rows())
    # shared: a 16-byte slot per thread, by its address and by a generic one
    sh = ['mov.u32 {b32_0}, sbuf;', 'mad.lo.u32 {b32_0}, {tid}, 16, {b32_0};']
    form('g_b128_ldst_shared', 'st.shared.b128 ld.shared.b128', ['b64'] * 2, ['u64'] * 2,
         [pack] + sh + ['st.shared.b128 [{b32_0}], %q1;', 'bar.sync 0;',
                        'ld.relaxed.cta.shared::cta.b128 %q2, [{b32_0}];', unpack],
         pair_rows(), scratch=[('b32', 1)], decls=['.shared .align 16 .b8 sbuf[512];'])
    form('g_b128_ldst_shared_gen', 'st.b128 ld.volatile.b128 (shared, generic)', ['b64'] * 2,
         ['u64'] * 2,
         [pack] + sh + ['cvt.u64.u32 {b64_0}, {b32_0};', 'cvta.shared.u64 {b64_0}, {b64_0};',
                        'st.b128 [{b64_0}], %q1;', 'ld.volatile.b128 %q2, [{b64_0}];', unpack],
         pair_rows(), scratch=[('b32', 1), ('b64', 1)],
         decls=['.shared .align 16 .b8 sbuf[512];'])
    form('g_b128_ldst_local', 'st.local.b128 ld.local.b128', ['b64'] * 2, ['u64'] * 2,
         [pack, 'mov.u64 {b64_0}, lbuf;', 'st.local.b128 [{b64_0}], %q1;',
          'ld.local.b128 %q2, [lbuf];', unpack],
         pair_rows(), scratch=[('b64', 1)], decls=['.local .align 16 .b8 lbuf[16];'])
    # atom.cas: memory (s0, s1) at the row's `out` or its shared slot,
    # compare (s2, s3), new (s4, s5): the old value, then the memory after
    cas_in = ['mov.b128 %q1, {{{s0}, {s1}}};', 'mov.b128 %q3, {{{s2}, {s3}}};',
              'mov.b128 %q4, {{{s4}, {s5}}};']
    after = ['mov.b128 {{{d0}, {d1}}}, %q2;', 'mov.b128 {{{d2}, {d3}}}, %q5;']
    for name, atom in (('g_b128_cas_global', 'atom.global.cas.b128'),
                       ('g_b128_cas_generic', 'atom.cas.b128'),
                       ('g_b128_cas_acq_rel', 'atom.acq_rel.gpu.global.cas.b128'),
                       ('g_b128_cas_acquire_sys', 'atom.acquire.sys.cas.b128'),
                       ('g_b128_cas_release_cta', 'atom.release.cta.global.cas.b128'),
                       ('g_b128_cas_relaxed_cluster', 'atom.relaxed.cluster.cas.b128')):
        form(name, atom, ['b64'] * 4, ['u64'] * 6,
             cas_in + ['st.global.b128 [{out}], %q1;',
                       '%s %%q2, [{out}], %%q3, %%q4;' % atom,
                       'ld.global.b128 %q5, [{out}];'] + after, cas_rows())
    for name, atom, addr in (('g_b128_cas_shared', 'atom.shared.cas.b128', '{b32_0}'),
                             ('g_b128_cas_shared_cta', 'atom.relaxed.cta.shared::cta.cas.b128',
                              '{b32_0}'),
                             ('g_b128_cas_shared_cluster',
                              'atom.acq_rel.cluster.shared::cluster.cas.b128', '{b32_0}'),
                             ('g_b128_cas_shared_gen', 'atom.cas.b128', '{b64_0}')):
        form(name, atom + (' (shared, generic)' if addr == '{b64_0}' else ''), ['b64'] * 4,
             ['u64'] * 6,
             cas_in + sh + ['cvt.u64.u32 {b64_0}, {b32_0};', 'cvta.shared.u64 {b64_0}, {b64_0};',
                            'st.shared.b128 [{b32_0}], %q1;',
                            '%s %%q2, [%s], %%q3, %%q4;' % (atom, addr),
                            'ld.shared.b128 %q5, [{b32_0}];'] + after,
             cas_rows(), scratch=[('b32', 1), ('b64', 1)],
             decls=['.shared .align 16 .b8 sbuf[512];'])
    # a literal compare value (ptxas 13.0 fails, exit status -11, on a
    # literal new value)
    form('g_b128_cas_imm', 'atom.global.cas.b128 d, [a], imm, c', ['b64'] * 4, ['u64'] * 2,
         [pack, 'st.global.b128 [{out}], %q1;', 'mov.b128 %q4, {{{s1}, {s0}}};',
          'atom.global.cas.b128 %q2, [{out}], 1, %q4;',
          'ld.global.b128 %q5, [{out}];'] + after, pair_rows())
    form('g_b128_cas_sink', 'atom.global.cas.b128 _, [a], b, c', ['b64'] * 2, ['u64'] * 2,
         [pack, 'st.global.b128 [{out}], %q1;', 'mov.b128 %q4, {{{s1}, {s0}}};',
          'atom.global.cas.b128 _, [{out}], %q1, %q4;', 'ld.global.b128 %q5, [{out}];',
          'mov.b128 {{{d0}, {d1}}}, %q5;'], pair_rows())
    # atom.exch: memory (s0, s1), new (s2, s3)
    ex_in = ['mov.b128 %q1, {{{s0}, {s1}}};', 'mov.b128 %q4, {{{s2}, {s3}}};']
    ex_rows = [PAIRS[i % 16] + PAIRS[(i * 3 + 1) % 16] for i in range(32)]
    for name, atom, hint in (('g_b128_exch_global', 'atom.global.exch.b128', False),
                             ('g_b128_exch_generic', 'atom.exch.b128', False),
                             ('g_b128_exch_hint', 'atom.global.exch.L2::cache_hint.b128', True)):
        form(name, atom, ['b64'] * 4, ['u64'] * 4,
             ex_in + ([pol] if hint else []) +
             ['st.global.b128 [{out}], %q1;',
              '%s %%q2, [{out}], %%q4%s;' % (atom, ', {b64_0}' if hint else ''),
              'ld.global.b128 %q5, [{out}];'] + after, ex_rows, scratch=[('b64', 1)])
    form('g_b128_exch_shared', 'atom.release.cta.shared.exch.b128', ['b64'] * 4, ['u64'] * 4,
         ex_in + sh + ['st.shared.b128 [{b32_0}], %q1;',
                       'atom.release.cta.shared.exch.b128 %q2, [{b32_0}], %q4;',
                       'ld.shared.b128 %q5, [{b32_0}];'] + after,
         ex_rows, scratch=[('b32', 1)], decls=['.shared .align 16 .b8 sbuf[512];'])
    for name, lit in (('g_b128_exch_imm', '7'), ('g_b128_exch_imm_m1', '-1')):
        form(name, 'atom.global.exch.b128 d, [a], %s' % lit, ['b64'] * 4, ['u64'] * 2,
             [pack, 'st.global.b128 [{out}], %q1;',
              'atom.global.exch.b128 %%q2, [{out}], %s;' % lit,
              'ld.global.b128 %q5, [{out}];'] + after, pair_rows())
    # contention: every thread of the CTA adds 1 + (tid & 3) to one counter
    # three times by compare-and-swap loops; thread 0 sets it from its row
    # first; all read it after a barrier (the same total, its carry)
    for name, where in (('g_b128_cas_count_shared', 'shared'), ('g_b128_cas_count_global', 'global')):
        if where == 'shared':
            setup = ['mov.u32 {b32_0}, cnt;', 'cvt.u64.u32 {b64_0}, {b32_0};',
                     'cvta.shared.u64 {b64_0}, {b64_0};']
            decls = ['.shared .align 16 .b8 cnt[16];']
            atom = 'atom.relaxed.cta.shared.cas.b128 %q3, [{b32_0}], %q1, %q2;'
        else:
            setup = ['mov.u32 {b32_0}, %ctaid.x;', 'mov.u64 {b64_0}, gcnt;',
                     'mad.wide.u32 {b64_0}, {b32_0}, 16, {b64_0};']
            decls = []
            atom = 'atom.relaxed.gpu.global.cas.b128 %q3, [{b64_0}], %q1, %q2;'
        body = setup + [
            'setp.eq.u32 {pred_0}, {tid}, 0;', 'mov.b128 %q1, {{{s0}, {s1}}};',
            '@{pred_0} st.b128 [{b64_0}], %q1;', 'bar.sync 0;',
            'and.b32 {b32_1}, {tid}, 3;', 'add.u32 {b32_1}, {b32_1}, 1;',
            'cvt.u64.u32 {b64_1}, {b32_1};', 'mov.u32 {b32_2}, 0;',
            '$Lagain: ld.relaxed.cta.b128 %q1, [{b64_0}];',
            '$Lretry: mov.b128 {{{b64_2}, {b64_3}}}, %q1;',
            'add.u64 {b64_4}, {b64_2}, {b64_1};', 'setp.lt.u64 {pred_1}, {b64_4}, {b64_2};',
            'selp.u64 {b64_5}, 1, 0, {pred_1};', 'add.u64 {b64_5}, {b64_5}, {b64_3};',
            'mov.b128 %q2, {{{b64_4}, {b64_5}}};', atom,
            'mov.b128 {{{b64_4}, {b64_5}}}, %q3;',
            'setp.ne.u64 {pred_1}, {b64_4}, {b64_2};',
            'setp.ne.or.u64 {pred_1}, {b64_5}, {b64_3}, {pred_1};',
            'mov.b128 %q1, %q3;', '@{pred_1} bra $Lretry;',
            'add.u32 {b32_2}, {b32_2}, 1;', 'setp.lt.u32 {pred_1}, {b32_2}, 3;',
            '@{pred_1} bra $Lagain;', 'bar.sync 0;',
            'ld.relaxed.cta.b128 %q2, [{b64_0}];', unpack]
        add(Form(m, 'atom', 'atom.cas.b128 loop: 32 threads increment one %s counter' % where,
                 ['b64'] * 2, ['u64'] * 2, body,
                 rows=[(0xffffffffffffff80 + i, 0x7ffffffffffffffe + i) if i % 32 == 0 else (0, 0)
                       for i in range(64)],
                 scratch=[('b32', 3), ('b64', 6), ('pred', 2)], decls=Q + decls,
                 globals_=['.global .align 16 .b8 gcnt[64];'] if where == 'global' else [],
                 name=name))
