// SPDX-License-Identifier: MIT
/*
 * The PTX front end's driver: parse, lower and allocate each .entry, then
 * print vGPU assembly (one .kernel per entry, its parameters at PTX's
 * offsets, its .shared variables) that the assembler (libvgpu/asm/) turns
 * into an object.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "vgpu_asm.h"

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *sb,
							    const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		size_t room = sb->cap - sb->n;

		va_start(ap, fmt);
		k = vsnprintf(sb->p ? sb->p + sb->n : NULL, sb->p ? room : 0, fmt, ap);
		va_end(ap);
		if (k < 0) {
			sb->oom = true;
			return;
		}
		if (sb->p && (size_t)k < room) {
			sb->n += (size_t)k;
			return;
		}
		{
			size_t ncap = (sb->cap ? 2 * sb->cap : 4096) + (size_t)k;
			char *np = realloc(sb->p, ncap);

			if (!np) {
				sb->oom = true;
				return;
			}
			sb->p = np;
			sb->cap = ncap;
		}
	}
}

/* A called function's frame (ptx_call.c): what its prologue saves. */
struct fn_frame {
	uint32_t size;		 /* bytes, a multiple of 16 */
	uint32_t save_off;	 /* where the saved registers start */
	bool gpr[234], pred[6]; /* saved */
};

static void print_op(struct sbuf *sb, const struct ptx_code *c, const struct ptx_vop *o,
		     const struct fn_frame *fr)
{
	if (fr && o->kind == PTX_V_TEXT && !strcmp(o->text, PTX_FRAME16)) {
		sb_printf(sb, "0x%x", fr->size + 16);
		return;
	}
	switch (o->kind) {
	case PTX_V_REG:
		sb_printf(sb, "R%d", c->vregs[o->v].phys + o->part);
		break;
	case PTX_V_PRED:
		sb_printf(sb, "%sP%d", o->neg ? "!" : "", c->vregs[o->v].phys);
		break;
	case PTX_V_MEM:
		if (o->v < 0)
			sb_printf(sb, "[RZ%s%s]", o->text[0] && o->text[0] != '-' ? "+" : "",
				  o->text);
		else
			sb_printf(sb, "[R%d%s%s]", c->vregs[o->v].phys,
				  o->text[0] && o->text[0] != '-' ? "+" : "", o->text);
		break;
	default:
		sb_printf(sb, "%s", o->text);
		break;
	}
}

/*
 * .param lines at PTX's offsets: each parameter at its own alignment (PTX
 * ISA 5.1.6.1; a scalar's is its size), in order.  A scalar is one line
 * of its size; an array parameter (.b8 x[N], a structure by value) is
 * consecutive slots, each the widest of 4, 2 and 1 bytes that its offset
 * allows and the array still holds; padding likewise, named padN_OFF.
 */
static void print_slots(struct sbuf *sb, const char *name, int i, uint32_t off, uint32_t end,
			bool first_named)
{
	for (uint32_t at = off; at < end;) {
		uint32_t sz = !(at % 4) && end - at >= 4 ? 4 : !(at % 2) && end - at >= 2 ? 2 : 1;

		if (first_named && at == off)
			sb_printf(sb, ".param %s %s%d\n", sz == 4 ? "u32" : sz == 2 ? "u16" : "u8",
				  name, i);
		else
			sb_printf(sb, ".param %s %s%d_%u\n", sz == 4 ? "u32" : sz == 2 ? "u16" : "u8",
				  name, i, at);
		at += sz;
	}
}

static int print_params(struct sbuf *sb, const struct ptx_func *f, struct ptx_diag *dg)
{
	uint32_t off = 0;

	for (int i = 0; i < f->nparams; i++) {
		const struct ptx_param *p = &f->params[i];
		uint32_t align = p->align ? p->align : 1, start;
		bool array = p->size > 8 || !strcmp(p->type, "b8") ||
			     (p->size != 1 && p->size != 2 && p->size != 4 && p->size != 8);

		if (align & (align - 1)) {
			ptx_error(dg, p->line, 1, "parameter '%s': alignment %u is not a power of two",
				  p->name, align);
			return -EINVAL;
		}
		start = (off + align - 1) & ~(align - 1);
		print_slots(sb, "pad", i, off, start, false);
		off = start;
		if (!array) {
			const char *t = p->size == 8 ? "u64" : p->size == 2 ? "u16" :
				       p->size == 1 ? "u8" : !strcmp(p->type, "f32") ? "f32" :
				       p->type[0] == 's' ? "s32" : "u32";

			sb_printf(sb, ".param %s arg%d\n", t, i);
		} else {
			print_slots(sb, "arg", i, off, off + p->size, true);
		}
		off += p->size;
	}
	return 0;
}

