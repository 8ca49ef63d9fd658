// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: modules and functions.  A module is PTX (text, or the PTX
 * entry of a fatbin, cu_fatbin.c) compiled by libvgpu's front end into a
 * vgpu_program; each .entry is a CUfunction.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_fatbin.h"
#include "cu_occupancy.h"
#include "cuda_priv.h"

/*
 * The kernel's CUDA parameters from its vGPU parameters: the front end
 * names the first slot of PTX parameter N "argN", the further 4-byte
 * slots of an array parameter "argN_OFF" and padding "padN_OFF"
 * (libvgpu/ptx/ptx.c print_params).
 */
static CUresult func_params(struct CUfunc_st *f)
{
	struct vgpu_kernel_info ki;
	struct vgpu_arg_info ai;
	unsigned int n = 0;

	vgpu_kernel_info(f->kernel, &ki);
	f->param_off = calloc(ki.nparams + 1, sizeof(uint32_t));
	f->param_size = calloc(ki.nparams + 1, sizeof(uint32_t));
	if (!f->param_off || !f->param_size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned int i = 0; vgpu_kernel_arg(f->kernel, i, &ai) == 0; i++) {
		unsigned int idx;
		char rest;

		if (sscanf(ai.name, "arg%u%c", &idx, &rest) == 1) {
			if (idx != n)
				return CUDA_ERROR_INVALID_IMAGE;
			f->param_off[n] = ai.offset;
			f->param_size[n] = ai.size;
			n++;
		} else if (sscanf(ai.name, "arg%u_", &idx) == 1 && n && idx == n - 1) {
			f->param_size[n - 1] = ai.offset + ai.size - f->param_off[n - 1];
		}
		if (n && !strncmp(ai.name, "arg", 3))
			f->user_bytes = f->param_off[n - 1] + f->param_size[n - 1];
	}
	f->nparams = n;
	return CUDA_SUCCESS;
}

/*
 * The kernels of a module's assembly, found in one pass and sorted by
 * name: each header ".kernel NAME" (or ".kernel SHORT // PTXNAME" when the
 * PTX name is longer than an object's names), its body from the line
 * after it up to the newline before the next header.  A module's text is
 * looked up once per kernel, so a scan from the top for each was
 * quadratic in the kernels (cub's: seconds).
 */
struct asm_kernel {
	const char *name; /* in the text, @len bytes */
	size_t len;
	const char *ptx_name; /* after " // " on the header line, or NULL */
	size_t ptx_len;
	const char *body, *end;
};

static int asm_kernel_cmp(const void *a, const void *b)
{
	const struct asm_kernel *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name; /* the first in the text first */
}

/* The headers of @text into *@out (sorted), their number into *@n; -ENOMEM. */
static int asm_kernels_index(const char *text, struct asm_kernel **out, unsigned int *n)
{
	unsigned int cap = 0, cnt = 0;
	struct asm_kernel *v = NULL;
	const char *p = !strncmp(text, ".kernel ", 8) ? text : strstr(text, "\n.kernel ");

	while (p) {
		const char *h = *p == '\n' ? p + 1 : p, *nl, *next;
		struct asm_kernel *k;

		if (cnt == cap) {
			struct asm_kernel *g;

			cap = cap ? 2 * cap : 16;
			g = realloc(v, cap * sizeof(*v));
			if (!g) {
				free(v);
				return -ENOMEM;
			}
			v = g;
		}
		k = &v[cnt++];
		k->name = h + 8;
		k->len = strcspn(k->name, " \n");
		nl = strchr(k->name + k->len, '\n');
		k->ptx_name = NULL;
		if (nl && !strncmp(k->name + k->len, " // ", 4)) {
			k->ptx_name = k->name + k->len + 4;
			k->ptx_len = (size_t)(nl - k->ptx_name);
		}
		next = nl ? strstr(nl, "\n.kernel ") : NULL;
		k->body = nl ? nl + 1 : NULL;
		k->end = next ? next : (nl ? nl + 1 + strlen(nl + 1) : NULL);
		p = next;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), asm_kernel_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

static const struct asm_kernel *asm_kernel_find(const struct asm_kernel *v, unsigned int n,
						const char *kname)
{
	struct asm_kernel key = { .name = kname, .len = strlen(kname) };
	unsigned int lo = 0, hi = n;

	/* the first of equal names: the first in the text */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		size_t m = v[mid].len < key.len ? v[mid].len : key.len;
		int c = memcmp(v[mid].name, key.name, m);

		if (!c)
			c = v[mid].len < key.len ? -1 : v[mid].len > key.len;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].len == key.len && !memcmp(v[lo].name, kname, key.len) && v[lo].body)
		return &v[lo];
	return NULL;
}

