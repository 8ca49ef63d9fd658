# SPDX-License-Identifier: MIT
#
# ptxgen's table, continued (issue 31): the address forms of a non-bulk
# cp.async, immediates among a vector operand's source elements and sinks
# among its destination elements, the no-op hints (applypriority,
# discard, prefetch.tensormap), all in module `forms`; and
# tensormap.replace of each field a tile map has on sm_90a, observed by
# the tensor copy through the edited map, in module `tmap`.



def form_of(line):
    """The form's description: its PTX line, operands named by class."""
    d = dict(tid='r', b32_0='r', b32_1='r', b64_0='rd', pred_0='p', d0='d', d1='d', d2='d',
             d3='d', s0='a', out='rd', **{'in': 'rd'})
    return line.format(**d).rstrip(';').replace('@p ', '').replace('K_g', 'var')


def cp_async_rows(add, Form):
    """cp.async through [%rd+imm] (negative too), [var], [var+imm] and to
    [%r+imm], [%rd+imm] (a 64-bit shared address) and [var+imm]: row t's
    16 shared bytes (-1 first) after the copy, from its 32 input bytes or
    from the kernel's 32-byte module variable K_g."""
    init = ', '.join('0x%08x' % (0x01020304 * (i + 1) ^ 0x80808080) for i in range(8))
    for name, w, body in (
            ('g_cpa_rd_imm', 1, ['cp.async.ca.shared.global [{b32_0}], [{in}+4], 4;']),
            ('g_cpa_rd_imm_cg16', 4, ['cp.async.cg.shared.global [{b32_0}+0], [{in}+16], 16;']),
            ('g_cpa_rd_neg', 2, ['add.s64 {b64_0}, {in}, 8;',
                                 'cp.async.ca.shared.global [{b32_0}], [{b64_0}+-8], 8;']),
            ('g_cpa_var', 4, ['cvt.u64.u32 {b64_0}, {b32_0};', 'sub.u64 {b64_0}, {b64_0}, 4;',
                              'cp.async.ca.shared.global [{b64_0}+4], [K_g], 16;']),
            ('g_cpa_var_imm', 2, ['cp.async.ca.shared.global [{b32_0}], [K_g+24], 8;']),
            ('g_cpa_var_imm_zfill', 2, ['and.b32 {b32_1}, {tid}, 7;',
                                        'cp.async.ca.shared.global [{b32_0}], [K_g+8], 8, {b32_1};']),
            ('g_cpa_rd_imm_ignsrc', 4,
             ['and.b32 {b32_1}, {tid}, 1;', 'setp.ne.u32 {pred_0}, {b32_1}, 0;',
              'cp.async.cg.shared.global [{b32_0}], [{in}+16], 16, {pred_0};']),
            ('g_cpa_dst_var_imm', 2, ['setp.eq.u32 {pred_0}, {tid}, 5;',
                                      '@{pred_0} cp.async.ca.shared.global [buf+84], [{in}+8], 4;'])):
        f = form_of(body[-1])
        body = [b.replace('K_g', name + '_g') for b in body]
        add(Form('forms', 'cp.async', f, ['b32'] * w, ['b32'] * 8,
                 ['mov.u32 {b32_0}, buf;', 'mad.lo.u32 {b32_0}, {tid}, 16, {b32_0};',
                  'st.shared.v4.b32 [{b32_0}], {{-1, -1, -1, -1}};', 'bar.sync 0;'] + body +
                 ['cp.async.commit_group;', 'cp.async.wait_group 0;', 'bar.sync 0;'] +
                 ['ld.shared.b32 {d%d}, [{b32_0}+%d];' % (i, 4 * i) for i in range(w)],
                 decls=['.shared .align 16 .b8 buf[512];'],
                 scratch=[('b32', 2), ('b64', 1), ('pred', 1)],
                 globals_=['.global .align 16 .b32 %s_g[8] = { %s };' % (name, init)],
                 rows=[tuple((0x9e3779b9 * (8 * r + i)) & 0xffffffff | 0x01010101
                             for i in range(8)) for r in range(32)], name=name))