static void print_shared(struct sbuf *sb, const struct ptx_var *v, int index, const char *note)
{
	uint32_t align = v->align < 1 ? 1 : v->align;

	/* vGPU's .shared alignment is a power of two */
	while (align & (align - 1))
		align &= align - 1;
	sb_printf(sb, ".shared sh%d, %u, %u%s%s\n", index, v->size, align, note ? " ; // " : "",
		  note ? note : "");
}

/* Save or restore (@load) what the frame @fr keeps, at [R234]. */
static void print_saves(struct sbuf *sb, const struct fn_frame *fr, bool load)
{
	uint32_t off = fr->save_off;

	for (int r = 0; r < 234; r++, off += fr->gpr[r - 1] ? 4 : 0)
		if (fr->gpr[r])
			sb_printf(sb, load ? "        LDG.32 R%d, [R234+0x%x] ;\n" :
				  "        STG.32 [R234+0x%x], R%d ;\n", load ? r : (int)off,
				  load ? off : (uint32_t)r);
	for (int p = 0; p < 6; p++) {
		if (!fr->pred[p])
			continue;
		if (load)
			sb_printf(sb, "        LDG.32 R238, [R234+0x%x] ;\n"
				  "        ISETP.NE.U32 P%d, R238, 0x0 ;\n", off, p);
		else
			sb_printf(sb, "        SEL R238, RZ, 0x1, !P%d ;\n"
				  "        STG.32 [R234+0x%x], R238 ;\n", p, off);
		off += 4;
	}
}

static void print_code(struct sbuf *sb, const struct ptx_code *code, const struct fn_frame *fr)
{
	if (fr) {
		sb_printf(sb, "        SALLOC R234, 0x%x ;\n", fr->size);
		print_saves(sb, fr, false);
	}
	for (int i = 0; i < code->n; i++) {
		const struct ptx_vinsn *v = &code->insns[i];

		if (v->label[0]) {
			sb_printf(sb, "%s:\n", v->label);
			continue;
		}
		if (!strcmp(v->mnem, "MOV") && v->nops == 2 && v->ops[0].kind == PTX_V_REG &&
		    v->ops[1].kind == PTX_V_REG && v->ops[1].v >= 0 &&
		    code->vregs[v->ops[0].v].phys + v->ops[0].part ==
			    code->vregs[v->ops[1].v].phys + v->ops[1].part)
			continue; /* a self-move (regalloc coalesced the copy) */
		if (fr && !strcmp(v->mnem, "RET")) {
			print_saves(sb, fr, true);
			sb_printf(sb, "        SALLOC R234, -%u ;\n", fr->size);
		}
		sb_printf(sb, "        ");
		if (v->guard >= 0)
			sb_printf(sb, "@%sP%d ", v->guard_not ? "!" : "",
				  code->vregs[v->guard].phys);
		sb_printf(sb, "%s", v->mnem);
		for (int o = 0; o < v->nops; o++) {
			sb_printf(sb, o ? ", " : " ");
			print_op(sb, code, &v->ops[o], fr);
		}
		sb_printf(sb, " ; // line %d\n", v->line);
	}
}

/* Lower, clean up and allocate @f into @code (again in spill mode if needed). */
static int compile(const struct ptx_module *m, const struct ptx_func *f, struct ptx_diag *dg,
		   struct ptx_code *code, bool fn)
{
	int ret;