/*
 * Per-kernel facts from the generated assembly (@k's body): the highest
 * register named (NUM_REGS), the .local bytes per thread, the static
 * shared bytes, the named barriers used (occupancy's) and the cluster
 * shape.
 */
static void func_asm_facts(struct CUfunc_st *f, const struct asm_kernel *k)
{
	const char *p = k->body, *end = k->end;
	int maxr = -1;
	uint64_t user_smem = 0;

	/* __cluster_dims__ (PTX .reqnctapercluster): the front end's comment */
	if (sscanf(p, "// .reqnctapercluster %u, %u, %u", &f->req_cluster[0], &f->req_cluster[1],
		   &f->req_cluster[2]) != 3)
		memset(f->req_cluster, 0, sizeof(f->req_cluster));
	for (const char *q = p; q < end; q++) {
		switch (*q) {
		case 'R':
			if (q[1] >= '0' && q[1] <= '9' &&
			    (q == p || q[-1] == ' ' || q[-1] == '[' || q[-1] == ',' ||
			     q[-1] == '\t')) {
				int r = atoi(q + 1);

				if (r > maxr)
					maxr = r;
			}
			break;
		case 'B':
			if (!strncmp(q, "BAR.", 4) && q > p && (q[-1] == ' ' || q[-1] == '\t') &&
			    (!strncmp(q + 4, "SYNC", 4) || !strncmp(q + 4, "ARV", 3) ||
			     !strncmp(q + 4, "RED", 3))) {
				/* a named barrier: its id, or any of them from a register */
				const char *o = q + strcspn(q, " \t\n");
				int n;

				o += strspn(o, " \t");
				n = *o == 'R' ? (int)VGPU_NUM_NAMED_BARRIERS :
						(int)strtoul(o, NULL, 0) + 1;
				if (n > (int)VGPU_NUM_NAMED_BARRIERS)
					n = (int)VGPU_NUM_NAMED_BARRIERS;
				if (n > f->barriers)
					f->barriers = n;
			}
			break;
		case '\n':
			if (!strncmp(q, "\n.local ", 8)) {
				f->local_bytes = (uint32_t)strtoul(q + 8, NULL, 0);
			} else if (!strncmp(q, "\n.shared ", 9)) {
				unsigned long size, align;
				const char *eol = strchr(q + 1, '\n');

				/* the marker of the dynamic area is vGPU's, not
				 * the kernel's: CUDA counts the static variables
				 * only */
				if (sscanf(q + 9, "sh%*u, %lu, %lu", &size, &align) == 2 && align &&
				    !(eol && memmem(q, (size_t)(eol - q), "// dynamic", 10))) {
					user_smem = (user_smem + align - 1) &
						    ~(uint64_t)(align - 1);
					user_smem += size;
				}
			}
			break;
		default:
			break;
		}
	}
	f->num_regs = maxr + 1;
	f->smem_user = (uint32_t)user_smem;
}

/* .global gI, SIZE, ALIGN ; // NAME -> offsets, laid out as the assembler
 * does (libvgpu/asm/asm.c dir_global: each aligned after the previous). */
static CUresult parse_globals(struct CUmod_st *m, const char *text)
{
	uint64_t off = 0;
	unsigned int cap = 0;

	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long size, align;
		char name[128];
		struct cuv_global *g;

		if (strncmp(p, ".global ", 8) ||
		    sscanf(p, ".global g%*u, %lu, %lu ; // %127s", &size, &align, name) != 3)
			continue;
		off = (off + align - 1) & ~(uint64_t)(align - 1);
		if (m->nglobals == cap) {
			cap = cap ? cap * 2 : 8;
			g = realloc(m->globals, cap * sizeof(*g));
			if (!g)
				return CUDA_ERROR_OUT_OF_MEMORY;
			m->globals = g;
		}
		g = &m->globals[m->nglobals++];
		snprintf(g->name, sizeof(g->name), "%s", name);
		g->offset = off;
		g->size = size;
		off += size;
	}
	return CUDA_SUCCESS;
}

