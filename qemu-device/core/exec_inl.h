/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the instruction files of the core share (exec.c, exec_f64.c): the
 * instruction-function macros, their x86-64-v3 clones, and the small
 * helpers their lane loops inline.
 */
#ifndef VGPU_EXEC_INL_H
#define VGPU_EXEC_INL_H

#include <string.h>

#include "core_priv.h"

/*
 * The lane loops vectorise; on x86-64 each instruction function here is
 * also built for x86-64-v3 (AVX2 and FMA: fmaf becomes one vfmadd instead
 * of a libm call per lane) and the loader picks the variant the CPU runs.
 * The helpers the bodies share are always inlined, so that they are
 * compiled for the clone's target too.  (Not exec_mem.c's: a clone's
 * symbols stay in its file, and memory lanes go through calls anyway.)
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) && \
	!defined(__SANITIZE_THREAD__) /* its resolvers run before TSan is up */
#define VGPU_SIMD __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define VGPU_SIMD
#endif

#define INL static inline __attribute__((always_inline))

#define EXEC(name)                                                             \
	VGPU_SIMD static enum vgpu_xres name(struct vgpu_cta *c,               \
					     struct vgpu_warp *w,              \
					     const struct vgpu_dinsn *d,       \
					     uint32_t em)

/*
 * exec_f64.c's instruction functions, for exec.c's table.  Not cloned for
 * x86-64-v3: a clone's resolver is made differently by gcc (in the
 * defining file, the other declarations plain) and clang (every
 * declaration with the attribute, the resolver NAME.ifunc), and clang 14
 * then computed DSETP wrongly; its lanes take a libm call for fma().
 */
VGPU_EXEC_PROTO(vgpu_exec_d2f);
VGPU_EXEC_PROTO(vgpu_exec_d2i);
VGPU_EXEC_PROTO(vgpu_exec_d2l);
VGPU_EXEC_PROTO(vgpu_exec_dadd);
VGPU_EXEC_PROTO(vgpu_exec_ddiv);
VGPU_EXEC_PROTO(vgpu_exec_dfma);
VGPU_EXEC_PROTO(vgpu_exec_dmnmx);
VGPU_EXEC_PROTO(vgpu_exec_dmul);
VGPU_EXEC_PROTO(vgpu_exec_drcp);
VGPU_EXEC_PROTO(vgpu_exec_dsetp);
VGPU_EXEC_PROTO(vgpu_exec_dsqrt);
VGPU_EXEC_PROTO(vgpu_exec_f2d);
VGPU_EXEC_PROTO(vgpu_exec_i2d);
VGPU_EXEC_PROTO(vgpu_exec_idiv64);
VGPU_EXEC_PROTO(vgpu_exec_irem64);
VGPU_EXEC_PROTO(vgpu_exec_l2d);

INL float f32(uint32_t v)
{
	float f;

	memcpy(&f, &v, sizeof(f));
	return f;
}

INL uint32_t u32(float f)
{
	uint32_t v;

	memcpy(&v, &f, sizeof(v));
	return v;
}

INL void set_pred(struct vgpu_warp *w, uint8_t pu, uint32_t em,
			    uint32_t val)
{
	if (pu != VGPU_PT)
		w->pred[pu] = (w->pred[pu] & ~em) | (val & em);
}

INL uint32_t combine(uint32_t m, uint32_t p, unsigned comb)
{
	switch (comb) {
	case VGPU_MOD_COMB_AND: return m & p;
	case VGPU_MOD_COMB_OR: return m | p;
	default: return m ^ p;
	}
}

#endif