def vector_rows(add, Form):
    """Immediates in vector sources (mov's pack, st, atom/red .v2/.v4)
    and `_` in vector destinations (mov's unpack, ld); a decimal
    literal (a double) in .f32 instructions."""
    for name, d, s, line in (
            ('g_vmov_b64_imm', ['b64'], ['b32'], 'mov.b64 {d0}, {{{s0}, 7}};'),
            ('g_vmov_b64_imm_lo', ['b64'], ['b32'], 'mov.b64 {d0}, {{-2, {s0}}};'),
            ('g_vmov_b32_imm16', ['b32'], ['b16'], 'mov.b32 {d0}, {{{s0}, -1}};'),
            ('g_vmov_b64_imm16x4', ['b64'], ['b16'], 'mov.b64 {d0}, {{1, {s0}, -2, 0x8000}};'),
            ('g_vmov_b64_f32imm', ['b64'], ['b32'], 'mov.b64 {d0}, {{0f3F800000, {s0}}};'),
            ('g_vmov_unpack_sink_hi', ['b32'], ['b64'], 'mov.b64 {{{d0}, _}}, {s0};'),
            ('g_vmov_unpack_sink_lo', ['b16'], ['b32'], 'mov.b32 {{_, {d0}}}, {s0};'),
            ('g_vmov_unpack_sink_x4', ['b16'], ['b64'], 'mov.b64 {{_, {d0}, _, _}}, {s0};'),
            ('g_vld_v4_sinks', ['b32', 'b32'], ['b32'] * 4,
             'ld.global.v4.u32 {{{d0}, _, {d1}, _}}, [{in}];'),
            ('g_vld_v2_sink', ['b64'], ['b64', 'b64'], 'ld.global.v2.u64 {{_, {d0}}}, [{in}];'),
            ('g_add_f32_decimal', ['b32'], ['f32'], 'add.f32 {d0}, {s0}, 2.5;'),
            ('g_fma_f32_decimal', ['b32'], ['f32'], 'fma.rn.f32 {d0}, {s0}, -0.75, 1e3;')):
        add(Form('forms', line.split('.')[0], form_of(line), d, s, line, name=name))
    # stores: the row of `out` written by the instruction itself
    for name, w, s, body in (
            ('g_vst_v2_f32_imm', 2, ['f32'], ['st.global.v2.f32 [{out}], {{1.5, {s0}}};']),
            ('g_vst_v4_b32_imm', 4, ['b32'],
             ['st.global.v4.b32 [{out}], {{{s0}, 0, -1, 0x3f800000}};']),
            ('g_vst_v4_b16_imm', 2, ['b16'], ['st.global.v4.b16 [{out}], {{{s0}, 1, -1, 0x8000}};']),
            ('g_vatom_v2_f32_imm', 4, ['f32'],
             ['st.global.v2.f32 [{out}], {{0f41200000, 0f41A00000}};',
              'atom.global.v2.f32.add {{{d2}, {d3}}}, [{out}], {{{s0}, 1.0}};',
              'st.global.v2.b32 [{out}+8], {{{d2}, {d3}}};']),
            ('g_vred_v4_f32_imm', 4, ['f32'],
             ['st.global.v4.f32 [{out}], {{0f3F800000, 0f40000000, 0f40400000, 0f40800000}};',
              'red.global.v4.f32.add [{out}], {{{s0}, 0f40000000, -0.5, 0f00000000}};'])):
        f = form_of(body[-1] if len(body) < 3 else body[1])
        add(Form('forms', f.split('.')[0], f, ['b32'] * w, s, body, stores=False, name=name))


def hint_rows(add, Form):
    """applypriority, discard: no effect on what the row reads or writes."""
    m = 'forms'
    add(Form(m, 'applypriority', 'applypriority.global.L2::evict_normal (then a load)',
             ['b32'], ['b32'], ['and.b64 {b64_0}, {in}, -128;',
                                'applypriority.global.L2::evict_normal [{b64_0}], 128;',
                                'applypriority.L2::evict_normal [{b64_0}], 128;',
                                'ld.global.b32 {d0}, [{in}];'],
             scratch=[('b64', 1)], name='g_applypriority'))
    # discard of this CTA's 128 bytes of `out` before every row stores
    # there (the lines' old data is indeterminate, not the new stores')
    add(Form(m, 'discard', 'discard.global.L2 (then the stores)', ['b32'], ['b32'],
             ['and.b64 {b64_0}, {out}, -128;', 'discard.global.L2 [{b64_0}], 128;',
              'discard.L2 [{b64_0}], 128;', 'bar.sync 0;', 'add.u32 {d0}, {s0}, 1;'],
             scratch=[('b64', 1)], name='g_discard'))