	code->spill_mode = false;
	code->fn_mode = fn;
	ret = ptx_lower(m, f, dg, code);
	if (!ret)
		ret = ptx_optimize(code);
	if (!ret)
		ret = ptx_regalloc(f, dg, code);
	if (ret == -ENOSPC) {
		/* out of registers: again, with a frame to spill to */
		ptx_code_free(code);
		code->spill_mode = true;
		code->fn_mode = fn;
		ret = ptx_lower(m, f, dg, code);
		if (!ret)
			ret = ptx_optimize(code);
		if (!ret)
			ret = ptx_regalloc(f, dg, code);
	}
	if (ret)
		ptx_code_free(code);
	return ret;
}

/* Function @k of the module as a called function: "F<k>:" and its code. */
static int emit_function(struct sbuf *sb, const struct ptx_module *m, int k,
			 const struct ptx_func *f, struct ptx_diag *dg)
{
	struct ptx_code code;
	struct fn_frame fr;
	uint32_t n = 0;
	int ret = compile(m, f, dg, &code, true);

	if (ret)
		return ret;
	memset(&fr, 0, sizeof(fr));
	for (int v = 0; v < code.nv; v++) {
		const struct ptx_vreg *r = &code.vregs[v];

		if (r->phys < 0)
			continue;
		if (!r->width && r->phys < 6)
			fr.pred[r->phys] = true;
		for (int j = 0; j < r->width; j++)
			if (r->phys + j < 234)
				fr.gpr[r->phys + j] = true;
	}
	for (int r = 0; r < 234; r++)
		n += fr.gpr[r];
	for (int p = 0; p < 6; p++)
		n += fr.pred[p];
	/* the saved registers after the .local variables and the spill slots
	 * (R239.. of the spill code are never live across a CALL: not saved) */
	fr.save_off = code.spill_mode && code.frame > code.frame_locals ? code.frame :
									 code.frame_locals;
	fr.size = (fr.save_off + 4 * n + 15) & ~15u;
	sb_printf(sb, "F%d: ; // %s\n", k, f->name);
	print_code(sb, &code, &fr);
	ptx_code_free(&code);
	return 0;
}

/* The index of the function (with a body) called @name, or -1. */
static int find_func(const struct ptx_module *m, const char *name)
{
	for (int k = 0; k < m->nfuncs; k++)
		if (!m->funcs[k].entry && !m->funcs[k].decl && !strcmp(m->funcs[k].name, name))
			return k;
	return -1;
}

/*
 * Does @f still call (a real call, ptx_call.c)?  Marks in @want the
 * functions it calls and those whose address it takes (mov %rd, f).
 */
static bool real_calls(const struct ptx_module *m, const struct ptx_func *f, bool *want)
{
	bool any = false;

	for (int i = 0; i < f->ninsns; i++) {
		const struct ptx_insn *in = &f->insns[i];
		any |= ptx_uses_stack(in);
		for (int o = 0; o < in->nops; o++) {
			int k = in->ops[o].kind == PTX_O_SYM ? find_func(m, in->ops[o].sym) : -1;

			if (k >= 0)
				want[k] = true;
		}
	}
	return any;
}

/* The index of the module variable called @name, or -1. */
static int find_global(const struct ptx_module *m, const char *name)
{
	for (int i = 0; i < m->nglobals; i++)
		if (!strcmp(m->globals[i].name, name))
			return i;
	return -1;
}

/* Why the address @r in @g's initial value cannot be: a located error. */
static int aref_error(const struct ptx_module *m, const struct ptx_gvar *g,
		      const struct ptx_aref *r, struct ptx_diag *dg)
{
	const char *what = "error: the address of an undefined symbol";

	for (int k = 0; k < m->nfuncs; k++)
		if (!strcmp(m->funcs[k].name, r->name))
			what = m->funcs[k].entry ? "the address of the kernel" :
			       m->funcs[k].decl	 ? "the address of the external function" :
						   "a byte or an offset of the address of the function";
	for (int k = 0; k < m->nshared; k++)
		if (!strcmp(m->shared[k].name, r->name))
			what = "the address of the .shared variable";
	if (!strncmp(what, "error: ", 7))
		ptx_error(dg, r->line, r->col, "%s '%s' in '%s'", what + 7, r->name, g->name);
	else
		ptx_error(dg, r->line, r->col, "unsupported construct: %s '%s' in '%s'", what,
			  r->name, g->name);
	return -EINVAL;
}

