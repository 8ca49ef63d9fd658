# SPDX-License-Identifier: MIT
#
# ptxgen's table, continued: immediate operands (what compilers emit
# most: a constant shift, bit field, selector or addend) and control flow
# (predication, branches, branch tables, calls in both conventions,
# exit, the stack).

import ptxgen_values as V


def imm_forms(add, Form, mangle):
    m = 'imm'
    bin_ops = [('add', ['s32', 'u64']), ('sub', ['s32', 's64']), ('mul.lo', ['s32', 'u64']),
               ('mul.hi', ['u32', 's32']), ('mul.wide', ['s32', 'u32']),
               ('and', ['b32', 'b64']), ('or', ['b32']), ('xor', ['b32', 'b64']),
               ('min', ['s32', 'u32']), ('max', ['s32', 'u64']), ('div', ['u32', 's32', 's64']),
               ('rem', ['u32', 's32', 'u64']), ('shl', ['b32', 'b64']),
               ('shr', ['u32', 's32', 's64', 'u64'])]
    wide = {'s32': 'b64', 'u32': 'b64'}
    for o, types in bin_ops:
        for t in types:
            for imm in (1, -1, 7, 31, 0x7fffffff):
                if o in ('div', 'rem') and imm in (-1,) and t.startswith('u'):
                    continue
                d = wide[t] if o == 'mul.wide' else V.regclass(t)
                f = '%s.%s' % (o, t)
                add(Form(m, o.split('.')[0], '%s (immediate %d)' % (f, imm), [d], [t],
                         '%s {d0}, {s0}, %d;' % (f, imm), name=mangle('%s_i%d' % (f, imm))
                         .replace('-', 'm')))
    for t in ('s32', 'u32', 'f32', 'u64', 'f64'):
        for c in (('eq', 'lt') if t[0] != 'f' else ('lt', 'gtu')):
            imm = {'f32': '0f3F800000', 'f64': '0d3FF0000000000000'}.get(t, '5')
            f = 'setp.%s.%s' % (c, t)
            add(Form(m, 'setp', '%s (immediate %s)' % (f, imm), ['pred'], [t],
                     '%s {d0}, {s0}, %s;' % (f, imm), name=mangle(f + '_imm')))
    for t, x in (('f32', '0f40000000'), ('f64', '0d4000000000000000')):
        for o in ('add.rn', 'mul.rn', 'fma.rn', 'min', 'max', 'div.rn'):
            f = '%s.%s' % (o, t)
            args = '{s0}, %s' % x if o != 'fma.rn' else '{s0}, %s, {s0}' % x
            add(Form(m, o.split('.')[0], '%s (immediate)' % f, [V.regclass(t)], [t],
                     '%s {d0}, %s;' % (f, args), name=mangle(f + '_imm')))
    # past the width too: PTX clamps pos and len to 0..255, and ptxas folds
    # immediate ones its own way (an H200: bfe.s32 at 60, 8 is all ones)
    for t in ('u32', 's32', 'u64', 's64'):
        w = 64 if t[1:] == '64' else 32
        for pos, ln in ((0, 8), (8, 8), (24, 8), (31, 1), (4, 0), (16, 16), (60, 8),
                        (w, 1), (w, 4), (w + 1, 8), (w + 8, 0), (255, 8), (w - 1, 255),
                        (0, 255), (w // 2, w + 1)):
            f = 'bfe.%s' % t
            add(Form(m, 'bfe', '%s (immediate %d, %d)' % (f, pos, ln), [V.regclass(t)], [t],
                     '%s {d0}, {s0}, %d, %d;' % (f, pos, ln),
                     name=mangle('%s_%d_%d' % (f, pos, ln))))
    for t in ('b32', 'b64'):
        for pos, ln in ((0, 8), (8, 8), (24, 8), (31, 1), (4, 0), (16, 16)):
            f = 'bfi.%s' % t
            add(Form(m, 'bfi', '%s (immediate %d, %d)' % (f, pos, ln), [V.regclass(t)], [t, t],
                     '%s {d0}, {s0}, {s1}, %d, %d;' % (f, pos, ln),
                     name=mangle('%s_%d_%d' % (f, pos, ln))))
    for sel in (0x3210, 0x0123, 0x5410, 0x7632, 0x4444, 0x8888, 0x1707, 0x9f9f):
        f = 'prmt.b32'
        add(Form(m, 'prmt', '%s (selector 0x%04x)' % (f, sel), ['b32'], ['b32', 'b32'],
                 '%s {d0}, {s0}, {s1}, 0x%04x;' % (f, sel), name='g_prmt_b32_%04x' % sel))
    for d in ('l', 'r'):
        for mode in ('clamp', 'wrap'):
            for n in (0, 1, 16, 31, 32, 40):
                f = 'shf.%s.%s.b32' % (d, mode)
                add(Form(m, 'shf', '%s (immediate %d)' % (f, n), ['b32'], ['b32', 'b32'],
                         '%s {d0}, {s0}, {s1}, %d;' % (f, n), name=mangle('%s_%d' % (f, n))))
    for t in ('b32', 'b64', 'f32', 's32'):
        f = 'selp.' + t
        imm = {'f32': '0f3F800000, 0fBF800000'}.get(t, '7, -1')
        add(Form(m, 'selp', '%s (immediates)' % f, [V.regclass(t)], ['pred'],
                 '%s {d0}, %s, {s0};' % (f, imm), name=mangle(f + '_imm')))


def ctrl_forms(add, Form, mangle):
    m = 'ctrl'
    pr = [(v, i & 1) for i, v in enumerate(V.U32[:32])]
    add(Form(m, '@p', '@p add.s32 (predicated)', ['b32'], ['b32', 'pred'],
             ['mov.b32 {d0}, 99;', '@{s1} add.s32 {d0}, {s0}, 1;'], rows=pr,
             name='g_pred_add'))
    add(Form(m, '@p', '@!p add.s32 (predicated)', ['b32'], ['b32', 'pred'],
             ['mov.b32 {d0}, 99;', '@!{s1} add.s32 {d0}, {s0}, 1;'], rows=pr,
             name='g_pred_not_add'))
    add(Form(m, 'bra', 'bra (divergent)', ['b32'], ['b32', 'pred'],
             ['mov.b32 {d0}, {s0};', '@{s1} bra $Lskip;', 'add.s32 {d0}, {d0}, 1000;',
              '$Lskip:', 'add.s32 {d0}, {d0}, 1;'], rows=pr, name='g_bra_divergent'))
    add(Form(m, 'bra', 'bra.uni (a loop)', ['b32'], ['b32'],
             ['mov.b32 {d0}, 0;', 'and.b32 {b32_0}, {s0}, 15;', '$Lloop:',
              'setp.eq.u32 {pred_0}, {b32_0}, 0;', '@{pred_0} bra.uni $Ldone;',
              'add.s32 {d0}, {d0}, {b32_0};', 'sub.s32 {b32_0}, {b32_0}, 1;', 'bra.uni $Lloop;',
              '$Ldone:'], scratch=[('b32', 1), ('pred', 1)], name='g_bra_uni_loop'))
    add(Form(m, 'brx.idx', 'brx.idx (a branch table)', ['b32'], ['b32'],
             ['and.b32 {b32_0}, {s0}, 3;',
              '$Ltab: .branchtargets $L0, $L1, $L2, $L3;',
              'brx.idx {b32_0}, $Ltab;',
              '$L0: mov.b32 {d0}, 10; bra.uni $Lend;',
              '$L1: mov.b32 {d0}, 11; bra.uni $Lend;',
              '$L2: mov.b32 {d0}, 12; bra.uni $Lend;',
              '$L3: mov.b32 {d0}, 13;',
              '$Lend:'], scratch=[('b32', 1)], name='g_brx_idx'))
    add(Form(m, 'exit', 'exit (odd lanes, before their store)', ['b32'], ['b32'],
             ['and.b32 {b32_0}, {tid}, 1;', 'setp.ne.u32 {pred_0}, {b32_0}, 0;',
              '@{pred_0} exit;', 'add.s32 {d0}, {s0}, 5;'], scratch=[('b32', 1), ('pred', 1)],
             name='g_exit_odd'))
    # calls: a .func taking and returning registers, and nvcc's .param way
    for k, (ret, params, body, call) in enumerate([
        ('(.reg .b32 r)', '(.reg .b32 a, .reg .b32 b)', 'mad.lo.s32 r, a, b, 3;',
         'call ({d0}), F, ({s0}, {s1});'),
        ('(.param .b32 r)', '(.param .b32 a, .param .b32 b)',
         '.reg .b32 x, y; ld.param.b32 x, [a]; ld.param.b32 y, [b]; '
         'mad.lo.s32 x, x, y, 3; st.param.b32 [r], x;',
         '{{ .param .b32 pa; .param .b32 pb; .param .b32 pr; st.param.b32 [pa], {s0}; '
         'st.param.b32 [pb], {s1}; call (pr), F, (pa, pb); ld.param.b32 {d0}, [pr]; }}'),
        ('(.param .align 4 .b8 r[12])', '(.param .align 4 .b8 a[12])',
         '.reg .b32 x, y, z; ld.param.b32 x, [a]; ld.param.b32 y, [a+4]; '
         'ld.param.b32 z, [a+8]; add.s32 x, x, y; xor.b32 z, z, x; st.param.b32 [r], z; '
         'st.param.b32 [r+4], y; st.param.b32 [r+8], x;',
         '{{ .param .align 4 .b8 pa[12]; .param .align 4 .b8 pr[12]; '
         'st.param.b32 [pa], {s0}; st.param.b32 [pa+4], {s1}; st.param.b32 [pa+8], {s0}; '
         'call (pr), F, (pa); ld.param.b32 {d0}, [pr]; ld.param.b32 {d1}, [pr+4]; '
         'ld.param.b32 {d2}, [pr+8]; }}')]):
        fname = 'g_fn_call%d' % k
        what = ['call (registers)', 'call (.param, nvcc\'s way)',
                'call (a 12-byte structure by value)'][k]
        add(Form(m, 'call', what, ['b32'] * (3 if k == 2 else 1), ['s32', 's32'],
                 call.replace('F', fname), name='g_call%d' % k,
                 globals_=['.func %s %s%s' % (ret, fname, params), '{', '\t' + body, '\tret;',
                           '}']))
    # recursion and a noinline function called twice
    add(Form(m, 'call', 'call (recursion)', ['b32'], ['b32'],
             ['and.b32 {b32_0}, {s0}, 15;', 'call ({d0}), g_fn_fact, ({b32_0});'],
             scratch=[('b32', 1)], name='g_call_recursive',
             globals_=['.func (.reg .b32 r) g_fn_fact(.reg .b32 n)', '{',
                       '\t.reg .pred p; .reg .b32 t;', '\tsetp.le.u32 p, n, 1;',
                       '\tmov.b32 r, 1;', '\t@p ret;', '\tsub.s32 t, n, 1;',
                       '\tcall (t), g_fn_fact, (t);', '\tmul.lo.s32 r, t, n;', '\tret;', '}']))
    add(Form(m, 'call', 'call.uni (twice)', ['b32'], ['b32'],
             ['call.uni ({b32_0}), g_fn_twice, ({s0});', 'call.uni ({d0}), g_fn_twice, ({b32_0});'],
             scratch=[('b32', 1)], name='g_call_uni_twice',
             globals_=['.func (.reg .b32 r) g_fn_twice(.reg .b32 a)', '{',
                       '\tshl.b32 r, a, 1;', '\tadd.s32 r, r, 1;', '\tret;', '}']))
    # through a function pointer with a prototype
    add(Form(m, 'call', 'call through a register (.callprototype)', ['b32'], ['b32'],
             ['mov.u64 {b64_0}, g_fn_ind;',
              '$Lproto: .callprototype (.param .b32 _) _ (.param .b32 _);',
              '{{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], {s0}; '
              'call (pr), {b64_0}, (pa), $Lproto; ld.param.b32 {d0}, [pr]; }}'],
             scratch=[('b64', 1)], name='g_call_indirect',
             globals_=['.func (.param .b32 r) g_fn_ind(.param .b32 a)', '{',
                       '\t.reg .b32 x; ld.param.b32 x, [a]; not.b32 x, x; st.param.b32 [r], x;',
                       '\tret;', '}']))
    # the stack
    for sp in ('', '.local'):
        add(Form(m, 'alloca', 'alloca%s.u64 + st/ld' % sp, ['b32'], ['b32'],
                 ['stacksave.u64 {b64_1};', 'alloca%s.u64 {b64_0}, 16, 8;' % sp,
                  'st%s.b32 [{b64_0}+4], {s0};' % sp, 'ld%s.b32 {d0}, [{b64_0}+4];' % sp,
                  'stackrestore.u64 {b64_1};'], scratch=[('b64', 2)],
                 name='g_alloca' + sp.replace('.', '_')))


def sync_forms(add, Form, mangle):
    """Barriers with results, mbarriers, asynchronous copies, cache hints,
    address conversions that come back where they started, and the
    cluster's shared window (a cluster of one CTA)."""
    m = 'sync'
    prows = [(i % 3 == 0,) for i in range(64)]
    for f, d in (('bar.red.popc.u32 {d0}, 0, {s0}', 'b32'),
                 ('bar.red.and.pred {d0}, 0, {s0}', 'pred'),
                 ('bar.red.or.pred {d0}, 0, {s0}', 'pred'),
                 ('bar.red.popc.u32 {d0}, 1, 32, {s0}', 'b32'),
                 ('barrier.red.popc.u32 {d0}, 0, {s0}', 'b32'),
                 ('barrier.red.or.pred {d0}, 0, !{s0}', 'pred'),
                 ('bar.red.popc.u32 {d0}, {b32_0}, {b32_1}, {s0}', 'b32'),
                 ('bar.red.popc.u32 {d0}, {b32_0}, {s0}', 'b32')):
        form = f.split(' ')[0] + (' (barrier, count in registers)' if '{b32_1}' in f else
                                  ' (barrier in a register)' if '{b32_0}' in f else
                                  ' (count)' if '32,' in f else ' (negated)' if '!' in f else '')
        add(Form(m, f.split('.')[0], form, [d], ['pred'],
                 ['mov.b32 {b32_0}, 2;', 'mov.b32 {b32_1}, 32;', f + ';'],
                 scratch=[('b32', 2)], rows=[(int(p),) for p, in prows],
                 name=mangle(form.replace(' ', '_'))))
    for f in ('bar.sync 1, 32', 'barrier.sync 2, 32', 'bar.sync {b32_0}', 'bar.sync {b32_0}, {b32_1}',
              'barrier.sync.aligned 3, 32', 'bar.arrive 4, 64; bar.sync 4, 64'):
        add(Form(m, 'bar', f.replace('{b32_0}', 'r').replace('{b32_1}', 'n'), ['b32'], ['b32'],
                 ['mov.b32 {b32_0}, 5;', 'mov.b32 {b32_1}, 32;', f + ';', 'mov.b32 {d0}, {s0};'],
                 scratch=[('b32', 2)],
                 name=mangle('sync_' + f.replace('{b32_0}', 'r').replace('{b32_1}', 'n')
                             .replace(',', '').replace(';', '').replace(' ', '_'))))
    # mbarrier: init to the block's 32 threads, every thread arrives, the
    # phase completes; and with a transaction count
    mb = ['mov.u32 {b32_0}, mbar;', 'setp.eq.u32 {pred_0}, {tid}, 0;',
          '@{pred_0} mbarrier.init.shared::cta.b64 [{b32_0}], 32;', 'bar.sync 0;']
    for ai, arrive in enumerate(('mbarrier.arrive.shared::cta.b64 {b64_0}, [{b32_0}];',
                   'mbarrier.arrive.release.cta.shared::cta.b64 {b64_0}, [{b32_0}];',
                   'mbarrier.arrive.expect_tx.shared::cta.b64 {b64_0}, [{b32_0}], 0;',
                   'mbarrier.arrive_drop.shared::cta.b64 {b64_0}, [{b32_0}];')):
        for wi, wait in enumerate(('mbarrier.test_wait.shared::cta.b64 {d0}, [{b32_0}], {b64_0};',
                     'mbarrier.try_wait.shared::cta.b64 {d0}, [{b32_0}], {b64_0};',
                     'mbarrier.try_wait.parity.shared::cta.b64 {d0}, [{b32_0}], 0;',
                     'mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 {d0}, '
                     '[{b32_0}], 0;')):
            form = '%s + %s' % (arrive.split(' ')[0], wait.split(' ')[0])
            add(Form(m, 'mbarrier', form, ['pred', 'b32'], ['b32'],
                     mb + [arrive, 'bar.sync 0;', wait, 'mov.b32 {d1}, {s0};'],
                     decls=['.shared .align 8 .b64 mbar;'],
                     scratch=[('b32', 1), ('b64', 1), ('pred', 1)], rows=[(i,) for i in range(32)],
                     name='g_mbarrier_%d_%d' % (ai, wi)))
    add(Form(m, 'mbarrier', 'mbarrier.expect_tx + complete_tx + arrive', ['pred'], [],
             mb + ['@{pred_0} mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{b32_0}], 64;',
                   'bar.sync 0;', 'mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [{b32_0}], 2;',
                   'mbarrier.arrive.shared::cta.b64 {b64_0}, [{b32_0}];', 'bar.sync 0;',
                   'mbarrier.test_wait.parity.shared::cta.b64 {d0}, [{b32_0}], 0;'],
             decls=['.shared .align 8 .b64 mbar;'], scratch=[('b32', 1), ('b64', 1), ('pred', 1)],
             rows=[()] * 32, name='g_mb_tx'))
    # cp.async: 4, 8 and 16 bytes from this row's input into shared memory
    for cop, n in (('ca', 4), ('ca', 8), ('ca', 16), ('cg', 16)):
        w = n // 4
        add(Form(m, 'cp.async', 'cp.async.%s.shared.global (%d bytes) + wait_group' % (cop, n),
                 ['b32'] * w, ['b32'] * w,
                 ['mov.u32 {b32_0}, buf;', 'mad.lo.u32 {b32_0}, {tid}, 16, {b32_0};',
                  'cp.async.%s.shared.global [{b32_0}], [{in}], %d;' % (cop, n),
                  'cp.async.commit_group;', 'cp.async.wait_group 0;'] +
                 ['ld.shared.b32 {d%d}, [{b32_0}+%d];' % (i, 4 * i) for i in range(w)],
                 decls=['.shared .align 16 .b8 buf[512];'], scratch=[('b32', 1)],
                 name='g_cp_async_%s_%d' % (cop, n)))
    add(Form(m, 'cp.async', 'cp.async.ca.shared.global (src-size 2) + wait_all', ['b32'],
             ['b32'], ['mov.u32 {b32_0}, buf;', 'mad.lo.u32 {b32_0}, {tid}, 16, {b32_0};',
                       'cp.async.ca.shared.global [{b32_0}], [{in}], 4, 2;', 'cp.async.wait_all;',
                       'ld.shared.b32 {d0}, [{b32_0}];'],
             decls=['.shared .align 16 .b8 buf[512];'], scratch=[('b32', 1)],
             name='g_cp_async_srcsize'))
    # cp.async with an ignore-src predicate (true: zeros, the source not
    # read), an .L2::cache_hint policy, or both; the buffer holds -1 first
    pol = 'createpolicy.fractional.L2::evict_last.b64 {b64_0}, 1.0;'
    for name, cop, n, tail, p in (
            ('g_cp_async_ignsrc_ca_4', 'ca', 4, ', {pred_0}', 'and.b32 {b32_1}, {s0}, 1;'),
            ('g_cp_async_ignsrc_ca_16', 'ca', 16, ', {pred_0}', 'and.b32 {b32_1}, {tid}, 1;'),
            ('g_cp_async_ignsrc_cg_hint', 'cg', 16, ', {pred_0}, {b64_0}',
             'and.b32 {b32_1}, {tid}, 2;'),
            ('g_cp_async_hint_ca_8', 'ca', 8, ', {b64_0}', None),
            ('g_cp_async_srcsize_hint', 'ca', 16, ', 5, {b64_0}', None)):
        w = n // 4
        hint = '.L2::cache_hint' if '{b64_0}' in tail else ''
        body = ['mov.u32 {b32_0}, buf;', 'mad.lo.u32 {b32_0}, {tid}, 16, {b32_0};',
                'st.shared.v4.b32 [{b32_0}], {{-1, -1, -1, -1}};', pol]
        if p:
            body += [p, 'setp.ne.u32 {pred_0}, {b32_1}, 0;']
        body += ['cp.async.%s.shared.global%s [{b32_0}], [{in}], %d%s;' % (cop, hint, n, tail),
                 'cp.async.commit_group;', 'cp.async.wait_group 0;']
        body += ['ld.shared.b32 {d%d}, [{b32_0}+%d];' % (i, 4 * i) for i in range(4)]
        add(Form(m, 'cp.async', 'cp.async.%s.shared.global%s (%d bytes%s)' %
                 (cop, hint, n, ', ignore-src' if p else (', src-size 5' if '5' in tail else '')),
                 ['b32'] * 4, ['b32'] * w, body,
                 decls=['.shared .align 16 .b8 buf[512];'],
                 scratch=[('b32', 2), ('b64', 1), ('pred', 1)], name=name))
    # the bulk copy of the whole input (256 bytes per CTA) with complete_tx
    add(Form(m, 'cp.async.bulk', 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes',
             ['b32', 'pred'], ['b64'],
             ['mov.u32 {b32_0}, mbar;', 'mov.u32 {b32_1}, buf;', 'setp.eq.u32 {pred_0}, {tid}, 0;',
              '@{pred_0} mbarrier.init.shared::cta.b64 [{b32_0}], 1;', 'bar.sync 0;',
              'sub.s64 {b64_1}, {in}, 0;', 'mul.wide.u32 {b64_2}, {tid}, 8;',
              'sub.s64 {b64_1}, {b64_1}, {b64_2};',
              '@{pred_0} mbarrier.arrive.expect_tx.shared::cta.b64 {b64_0}, [{b32_0}], 256;',
              '@{pred_0} cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes '
              '[{b32_1}], [{b64_1}], 256, [{b32_0}];',
              '$Lw: mbarrier.try_wait.parity.shared::cta.b64 {d1}, [{b32_0}], 0;',
              '@!{d1} bra $Lw;',
              'mad.lo.u32 {b32_1}, {tid}, 8, {b32_1};', 'ld.shared.b32 {d0}, [{b32_1}+4];'],
             decls=['.shared .align 8 .b64 mbar;', '.shared .align 128 .b8 buf[256];'],
             scratch=[('b32', 2), ('b64', 3), ('pred', 1)], name='g_cp_async_bulk'))
    # ldu, and loads and stores with an L2 cache policy
    for t, n in (('b32', 1), ('b64', 1), ('b32', 2), ('b32', 4), ('f32', 1)):
        v = '.v%d' % n if n > 1 else ''
        f = 'ldu.global%s.%s' % (v, t)
        ds = ', '.join('{d%d}' % i for i in range(n))
        add(Form(m, 'ldu', f, [V.regclass(t)] * n, [t] * n,
                 '%s %s, [{in}];' % (f, '{{%s}}' % ds if n > 1 else ds)))
    pol = 'createpolicy.fractional.L2::evict_last.b64 {b64_0}, 1.0;'
    for f, body in (('ld.global.L2::cache_hint.b32', 'ld.global.L2::cache_hint.b32 {d0}, [{in}], {b64_0};'),
                    ('st.global.L2::cache_hint.b32', 'st.global.L2::cache_hint.b32 [{out}], {s0}, {b64_0};'),
                    ('ld.global.nc.L1::evict_last.L2::cache_hint.b32',
                     'ld.global.nc.L1::evict_last.L2::cache_hint.b32 {d0}, [{in}], {b64_0};'),
                    ('atom.global.L2::cache_hint.add.u32',
                     'atom.global.L2::cache_hint.add.u32 {d0}, [{in}], 1, {b64_0};')):
        add(Form(m, f.split('.')[0], f + ' (createpolicy)', ['b32'], ['b32'], [pol, body],
                 scratch=[('b64', 1)], stores=not f.startswith('st'),
                 name=mangle(f.replace('L2::cache_hint', 'hint').replace('L1::', ''))))
    # conversions of addresses that come back where they started
    # (a word of the shared buffer per thread: one word for all would be a
    # race, PTX-undefined, whose winner the GPU and vGPU pick differently)
    for sp in ('shared', 'local'):
        decl = '.%s .align 8 .b8 buf[%d];' % (sp, 256 if sp == 'shared' else 8)
        slot = ['mad.wide.u32 {b64_0}, {tid}, 4, {b64_0};'] if sp == 'shared' else []
        add(Form(m, 'cvta', 'cvta.%s + isspacep.%s + cvta.to.%s + st/ld' % (sp, sp, sp),
                 ['b32', 'pred', 'pred'], ['b32'],
                 ['mov.u64 {b64_0}, buf;'] + slot + ['cvta.%s.u64 {b64_1}, {b64_0};' % sp,
                  'isspacep.%s {d1}, {b64_1};' % sp, 'isspacep.global {d2}, {b64_1};',
                  'st.b32 [{b64_1}], {s0};', 'cvta.to.%s.u64 {b64_2}, {b64_1};' % sp,
                  'ld.%s.b32 {d0}, [{b64_2}];' % sp],
                 decls=[decl], scratch=[('b64', 3)], name='g_cvta_' + sp))
    # the same through the cluster's shared window (a cluster of one):
    # buf's slot (a shared::cta address is one of the window's) and mapa's
    # address of it in rank 0, to a generic address and back
    for name, how in (('g_cvta_shared_cluster', []),
                      ('g_cvta_shared_cluster_mapa', ['cvt.u32.u64 {b32_0}, {b64_0};',
                                                      'mapa.shared::cluster.u32 {b32_0}, {b32_0}, 0;',
                                                      'cvt.u64.u32 {b64_0}, {b32_0};'])):
        add(Form(m, 'cvta', 'cvta.shared::cluster + isspacep.shared::cluster + '
                 'cvta.to.shared::cluster + st/ld%s' % (' (mapa)' if how else ''),
                 ['b32', 'pred', 'pred'], ['b32'],
                 ['mov.u64 {b64_0}, buf;', 'mad.wide.u32 {b64_0}, {tid}, 4, {b64_0};'] + how +
                 ['cvta.shared::cluster.u64 {b64_1}, {b64_0};',
                  'isspacep.shared::cluster {d1}, {b64_1};', 'isspacep.global {d2}, {b64_1};',
                  'st.b32 [{b64_1}], {s0};', 'cvta.to.shared::cluster.u64 {b64_2}, {b64_1};',
                  'ld.shared::cluster.b32 {d0}, [{b64_2}];'],
                 decls=['.shared .align 8 .b8 buf[256];'], scratch=[('b64', 3), ('b32', 1)],
                 name=name, dirs=['.explicitcluster', '.reqnctapercluster 1, 1, 1']))
    # the cluster's shared window with a cluster of one CTA
    add(Form(m, 'mapa', 'mapa.shared::cluster + st/ld.shared::cluster + getctarank',
             ['b32', 'b32'], ['b32'],
             ['mov.u32 {b32_0}, buf;', 'mad.lo.u32 {b32_0}, {tid}, 4, {b32_0};',
              'mapa.shared::cluster.u32 {b32_1}, {b32_0}, 0;',
              'st.shared::cluster.b32 [{b32_1}], {s0};', 'ld.shared::cta.b32 {d0}, [{b32_0}];',
              'getctarank.shared::cluster.u32 {d1}, {b32_1};'],
             decls=['.shared .align 8 .b8 buf[256];'], scratch=[('b32', 2)], name='g_mapa'))
    add(Form(m, 'atom', 'atom.shared::cluster.add.u32 (through mapa)', ['b32', 'b32'],
             ['u32', 'u32'],
             ['mov.u32 {b32_0}, buf;', 'mad.lo.u32 {b32_0}, {tid}, 4, {b32_0};',
              'st.shared.b32 [{b32_0}], {s0};', 'mapa.shared::cluster.u32 {b32_1}, {b32_0}, 0;',
              'atom.shared::cluster.add.u32 {d0}, [{b32_1}], {s1};',
              'ld.shared.b32 {d1}, [{b32_0}];'],
             decls=['.shared .align 8 .b8 buf[256];'], scratch=[('b32', 2)],
             name='g_atom_cluster_add'))
    add(Form(m, 'movmatrix', 'movmatrix.sync.aligned.m8n8.trans.b16', ['b32'], ['b32'],
             'movmatrix.sync.aligned.m8n8.trans.b16 {d0}, {s0};',
             rows=[(0x00010000 * (2 * i + 1) + 2 * i,) for i in range(32)]))


def async_forms(add, Form, mangle):
    """More of the asynchronous family: cp.async's mbarrier arrive, bulk
    stores and reductions from shared memory, st.async, red.async and the
    bulk reductions and copies from shared memory into this CTA's own
    shared memory through the cluster window (a kernel launched as a
    cluster of one), and the L2 prefetch."""
    m = 'async'
    head = ['mov.u32 {b32_0}, mbar;', 'mov.u32 {b32_1}, buf;', 'setp.eq.u32 {pred_0}, {tid}, 0;',
            'mad.lo.u32 {b32_2}, {tid}, 4, {b32_1};']
    decls = ['.shared .align 8 .b64 mbar;', '.shared .align 128 .b8 buf[128];']
    sc = [('b32', 4), ('b64', 3), ('pred', 1)]
    for noinc in ('', '.noinc'):
        add(Form(m, 'cp.async', 'cp.async.mbarrier.arrive%s.shared.b64' % noinc, ['b32', 'pred'],
                 ['b32'], head + ['@{pred_0} mbarrier.init.shared::cta.b64 [{b32_0}], %d;'
                                  % (64 if noinc else 32), 'bar.sync 0;',
                                  'cp.async.ca.shared.global [{b32_2}], [{in}], 4;',
                                  'cp.async.mbarrier.arrive%s.shared.b64 [{b32_0}];' % noinc,
                                  'mbarrier.arrive.shared::cta.b64 {b64_0}, [{b32_0}];',
                                  '$Lw: mbarrier.try_wait.parity.shared::cta.b64 {d1}, [{b32_0}], 0;',
                                  '@!{d1} bra $Lw;', 'ld.shared.b32 {d0}, [{b32_2}];'],
                 decls=decls, scratch=sc, name='g_cp_async_mbar' + noinc.replace('.', '_')))
    # this CTA's rows of `in` into shared memory, then out to `out` in bulk
    # (a store, and add/min/xor reductions onto what `out` holds: zeros)
    for what in ('cp.async.bulk.global.shared::cta.bulk_group',
                 'cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32',
                 'cp.reduce.async.bulk.global.shared::cta.bulk_group.min.u32',
                 'cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.b32'):
        add(Form(m, what.split('.global')[0], what, ['b32'], ['b32'],
                 head + ['ld.global.b32 {b32_3}, [{in}];', 'st.shared.b32 [{b32_2}], {b32_3};',
                         'fence.proxy.async.shared::cta;', 'bar.sync 0;',
                         'mul.wide.u32 {b64_1}, {tid}, 4;', 'sub.s64 {b64_2}, {out}, {b64_1};',
                         '@{pred_0} %s [{b64_2}], [{b32_1}], 128;' % what,
                         '@{pred_0} cp.async.bulk.commit_group;',
                         '@{pred_0} cp.async.bulk.wait_group 0;'],
                 decls=decls, scratch=sc, stores=False,
                 name=mangle('bulk_' + what.split('bulk_group')[-1] if 'reduce' in what
                             else 'bulk_store')))
    bulk_half_forms(add, Form, mangle, head, decls, sc)
    add(Form(m, 'cp.async.bulk', 'cp.async.bulk.prefetch.L2.global', ['b32'], ['b32'],
             ['mul.wide.u32 {b64_0}, {tid}, 4;', 'sub.s64 {b64_0}, {in}, {b64_0};',
              'cp.async.bulk.prefetch.L2.global [{b64_0}], 128;', 'ld.global.b32 {d0}, [{in}];'],
             scratch=[('b64', 1)], name='g_bulk_prefetch'))
    # st.async / red.async to this CTA through the cluster window
    for what, v in (('st.async.shared::cluster.mbarrier::complete_tx::bytes.b32', 4),
                    ('st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32', 8),
                    ('red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32',
                     4),
                    ('red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.inc.u32',
                     4)):
        val = '{{{s0}, {s0}}}' if v == 8 else '{s0}'
        add(Form(m, what.split('.')[0] + '.async', what, ['b32', 'pred'], ['b32'],
                 head + ['mad.lo.u32 {b32_2}, {tid}, 8, {b32_1};',
                         'st.shared.v2.b32 [{b32_2}], {{%s, %s}};' % ('{tid}', '{tid}'),
                         '@{pred_0} mbarrier.init.shared::cta.b64 [{b32_0}], 1;', 'bar.sync 0;',
                         'mapa.shared::cluster.u32 {b32_3}, {b32_2}, 0;',
                         'mapa.shared::cluster.u32 {b32_1}, {b32_0}, 0;',
                         '@{pred_0} mbarrier.arrive.expect_tx.shared::cluster.b64 _, [{b32_1}], %d;'
                         % (32 * v),
                         'bar.sync 0;',
                         '%s [{b32_3}], %s, [{b32_1}];' % (what, val),
                         '$Lw: mbarrier.try_wait.parity.shared::cta.b64 {d1}, [{b32_0}], 0;',
                         '@!{d1} bra $Lw;', 'ld.shared.b32 {d0}, [{b32_2}];'],
                 decls=['.shared .align 8 .b64 mbar;', '.shared .align 128 .b8 buf[256];'],
                 scratch=sc, name=mangle(what.split('::bytes')[0][:9] + what.split('bytes')[1]),
                 # launched as a cluster (of one CTA): without one the GPU
                 # raises an illegal instruction at st.async/red.async
                 dirs=['.explicitcluster', '.reqnctapercluster 1, 1, 1']))
    # cp.reduce.async.bulk / cp.async.bulk from this CTA's shared memory
    # into its own through the cluster window (a cluster of one): row i
    # puts s0 in slot i of src and s1 in slot i of dst; thread 0 expects
    # the bytes on the mbarrier and reduces (copies) all 32 slots; every
    # thread waits and reads its slot of dst
    for op, t in (('add', 'u32'), ('add', 's32'), ('add', 'u64'), ('min', 'u32'),
                  ('min', 's32'), ('max', 'u32'), ('max', 's32'), ('inc', 'u32'),
                  ('dec', 'u32'), ('and', 'b32'), ('or', 'b32'), ('xor', 'b32'),
                  ('and', 'b64'), ('min', 'u64'), ('add', 's64'), ('copy', 'b32')):
        w = 8 if t.endswith('64') else 4
        what = ('cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes'
                if op == 'copy' else
                'cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes'
                '.%s.%s' % (op, t))
        add(Form(m, what.split('.shared')[0], what, ['b%d' % (8 * w), 'pred'],
                 [t] if op == 'copy' else [t, t],
                 ['mov.u32 {b32_0}, mbar;', 'setp.eq.u32 {pred_0}, {tid}, 0;',
                  'mov.u32 {b32_1}, sbuf;', 'mov.u32 {b32_2}, dbuf;',
                  'mad.lo.u32 {b32_3}, {tid}, %d, {b32_1};' % w,
                  'mad.lo.u32 {b32_4}, {tid}, %d, {b32_2};' % w,
                  'st.shared.b%d [{b32_3}], {s0};' % (8 * w),
                  'st.shared.b%d [{b32_4}], %s;' % (8 * w, '0' if op == 'copy' else '{s1}'),
                  '@{pred_0} mbarrier.init.shared::cta.b64 [{b32_0}], 1;',
                  'fence.proxy.async.shared::cta;', 'bar.sync 0;',
                  'mapa.shared::cluster.u32 {b32_5}, {b32_2}, 0;',
                  'mapa.shared::cluster.u32 {b32_6}, {b32_0}, 0;',
                  '@{pred_0} mbarrier.arrive.expect_tx.shared::cta.b64 _, [{b32_0}], %d;'
                  % (32 * w),
                  '@{pred_0} %s [{b32_5}], [{b32_1}], %d, [{b32_6}];' % (what, 32 * w),
                  '$Lw: mbarrier.try_wait.parity.shared::cta.b64 {d1}, [{b32_0}], 0;',
                  '@!{d1} bra $Lw;', 'ld.shared.b%d {d0}, [{b32_4}];' % (8 * w)],
                 decls=['.shared .align 8 .b64 mbar;', '.shared .align 16 .b8 sbuf[256];',
                        '.shared .align 16 .b8 dbuf[256];'],
                 scratch=[('b32', 7), ('pred', 1)],
                 name='g_bulk_cl_' + op + '_' + t,
                 dirs=['.explicitcluster', '.reqnctapercluster 1, 1, 1']))
    # the global address of a bulk store or reduction as [reg+imm] (this
    # CTA's rows of `out`) and [var] (a module variable of 128 bytes, read
    # back: one CTA, as every CTA would write the same variable)
    for what in ('cp.async.bulk.global.shared::cta.bulk_group',
                 'cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32'):
        kind = 'red' if 'reduce' in what else 'st'
        for addr in ('imm', 'var'):
            var = 'bulk_%s_buf' % kind
            dst, back = (('[{b64_2}+128]', []) if addr == 'imm' else
                         ('[%s]' % var, ['mov.u64 {b64_1}, %s;' % var,
                                         'mad.wide.u32 {b64_1}, {tid}, 4, {b64_1};',
                                         'ld.global.b32 {d0}, [{b64_1}];']))
            add(Form(m, what.split('.global')[0],
                     '%s %s' % (what, dst.replace('{b64_2}', 'reg')), ['b32'], ['b32'],
                     head + ['ld.global.b32 {b32_3}, [{in}];', 'st.shared.b32 [{b32_2}], {b32_3};',
                             'fence.proxy.async.shared::cta;', 'bar.sync 0;',
                             'mul.wide.u32 {b64_1}, {tid}, 4;', 'sub.s64 {b64_2}, {out}, {b64_1};',
                             'sub.s64 {b64_2}, {b64_2}, 128;',
                             '@{pred_0} %s %s, [{b32_1}], 128;' % (what, dst),
                             '@{pred_0} cp.async.bulk.commit_group;',
                             '@{pred_0} cp.async.bulk.wait_group 0;', 'bar.sync 0;'] + back,
                     decls=decls, scratch=sc, stores=addr == 'var',
                     rows=[(v,) for v in V.values('b32')[:32]] if addr == 'var' else None,
                     globals_=['.global .align 16 .b8 %s[128];' % var] if addr == 'var' else [],
                     name='g_bulk_%s_%s' % (kind, addr)))
    # tensormap.cp_fenceproxy: 128 bytes (the 32 rows' words) from shared
    # memory to a module variable, read back (one CTA)
    cpf = 'tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.%s.sync.aligned'
    for scope, dst, src in (('gpu', '[{b64_0}]', '[{b32_0}]'),
                            ('cta', '[tmap_gbuf_cta]', '[tmap_sbuf]')):
        add(Form(m, 'tensormap', (cpf % scope) + ' %s, %s' % (dst, src), ['b32'], ['b32'],
                 ['mov.u32 {b32_0}, tmap_sbuf;', 'mad.lo.u32 {b32_1}, {tid}, 4, {b32_0};',
                  'st.shared.b32 [{b32_1}], {s0};', 'bar.sync 0;',
                  'mov.u64 {b64_0}, tmap_gbuf_%s;' % scope,
                  (cpf % scope) + ' %s, %s, 128;' % (dst, src), 'bar.sync 0;',
                  'mad.wide.u32 {b64_1}, {tid}, 4, {b64_0};', 'ld.global.b32 {d0}, [{b64_1}];'],
                 decls=['.shared .align 128 .b8 tmap_sbuf[128];'],
                 scratch=[('b32', 2), ('b64', 2)], stores=True,
                 rows=[(v,) for v in V.values('b32')[:32]],
                 globals_=['.global .align 128 .b8 tmap_gbuf_%s[128];' % scope],
                 name='g_tensormap_cp_fenceproxy_' + scope))
    add(Form(m, 'mbarrier', 'mbarrier.pending_count.b64 (one arrival of 40)', ['b32'], [],
             ['mov.u32 {b32_0}, mbar;', 'setp.eq.u32 {pred_0}, {tid}, 0;', 'mov.b32 {d0}, 0;',
              '@{pred_0} mbarrier.init.shared::cta.b64 [{b32_0}], 40;', 'bar.sync 0;',
              '@{pred_0} mbarrier.arrive.shared::cta.b64 {b64_0}, [{b32_0}];',
              '@{pred_0} mbarrier.pending_count.b64 {d0}, {b64_0};'],
             decls=['.shared .align 8 .b64 mbar;'], scratch=[('b32', 1), ('b64', 1), ('pred', 1)],
             rows=[()] * 32, name='g_mb_pending_count'))


def bulk_half_forms(add, Form, mangle, head, decls, sc):
    """cp.reduce.async.bulk of .f16 and .bf16 (.min, .max, .add.noftz; with
    and without the cache hint): each row's memory word (two halves) stored
    to `out`, its operand word to shared memory, then one thread reduces the
    CTA's 128 bytes into `out`: every pair of the half edge values."""
    from ptxgen_table2 import half_pair_rows
    for t in ('f16', 'bf16'):
        for o in ('min', 'max', 'add.noftz'):
            for hint in ('', '.L2::cache_hint'):
                what = 'cp.reduce.async.bulk.global.shared::cta.bulk_group%s.%s.%s' % (hint, o, t)
                pol = ', {b64_0}' if hint else ''
                add(Form('async', 'cp.reduce.async.bulk', what, ['b32'], [t + 'x2', t + 'x2'],
                         head + ['st.global.b32 [{out}], {s0};', 'st.shared.b32 [{b32_2}], {s1};',
                                 'fence.proxy.async.global;', 'fence.proxy.async.shared::cta;',
                                 'bar.sync 0;'] +
                         (['createpolicy.fractional.L2::evict_last.b64 {b64_0}, 1.0;']
                          if hint else []) +
                         ['mul.wide.u32 {b64_1}, {tid}, 4;',
                                 'sub.s64 {b64_2}, {out}, {b64_1};',
                                 '@{pred_0} %s [{b64_2}], [{b32_1}], 128%s;' % (what, pol),
                                 '@{pred_0} cp.async.bulk.commit_group;',
                                 '@{pred_0} cp.async.bulk.wait_group 0;'],
                         decls=decls, scratch=sc, stores=False, rows=half_pair_rows(t, 2),
                         name=mangle('bulk_' + what.split('bulk_group')[-1])))


def more_forms(add, Form, op, mangle):
    imm_forms(add, Form, mangle)
    ctrl_forms(add, Form, mangle)
    sync_forms(add, Form, mangle)
    async_forms(add, Form, mangle)