# the tensor: 16 rows of 16 words (32 with the global_stride row) (tmr_data), the map of the runner's
# (its bytes: the GPU's or vGPU's, over `in`) a 2-D .u32 one, dims 16 x
# 16, row stride 64 bytes, box 8 x 4, element strides 1; every row puts
# tmr_data's address in it first, then replaces FIELD; the box's words
# land in sbuf (-1 elsewhere), thread t reads word t
TMAP_ROWS = (
    # name, replaces, rank, coordinates, bytes the copy delivers
    ('g_tmr_global_address', [], 2, '{8, 2}', 128),
    ('g_tmr_box_dim', ['box_dim', '1, 2'], 2, '{8, 2}', 64),
    ('g_tmr_global_dim', ['global_dim', '0, 12'], 2, '{8, 2}', 128),
    ('g_tmr_global_stride', ['global_stride', '0, 128'], 2, '{0, 3}', 128),
    ('g_tmr_element_stride', ['element_stride', '1, 2'], 2, '{R, 1}', 64),
    ('g_tmr_elemtype', ['elemtype', '1'], 2, '{8, 2}', 64),
    ('g_tmr_rank', ['rank', '0'], 1, '{5}', 32),
    ('g_tmr_fill_mode', ['fill_mode', '0'], 2, '{12, 14}', 128),
)


def tmap_rows(add, Form):
    m = 'tmap'
    init = ', '.join('0x%x' % (0x10000 * i + 0x1234) for i in range(512))
    rep = '@{pred_0} tensormap.replace.tile.%s.shared::cta.b1024.%s [tmr_smap], %s;'
    cpf = ('tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu'
           '.sync.aligned [{b64_1}], [tmr_smap], 128;')
    for name, (field, args), rank, coords, nbytes in ((r[0], r[1] or (None, None), r[2],
                                                        r[3], r[4]) for r in TMAP_ROWS):
        body = ['setp.eq.u32 {pred_0}, {tid}, 0;', 'mov.u32 {b32_0}, tmr_smap;',
                'mad.lo.u32 {b32_1}, {tid}, 4, {b32_0};', 'st.shared.b32 [{b32_1}], {s0};',
                'mov.u32 {b32_2}, tmr_sbuf;', 'mad.lo.u32 {b32_1}, {tid}, 4, {b32_2};',
                'st.shared.b32 [{b32_1}], -1;', 'bar.sync 0;',
                'mov.u64 {b64_0}, %s_data;' % name,
                rep % ('global_address', 'b64', '{b64_0}')]
        if field:
            body.append(rep % (field, 'b64' if field == 'global_stride' else 'b32', args))
        coords = coords.replace('{', '{{').replace('}', '}}').replace('R', '{b32_3}')
        body += ['bar.sync 0;', 'mov.u64 {b64_1}, %s_map;' % name, cpf,
                 'fence.proxy.tensormap::generic.acquire.gpu [{b64_1}], 128;',
                 'prefetch.tensormap [{b64_1}];', 'mov.u32 {b32_3}, 8;',
                 'mov.u32 {b32_4}, tmr_mbar;',
                 '@{pred_0} mbarrier.init.shared::cta.b64 [{b32_4}], 1;',
                 'fence.proxy.async.shared::cta;', 'bar.sync 0;',
                 '@{pred_0} mbarrier.arrive.expect_tx.shared::cta.b64 {b64_2}, [{b32_4}], %d;'
                 % nbytes,
                 '@{pred_0} cp.async.bulk.tensor.%dd.shared::cluster.global.tile'
                 '.mbarrier::complete_tx::bytes [{b32_2}], [{b64_1}, %s], [{b32_4}];'
                 % (rank, coords),
                 # a bounded wait: a wrong byte count gives 0x7ead, not a hang
                 'mov.u32 {d0}, 0x7ead;', 'mov.u32 {b32_0}, 0;',
                 '$Lw: mbarrier.try_wait.parity.shared::cta.b64 {pred_1}, [{b32_4}], 0;',
                 '@{pred_1} bra $Ld;', 'add.u32 {b32_0}, {b32_0}, 1;',
                 'setp.lt.u32 {pred_1}, {b32_0}, 100000;', '@{pred_1} bra $Lw;', 'bra $Le;',
                 '$Ld: ld.shared.b32 {d0}, [{b32_1}];', '$Le:']
        add(Form(m, 'tensormap.replace',
                 'tensormap.replace.tile.%s (then a tensor copy)' % (field or 'global_address'),
                 ['b32'], ['b32'], body,
                 decls=['.shared .align 128 .b8 tmr_smap[128];',
                        '.shared .align 128 .b8 tmr_sbuf[128];', '.shared .align 8 .b64 tmr_mbar;'],
                 scratch=[('b32', 5), ('b64', 3), ('pred', 2)], rows=[(0,)] * 32,
                 globals_=['.global .align 128 .b32 %s_data[512] = { %s };' % (name, init),
                           '.global .align 128 .b8 %s_map[128];' % name], name=name))


def more_forms(add, Form):
    cp_async_rows(add, Form)
    vector_rows(add, Form)
    hint_rows(add, Form)
    tmap_rows(add, Form)