/*
 * Addresses in module data (PTX ISA 5.4.4 initialisers, ptx_aref), after
 * the functions are printed: a function's as .addr (with @want, marks
 * those functions in it instead), a .global/.const variable's as
 * .dataaddr, a relocation the loader resolves.
 */
static int print_arefs(struct sbuf *sb, const struct ptx_module *m, struct ptx_diag *dg,
		       bool *want)
{
	for (int i = 0; i < m->nglobals; i++)
		for (int j = 0; j < m->globals[i].narefs; j++) {
			const struct ptx_aref *r = &m->globals[i].arefs[j];
			int k = find_func(m, r->name), v = find_global(m, r->name);

			if (v >= 0 && !want) {
				sb_printf(sb, ".dataaddr g%d+%u, g%d%+lld", i, r->off, v,
					  (long long)r->addend);
				if (r->byte >= 0)
					sb_printf(sb, ", %d", r->byte);
				sb_printf(sb, "\n");
			} else if (v < 0 && k >= 0 && r->byte < 0 && !r->addend) {
				if (want)
					want[k] = true;
				else
					sb_printf(sb, ".addr g%d+%u, F%d\n", i, r->off, k);
			} else if (v < 0) {
				return aref_error(m, &m->globals[i], r, dg);
			}
		}
	return 0;
}

/*
 * Reserved shared memory (PTX ISA 10.37 %reserved_smem_offset_*): the
 * region NVIDIA's driver keeps at the start of each CTA's shared memory
 * on sm_80+, which cooperative groups' multi-warp tiles use for their
 * barriers and scratch (cooperative_groups/details/memory.h wants at
 * least 288 bytes at %reserved_smem_offset_1).  A kernel that reads one
 * gets a static .shared variable "$reserved_smem" of PTX_RESERVED_SMEM
 * bytes: _0 and _begin name its start, _1 its second half, _end its end,
 * _cap its size (ptx_lower.c).
 */
bool ptx_shared_used(const struct ptx_module *m, const struct ptx_func *f, int i)
{
	const char *name = m->shared[i].name;

	for (int k = 0; k < f->nlocal; k++)
		if (!strcmp(f->local[k].name, "$stack"))
			return true;
	for (int k = 0; k < f->ninsns; k++)
		for (int j = 0; j < f->insns[k].nops; j++) {
			const struct ptx_operand *o = &f->insns[k].ops[j];

			if ((o->kind == PTX_O_SYM || o->kind == PTX_O_MEM) && o->sym[0] &&
			    !strcmp(o->sym, name))
				return true;
		}
	return false;
}

static bool uses_reserved_smem(const struct ptx_func *f)
{
	for (int i = 0; i < f->ninsns; i++)
		for (int j = 0; j < f->insns[i].nops; j++)
			if (f->insns[i].ops[j].kind == PTX_O_SYM &&
			    !strncmp(f->insns[i].ops[j].sym, "%reserved_smem_offset_", 22))
				return true;
	return false;
}