static void module_free(struct CUmod_st *m)
{
	for (unsigned int i = 0; i < m->nfuncs; i++) {
		cuv_handle_del(&m->funcs[i]);
		vgpu_args_free(atomic_exchange(&m->funcs[i].args_cache, NULL));
		free(m->funcs[i].param_off);
		free(m->funcs[i].param_size);
		free(m->funcs[i].ptx_name);
	}
	if (m->data_va) {
		struct vgpu_bo *bo;

		if (!vgpu_program_data(m->prog, &bo))
			cuv_alloc_remove_bo(m->ctx, bo);
	}
	free(m->funcs);
	free(m->globals);
	vgpu_program_free(m->prog);
	free(m);
}

void cuv_modules_free(struct CUctx_st *ctx)
{
	struct CUmod_st *m = ctx->modules;

	while (m) {
		struct CUmod_st *n = m->next;

		cuv_handle_del(m);
		module_free(m);
		m = n;
	}
	ctx->modules = NULL;
}

static CUresult func_attr(const struct CUfunc_st *hfunc, CUfunction_attribute attrib, int *pi);

void cuv_devrt_occ_refresh(const struct CUfunc_st *f)
{
	const struct CUmod_st *m = f->mod;
	struct vgpu_devrt_occ *t;
	struct cuv_occ_device d;
	struct cuv_occ_func a;
	uint64_t fixed;

	if (!m->data_map || m->occ_off < 0)
		return;
	t = (struct vgpu_devrt_occ *)(m->data_map + m->occ_off) + (f - m->funcs);
	cuv_occ_inputs(f, &d, &a);
	fixed = cuv_occ_smem_fixed(&d, &a);
	t->max_dyn = a.max_dyn_smem;
	t->fixed = fixed > UINT32_MAX ? UINT32_MAX : (uint32_t)fixed;
	t->max_threads = d.max_threads;
	t->warp_size = d.warp_size;
	for (uint32_t w = 0; w < VGPU_DEVRT_OCC_WARPS; w++)
		t->but_smem[w] = w ? (uint32_t)cuv_occ_blocks_but_smem(&d, &a, (int)(w * d.warp_size)) : 0;
	for (uint32_t i = 0; i < VGPU_DEVRT_OCC_NEEDS; i++) {
		/* the least dynamic bytes whose need rounds up to i x 128 */
		uint64_t need = (uint64_t)i * 128, dyn = need >= fixed + 127 ? need - 127 - fixed : 0;
		int n = need < fixed ? 0 : cuv_occ_blocks_smem(&d, &a, dyn);

		t->by_need[i] = n > UINT16_MAX ? UINT16_MAX : (uint16_t)n;
	}
}

/*
 * The host's answers for the device runtime's queries in device code
 * (libvgpu/vgpu.h, VGPU_DEVRT_INFO): the device facts in the module's
 * VGPU_DEVRT_INFO variable, each kernel's cudaFuncAttributes after its
 * descriptor; in the module data mapped at @map.
 */
