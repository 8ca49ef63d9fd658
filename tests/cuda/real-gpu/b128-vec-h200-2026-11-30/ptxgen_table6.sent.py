# SPDX-License-Identifier: MIT
# tests/ptx/gen/ptxgen_table6.py without comments, as sent to the H200 (README.md)
from ptxgen_table5 import pair_rows as P
def more_forms(add,Form):
 def f(n,l,d,s,b,r=None,**k):add(Form('b128w',l.split('.')[0],l,d,s,b,rows=r,decls=['.reg .b128 %q<6>;']+k.pop('decls',[]),name='g_b128w_'+n,**k))
 u=lambda q,d:'mov.b128 {{{d%d}, {d%d}}}, %%q%d;'%(d,d+1,q)
 pk=['mov.b128 %q1, {{{s0}, {s1}}};','mov.b128 %q2, {{{s1}, {s0}}};'];B=['b64'];U=['u64']*2
 for i in('s64.s32','u64.u32','s32.s32','u32.s32','s8.s32','u16.s32','sat.s8.s32','s16.u64','rn.f32.s32','f64.f32','rni.s64.f32','rzi.s32.f32','rn.f16.f32'):f('cvt_'+i.replace('.','_'),'cvt.%s q, a'%i,B*2,[i[-3:]],['cvt.%s %%q1, {s0};'%i,u(1,0)])
 f('cvt_f16x2_f32','cvt.rn.f16x2.f32 q, a, b',B*2,['f32']*2,['cvt.rn.f16x2.f32 %q1, {s0}, {s1};',u(1,0)])
 for i,d in(('u32.u64','b32'),('s32.s8','b32'),('rn.f32.s64','b32'),('rn.f64.s32','b64')):f('cvt_%s_q'%i.replace('.','_'),'cvt.%s d, q'%i,[d],U,pk+['cvt.%s {d0}, %%q1;'%i],P())
 f('cvt_s64_s16_qq','cvt.s64.s16 q, q',B*2,U,pk+['cvt.s64.s16 %q3, %q1;',u(3,0)],P())
 for n,i,k,q in(('ld_v2_b64','ld.global.v2.b64','u64',2),('ld_v2_s32','ld.global.v2.s32','u32',2),('ld_v4_s8','ld.global.v4.s8','u32',4),('ld_v4_u16','ld.global.v4.u16','u32',4),('ld_v2_f32','ld.global.nc.v2.f32','u32',2),('ldu_v2_s64','ldu.global.v2.s64','u64',2),('ld_v4_s32_sink','ld.global.v4.s32','u32',4)):
  e=['%%q%d'%(j+1)for j in range(q)]
  if n[-4:]=='sink':e[1::2]=['_','_']
  m=len([x for x in e if x!='_']);s=1 if n=='ld_v4_s8'else 2 if k=='u64'or q==2 or n[-3:]=='u16'else 4
  f(n,i+' {q, ...}',B*(2*m),[k]*s,['%s {{%s}}, [{in}];'%(i,', '.join(e))]+[u(j+1,2*j)for j in range(m)],P()if k=='u64'else None)
 for n,s,d,l in(('st_v2_b64','v2.b64 [{out}], {{%q1, %q2}}',2,'v2.b64 {{{d0}, {d1}}}'),('st_v4_b16','v4.b16 [{out}], {{%q1, %q2, %q2, %q1}}',1,'b64 {d0}'),('st_v4_b32_imm','v4.b32 [{out}], {{%q1, 7, -1, %q2}}',2,'v2.b64 {{{d0}, {d1}}}')):f(n,'st.global.'+s.split(' [')[0]+' [a], {q, ...}',B*d,U,pk+['st.global.%s;'%s,'ld.global.%s, [{out}];'%l],P())
 f('st_ld_shared_v2_s32','st.shared.v2.s32 ld.shared.v2.s32 {q, r}',B*4,U,pk+['mov.u32 {b32_0}, sbuf;','mad.lo.u32 {b32_0}, {tid}, 8, {b32_0};','st.shared.v2.s32 [{b32_0}], {{%q1, %q2}};','ld.shared.v2.s32 {{%q3, %q4}}, [{b32_0}];',u(3,0),u(4,2)],P(),scratch=[('b32',1)],decls=['.shared .align 16 .b8 sbuf[256];'])