static int add_reserved_smem(struct ptx_func *f)
{
	struct ptx_var *a = realloc(f->shared, (size_t)(f->nshared + 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	f->shared = a;
	memset(&a[f->nshared], 0, sizeof(*a));
	snprintf(a[f->nshared].name, sizeof(a[f->nshared].name), "$reserved_smem");
	a[f->nshared].size = PTX_RESERVED_SMEM;
	a[f->nshared].align = 16;
	f->nshared++;
	return 0;
}

/*
 * A module that declares __assertfail gets the message of a failed
 * assert as a module variable, PTX_ASSERT_FORMAT_VAR, the format of the
 * printf records pl_assertfail writes.
 */
static int add_assert_format(struct ptx_module *m)
{
	static const char fmt[] = PTX_ASSERT_FORMAT;
	struct ptx_gvar *a;
	bool decl = false;

	for (int i = 0; i < m->nfuncs; i++)
		decl |= m->funcs[i].decl && !strcmp(m->funcs[i].name, "__assertfail");
	if (!decl)
		return 0;
	a = realloc(m->globals, (size_t)(m->nglobals + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	m->globals = a;
	a += m->nglobals;
	memset(a, 0, sizeof(*a));
	a->init = malloc(sizeof(fmt));
	if (!a->init)
		return -ENOMEM;
	memcpy(a->init, fmt, sizeof(fmt));
	snprintf(a->name, sizeof(a->name), "%s", PTX_ASSERT_FORMAT_VAR);
	a->size = sizeof(fmt);
	a->align = 1;
	a->offset = m->data_size;
	a->line = 1;
	m->nglobals++;
	m->data_size += a->size;
	return 0;
}

/* A kernel that calls: its stack, the .local "$stack" (ptx_call.c). */
static int add_stack(struct ptx_func *f)
{
	struct ptx_var *a = realloc(f->local, (size_t)(f->nlocal + 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	f->local = a;
	memset(&a[f->nlocal], 0, sizeof(*a));
	snprintf(a[f->nlocal].name, sizeof(a[f->nlocal].name), "$stack");
	a[f->nlocal].size = PTX_STACK_BYTES;
	a[f->nlocal].align = 16;
	f->nlocal++;
	return 0;
}

void ptx_kernel_obj_name(const char *name, char out[32])
{
	size_t n = strlen(name);

	if (n <= 31)
		memcpy(out, name, n + 1);
	else
		snprintf(out, 32, "%.20s_h%08x", name, (unsigned)ptx_name_hash(name, n));
}

static int emit_kernel(struct sbuf *sb, const struct ptx_module *m,
		       const struct ptx_func *f, struct ptx_diag *dg)
{
	struct ptx_code code;
	char oname[32];
	bool prints;
	int ret;

	ptx_kernel_obj_name(f->name, oname);
	ret = compile(m, f, dg, &code, false);
	if (ret)
		return ret;
	if (f->full && (f->full_len != strlen(oname) || strncmp(f->full, oname, f->full_len)))
		/* a shortened name: the PTX name for libcuda (cu_library.c) */
		sb_printf(sb, ".kernel %s // %.*s\n", oname, (int)f->full_len, f->full);
	else
		sb_printf(sb, ".kernel %s\n", oname);
	/* for libcuda, whose launches take the cluster shape from it */
	if (f->attrs.reqnctapercluster[0])
		sb_printf(sb, "// .reqnctapercluster %u, %u, %u\n", f->attrs.reqnctapercluster[0],
			  f->attrs.reqnctapercluster[1], f->attrs.reqnctapercluster[2]);
	ret = print_params(sb, f, dg);
	if (ret) {
		ptx_code_free(&code);
		return ret;
	}
	if (code.uses_params) /* a parameter's address: the launch fills in pself */
		sb_printf(sb, ".param params pself\n");
	if (code.uses_envregs) /* %envreg0..31: the launch fills in penv */
		sb_printf(sb, ".param envregs penv\n");
	if (m->nglobals) /* module data: the launch fills in gdata */
		sb_printf(sb, ".param data gdata\n");
	/* and the printf buffer, for the kernel's printf and assert and for
	 * those of the functions it calls (ptx_call.c) */
	prints = code.calls && ptx_module_prints(m);
	for (int i = 0; i < f->ninsns && !prints; i++)
		prints = !strcmp(f->insns[i].op, "vprintf") || !strcmp(f->insns[i].op, "assertfail");
	if (prints)
		sb_printf(sb, ".param printf pbuf\n");
	if (code.frame) /* local memory: the launch fills in lmem */
		sb_printf(sb, ".param local lmem\n.local %u\n", code.frame);
	for (int i = 0; i < m->nshared; i++)
		if (ptx_shared_used(m, f, i))
			print_shared(sb, &m->shared[i], i, NULL);
	for (int i = 0; i < f->nshared; i++)
		print_shared(sb, &f->shared[i], m->nshared + i, NULL);
	if (m->ndyn) {
		/* extern .shared: the dynamic shared memory (launch smem_bytes)
		 * starts here, after every static variable; 16 bytes mark it */
		struct ptx_var dyn = { .size = 16, .align = 16 };

		for (int i = 0; i < m->ndyn; i++)
			if (m->dyn[i].align > dyn.align)
				dyn.align = m->dyn[i].align;
		/* the note: libcuda leaves the marker out of the static size
		 * it reports (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, as ptxas's) */
		print_shared(sb, &dyn, m->nshared + f->nshared, "dynamic");
	}
	print_code(sb, &code, NULL);
	/* a kernel that falls off its end returns */
	sb_printf(sb, "        EXIT ;\n");
	ptx_code_free(&code);
	return 0;
}

/*
 * The generated text must assemble; where it does not (an immediate out
 * of the instruction's range: bar.sync 80, a bulk size not a multiple of
 * 16), say so at the PTX line the instruction came from ("// line N").
 */
static int check_assembles(const char *text, struct ptx_diag *dg, struct vgpu_object *keep)
{
	static const char marker[] = " ; // line ";
	struct vgpu_object obj;
	char *alog = malloc(16384);
	const char *p;
	int ret;

	if (!alog)
		return -ENOMEM;
	alog[0] = '\0';
	ret = vgpu_assemble(text, strlen(text), "generated", &obj, alog, 16384);
	if (!ret) {
		if (keep)
			*keep = obj;
		else
			vgpu_object_fini(&obj);
		free(alog);
		return 0;
	}
	for (p = alog; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		const char *msg = strstr(p, ": error: "), *eol = strchr(p, '\n'), *at = text;
		int gline = 0, pline = 1;
		size_t mlen;

		if (!msg || (eol && msg > eol) || sscanf(p, "generated:%d:", &gline) != 1)
			continue;
		msg += 9;
		mlen = eol ? (size_t)(eol - msg) : strlen(msg);
		for (int l = 1; l < gline && at; l++)
			at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
		if (at) {
			const char *m = strstr(at, marker), *e = strchr(at, '\n');

			if (m && (!e || m < e))
				pline = atoi(m + sizeof(marker) - 1);
		}
		ptx_error(dg, pline, 1, "%.*s", (int)mlen, msg);
	}
	if (!dg->errors)
		ptx_error(dg, 1, 1, "the generated assembly does not assemble");
	free(alog);
	return ret;
}

/* Module variables: .global gI at the parser's offsets, .bytes for their values. */
static int print_globals(struct sbuf *sb, const struct ptx_module *m, struct ptx_diag *dg)
{
	for (int i = 0; i < m->nglobals; i++) {
		const struct ptx_gvar *g = &m->globals[i];

		if (g->align > 4096 || (g->align & (g->align - 1))) {
			ptx_error(dg, g->line, 1,
				  "unsupported construct: alignment %u of '%s'", g->align, g->name);
			return -EINVAL;
		}
		sb_printf(sb, ".global g%d, %u, %u ; // %s\n", i, g->size, g->align, g->name);
		if (!strcmp(g->name, PTX_HEAP_VAR))
			sb_printf(sb, ".heapaddr g%d\n", i);
		for (uint32_t o = 0; g->init && o < g->size; o += 16) {
			uint32_t n = g->size - o < 16 ? g->size - o : 16;
			bool zero = true;

			for (uint32_t j = 0; j < n; j++)
				zero &= !g->init[o + j];
			if (zero)
				continue;
			sb_printf(sb, ".bytes g%d+%u", i, o);
			for (uint32_t j = 0; j < n; j++)
				sb_printf(sb, ", %u", g->init[o + j]);
			sb_printf(sb, "\n");
		}
	}
	return 0;
}

int ptx_to_vgs(const char *src, size_t len, const char *file, char **out,
	       char *log, size_t loglen)
{
	return ptx_to_vgs_attrs(src, len, file, out, log, loglen, NULL, NULL, NULL);
}

void ptx_kernel_attrs_free(struct ptx_kernel_attrs *attrs, int n)
{
	for (int i = 0; attrs && i < n; i++)
		free(attrs[i].full);
	free(attrs);
}

int ptx_to_vgs_attrs(const char *src, size_t len, const char *file, char **out,
		     char *log, size_t loglen, struct ptx_kernel_attrs **attrs,
		     int *nattrs, struct vgpu_object *obj)
{
	struct ptx_diag dg = { .file = file ? file : "<ptx>", .log = log, .loglen = loglen };
	struct ptx_module m;
	struct sbuf sb = { 0 }, ksb = { 0 };
	struct ptx_kernel_attrs *ka = NULL;
	char *text;
	int ret, kernels = 0;
	bool *want = NULL, *done = NULL, any_fn = false;

	*out = NULL;
	if (attrs) {
		*attrs = NULL;
		*nattrs = 0;
	}
	if (log && loglen)
		log[0] = '\0';
	ret = ptx_parse_heap(src, len, &dg, &m, &text);
	if (!ret && !m.target[0])
		ptx_error(&dg, 1, 1, "missing .target"), ret = -EINVAL;
	else if (!ret && strncmp(m.target, "sm_", 3))
		ptx_error(&dg, 1, 1, "unsupported .target %s", m.target), ret = -EINVAL;
	if (!ret)
		ret = add_assert_format(&m);
	if (!ret)
		ret = print_globals(&sb, &m, &dg);
	if (!ret) {
		want = calloc((size_t)m.nfuncs + 1, sizeof(bool));
		done = calloc((size_t)m.nfuncs + 1, sizeof(bool));
		if (!want || !done)
			ret = -ENOMEM;
	}
	if (!ret)
		ret = print_arefs(NULL, &m, &dg, want);
	for (int i = 0; !ret && i < m.nfuncs; i++) {
		if (!m.funcs[i].entry)
			continue;
		{
			struct ptx_func flat;

			ret = ptx_inline(&m, &m.funcs[i], &dg, &flat);
			if (!ret)
				ret = ptx_layout_barriers(&flat);
			if (!ret && real_calls(&m, &flat, want))
				ret = add_stack(&flat);
			if (!ret && uses_reserved_smem(&flat))
				ret = add_reserved_smem(&flat);
			if (!ret) {
				flat.attrs = m.funcs[i].attrs;
				ret = emit_kernel(&ksb, &m, &flat, &dg);
			}
			ptx_func_free(&flat);
		}
		kernels++;
	}
	/* the functions that real calls name (ptx_call.c), before the kernels */
	for (bool more = true; !ret && more;) {
		more = false;
		for (int k = 0; !ret && k < m.nfuncs; k++) {
			struct ptx_func flat;

			if (!want[k] || done[k])
				continue;
			if (!any_fn)
				sb_printf(&sb, "        .word 0x0, 0x0 ; // address 0: no function "
					  "(a call through a null pointer is an illegal instruction)\n");
			done[k] = more = any_fn = true;
			ret = ptx_inline(&m, &m.funcs[k], &dg, &flat);
			if (!ret) {
				real_calls(&m, &flat, want);
				ret = emit_function(&sb, &m, k, &flat, &dg);
				ptx_func_free(&flat);
			}
		}
	}
	if (!ret && ksb.p)
		sb_printf(&sb, "%s", ksb.p);
	/* a module of no kernel (variables, functions) loads, as CUDA's does;
	 * an object holds at least one kernel: a hidden one of one EXIT */
	if (!ret && !kernels)
		sb_printf(&sb, ".kernel __vgpu_none\n        EXIT ;\n");
	if (!ret)
		ret = print_arefs(&sb, &m, &dg, NULL);
	ret = ret ? ret : ksb.oom ? -ENOMEM : 0;
	free(ksb.p);
	free(want);
	free(done);
	if (!ret && attrs) {
		ka = calloc((size_t)kernels, sizeof(*ka));
		if (!ka)
			ret = -ENOMEM;
		for (int i = 0, k = 0; ka && i < m.nfuncs; i++) {
			if (!m.funcs[i].entry)
				continue;
			ptx_kernel_obj_name(m.funcs[i].name, ka[k].name);
			ka[k].full = strndup(m.funcs[i].full, m.funcs[i].full_len);
			if (!ka[k].full)
				ret = -ENOMEM;
			ka[k++].attrs = m.funcs[i].attrs;
		}
	}
	ptx_module_free(&m);
	free(text);
	if (!ret && sb.oom)
		ret = -ENOMEM;
	if (!ret)
		ret = check_assembles(sb.p, &dg, obj);
	if (ret) {
		ptx_kernel_attrs_free(ka, kernels);
		free(sb.p);
		return ret;
	}
	*out = sb.p;
	if (attrs) {
		*attrs = ka;
		*nattrs = kernels;
	}
	return 0;
}