static void devrt_fill(struct CUmod_st *m, uint8_t *map)
{
	static const CUfunction_attribute fa[] = {
		CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_NUM_REGS,
		CU_FUNC_ATTRIBUTE_PTX_VERSION, CU_FUNC_ATTRIBUTE_BINARY_VERSION,
	};
	const size_t kd = strlen("$vgpu$kd$");

	for (unsigned int i = 0; i < m->nglobals; i++) {
		const struct cuv_global *g = &m->globals[i];
		uint8_t *at = map + g->offset;

		if (!strcmp(g->name, VGPU_DEVRT_INFO) && g->size >= sizeof(struct vgpu_devrt_info)) {
			struct vgpu_devrt_info *info = calloc(1, sizeof(*info));
			int n = 0;

			if (!info)
				continue;
			cuDeviceGetCount(&n);
			info->ordinal = m->ctx->ordinal;
			info->count = n;
			for (int d = 0; d < n && d < VGPU_DEVRT_DEVICES; d++)
				for (int a = 1; a < VGPU_DEVRT_ATTRS; a++) {
					int v = 0;

					/* the runtime's answer: cudaErrorInvalidValue for
					 * what the driver does not know */
					if (cuDeviceGetAttribute(&v, (CUdevice_attribute)a, d))
						info->attr[d][a].err = 1;
					else
						info->attr[d][a].value = v;
				}
			memcpy(at, info, sizeof(*info));
			free(info);
		} else if (!strncmp(g->name, "$vgpu$kd$", kd) &&
			   g->size >= VGPU_DEVRT_FUNCATTR_OFF + VGPU_DEVRT_FUNCATTR_BYTES) {
			unsigned long k = strtoul(g->name + kd, NULL, 10);
			uint64_t sizes[3];
			int words[4] = { 0 };

			if (k >= m->nfuncs)
				continue;
			sizes[0] = m->funcs[k].smem_user;
			sizes[1] = 0; /* vGPU has no constant bank of a kernel's own */
			sizes[2] = m->funcs[k].local_bytes;
			for (int w = 0; w < 4; w++)
				func_attr(&m->funcs[k], fa[w], &words[w]);
			memcpy(at + VGPU_DEVRT_FUNCATTR_OFF, sizes, sizeof(sizes));
			memcpy(at + VGPU_DEVRT_FUNCATTR_OFF + sizeof(sizes), words, sizeof(words));
		} else if (!strcmp(g->name, VGPU_DEVRT_OCC) &&
			   g->size >= m->nfuncs * sizeof(struct vgpu_devrt_occ) && !(g->offset % 16)) {
			m->occ_off = (int64_t)g->offset;
		}
	}
	m->data_map = map;
	for (unsigned int k = 0; k < m->nfuncs && m->occ_off >= 0; k++)
		cuv_devrt_occ_refresh(&m->funcs[k]);
}

/* PTX text -> a module of the current context. */
CUresult cuv_module_from_ptx(const char *ptx, size_t len, const char *name, char *errlog,
			     size_t errlen, struct CUmod_st **out)
{
	struct CUctx_st *ctx;
	struct CUmod_st *m;
	struct asm_kernel *idx = NULL;
	unsigned int nidx = 0;
	char *text = NULL, log[4096] = "";
	void *obj = NULL;
	size_t olen = 0;
	struct vgpu_bo *bo;
	int ret;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	if (cuv_sticky())
		return cuv_sticky();
	/* the assembly and its object: compiled by the front end, or from
	 * libvgpu's compile cache */
	ret = vgpu_ptx_compile(ptx, len, name, &text, &obj, &olen, log, sizeof(log));
	if (ret) {
		cuv_warn("%s: the PTX does not compile for vGPU:\n%s", name, log);
		if (errlog && errlen)
			snprintf(errlog, errlen, "%s", log);
		return ret == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_PTX;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		free(obj);
		free(text);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->ctx = ctx;
	m->occ_off = -1;
	ret = vgpu_program_load_binary(ctx->dev, obj, olen, &m->prog, log, sizeof(log));
	free(obj);
	if (ret) {
		cuv_warn("%s: the generated object does not load:\n%s", name, log);
		free(text);
		free(m);
		return ret == -EINVAL ? CUDA_ERROR_INVALID_PTX : cuv_errno(ret);
	}
	m->nfuncs = vgpu_program_kernel_count(m->prog);
	m->funcs = calloc(m->nfuncs ? m->nfuncs : 1, sizeof(*m->funcs));
	r = m->funcs ? parse_globals(m, text) : CUDA_ERROR_OUT_OF_MEMORY;
	if (!r && asm_kernels_index(text, &idx, &nidx))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned int i = 0; !r && i < m->nfuncs; i++) {
		struct CUfunc_st *f = &m->funcs[i];
		struct vgpu_kernel_info ki;
		const struct asm_kernel *k;

		f->mod = m;
		vgpu_program_kernel(m->prog, i, &f->kernel);
		vgpu_kernel_info(f->kernel, &ki);
		k = asm_kernel_find(idx, nidx, ki.name);
		if (k && k->ptx_name) {
			f->ptx_name = strndup(k->ptx_name, k->ptx_len);
			if (!f->ptx_name)
				r = CUDA_ERROR_OUT_OF_MEMORY;
		}
		f->name = f->ptx_name ? f->ptx_name : ki.name;
		f->smem_static = ki.smem_static;
		f->smem_user = ki.smem_static;
		if (!r)
			r = func_params(f);
		if (k)
			func_asm_facts(f, k);
		/* CUDA's default: 48 KiB less the static part */
		f->max_dyn_smem = 48 * 1024 - (int)f->smem_user;
		if (f->max_dyn_smem < 0)
			f->max_dyn_smem = 0;
		f->carveout = -1;
	}
	free(idx);
	free(text);
	if (!r && !vgpu_program_data(m->prog, &bo)) {
		struct cuv_alloc a = { .va = vgpu_bo_gpu_address(bo), .size = vgpu_bo_size(bo),
				       .bo = bo, .kind = CUV_ALLOC_MODULE };
		void *map;

		ret = vgpu_bo_map(bo, &map);
		r = ret ? cuv_errno(ret) : CUDA_SUCCESS;
		a.map = map;
		if (!r)
			devrt_fill(m, map);
		pthread_mutex_lock(&ctx->lock);
		if (!r)
			r = cuv_alloc_add(ctx, &a);
		pthread_mutex_unlock(&ctx->lock);
		if (!r)
			m->data_va = a.va;
	}
	if (r) {
		if (!m->funcs)
			m->nfuncs = 0;
		module_free(m);
		return r;
	}
	for (unsigned int i = 0; i < m->nfuncs; i++)
		cuv_handle_add(&m->funcs[i], CUV_FUNC);
	pthread_mutex_lock(&ctx->lock);
	m->next = ctx->modules;
	ctx->modules = m;
	pthread_mutex_unlock(&ctx->lock);
	cuv_handle_add(m, CUV_MOD);
	*out = m;
	return CUDA_SUCCESS;
}

/* An image: a fatbin (or its wrapper), a cubin (refused), or PTX text. */
static CUresult load_image(CUmodule *module, const void *image, size_t size_hint,
			   const char *name, char *errlog, size_t errlen)
{
	char *ptx = NULL;
	size_t len = 0;
	CUresult r;

	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_image_ptx(image, size_hint, &ptx, &len);
	if (r)
		return r;
	r = cuv_module_from_ptx(ptx, len, name, errlog, errlen, module);
	free(ptx);
	return r;
}

CUresult cuv_jit_options(unsigned int n, const CUjit_option *options, void **values,
			 char **errlog, size_t *errlen)
{
	*errlog = NULL;
	*errlen = 0;
	if (n && (!options || !values))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
			*errlog = values[i];
		else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			*errlen = (size_t)(uintptr_t)values[i];
		else if ((int)options[i] < 0 || options[i] >= CU_JIT_NUM_OPTIONS)
			return CUDA_ERROR_INVALID_VALUE;
		/* the others tune a compiler vGPU does not have: accepted */
	}
	if (*errlog && *errlen)
		(*errlog)[0] = '\0';
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	return load_image(module, image, 0, "<image>", NULL, 0);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
				    CUjit_option *options, void **optionValues)
{
	char *errlog;
	size_t errlen;
	CUresult r = cuv_jit_options(numOptions, options, optionValues, &errlog, &errlen);

	return r ? r : load_image(module, image, 0, "<image>", errlog, errlen);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return load_image(module, fatCubin, 0, "<fatbin>", NULL, 0);
}

CUresult cuv_read_file(const char *path, char **out, size_t *osize)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long size;

	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	buf = malloc((size_t)size + 1);
	if (!buf) {
		fclose(f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(buf);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	fclose(f);
	buf[size] = '\0';
	*out = buf;
	*osize = (size_t)size + 1;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
	char *buf;
	size_t size;
	CUresult r;

	if (!module || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = cuv_read_file(fname, &buf, &size);
	if (r)
		return r;
	r = load_image(module, buf, size, fname, NULL, 0);
	free(buf);
	return r;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	struct CUmod_st **pp;
	struct CUctx_st *ctx;

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hmod || !cuv_handle_ok(hmod, CUV_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	if (cuv_sticky()) /* as CUDA's; cuCtxDestroy frees it */
		return cuv_sticky();
	ctx = hmod->ctx;
	cuv_handle_del(hmod);
	pthread_mutex_lock(&ctx->lock);
	cuv_ctx_sync_locked(ctx); /* its kernels may still run */
	for (pp = &ctx->modules; *pp && *pp != hmod; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = hmod->next;
	module_free(hmod);
	pthread_mutex_unlock(&ctx->lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hmod || !cuv_handle_ok(hmod, CUV_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	if (cuv_sticky())
		return cuv_sticky();
	for (unsigned int i = 0; i < hmod->nfuncs; i++)
		if (!strcmp(hmod->funcs[i].name, name)) {
			*hfunc = &hmod->funcs[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!mod || !cuv_handle_ok(mod, CUV_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	*count = mod->nfuncs;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
				   const char *name)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hmod || !cuv_handle_ok(hmod, CUV_MOD))
		return CUDA_ERROR_INVALID_HANDLE;
	for (unsigned int i = 0; i < hmod->nglobals; i++)
		if (!strcmp(hmod->globals[i].name, name)) {
			if (dptr)
				*dptr = hmod->data_va + hmod->globals[i].offset;
			if (bytes)
				*bytes = hmod->globals[i].size;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

/* ---- functions ---- */

static CUresult func_ok(CUfunction f)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return f && cuv_handle_ok(f, CUV_FUNC) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* cuFuncGetAttribute()'s answer for a function of a module being loaded too. */
static CUresult func_attr(const struct CUfunc_st *hfunc, CUfunction_attribute attrib, int *pi)
{
	int v;

	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		v = VGPU_MAX_THREADS_PER_CTA;
		break;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
		v = (int)hfunc->smem_user;
		break;
	case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
		v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
		v = (int)hfunc->local_bytes;
		break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		v = cuv_func_regs(hfunc);
		break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
		v = 90;
		break;
	case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
		v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		v = hfunc->max_dyn_smem;
		break;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		v = hfunc->non_portable_cluster;
		break;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		v = (int)hfunc->req_cluster[attrib - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH];
		break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		v = hfunc->carveout;
		break;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		v = 0;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pi = v;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	r = func_ok(hfunc);
	return r ? r : func_attr(hfunc, attrib, pi);
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	struct cuv_device *d;
	CUresult r = func_ok(hfunc);

	if (r)
		return r;
	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		d = hfunc->mod->ctx->cudev;
		if (value < 0 ||
		    (uint64_t)value + hfunc->smem_static > d->info.param[VGPU_PARAM_SMEM])
			return CUDA_ERROR_INVALID_VALUE;
		hfunc->max_dyn_smem = value;
		cuv_devrt_occ_refresh(hfunc);
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		hfunc->non_portable_cluster = value != 0;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		if (value < -1 || value > 100)
			return CUDA_ERROR_INVALID_VALUE;
		hfunc->carveout = value; /* occupancy's (cu_occupancy.c) */
		cuv_devrt_occ_refresh(hfunc);
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		return CUDA_SUCCESS; /* hints */
	default:
		return CUDA_ERROR_INVALID_VALUE; /* read-only or unknown */
	}
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
	CUresult r;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	r = func_ok(hfunc);
	if (!r)
		*name = hfunc->name;
	return r;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
				    size_t *paramSize)
{
	CUresult r = func_ok(func);

	if (r)
		return r;
	if (paramIndex >= func->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	if (paramOffset)
		*paramOffset = func->param_off[paramIndex];
	if (paramSize)
		*paramSize = func->param_size[paramIndex];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
	CUresult r;

	if (!hmod)
		return CUDA_ERROR_INVALID_VALUE;
	r = func_ok(hfunc);
	if (!r)
		*hmod = hfunc->mod;
	return r;
}

/*
 * vGPU has no L1 to trade against shared memory: kept for the occupancy
 * arithmetic (the carveout it stands for), changes nothing else.
 */
CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	CUresult r = func_ok(hfunc);

	if (r)
		return r;
	if ((unsigned int)config > CU_FUNC_CACHE_PREFER_EQUAL)
		return CUDA_ERROR_INVALID_VALUE;
	hfunc->cache_config = config;
	cuv_devrt_occ_refresh(hfunc);
	return CUDA_SUCCESS;
}
