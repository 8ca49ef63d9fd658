// SPDX-License-Identifier: MIT
/*
 * libvgpu launches: SUBMIT and the parameter pages.  Jobs (their records,
 * waiting for them) are job.c's, explaining their exceptions
 * exc_describe.c's, argument sets args.c's, syncobjs and queues
 * syncobj.c's.
 *
 * A launch is one DRM_IOCTL_VGPU_SUBMIT.  Its parameter buffer is copied
 * into a parameter page (one 4 KiB buffer object per launch in flight,
 * pooled per device and reused once WAIT_BO says its job has completed);
 * its completion is a binary syncobj from a per-device pool, which
 * vgpu_job_wait() waits on before asking DRM_IOCTL_VGPU_GET_JOB how the job
 * ended.  A kernel with local memory (VGPU_PARAM_LOCAL) gets it from a
 * buffer object that belongs to the parameter page, grown when a launch
 * needs more, so it is idle whenever the page is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "asm_priv.h"
#include "vgpu_priv.h"
#include "trace/timeline.h"

/* Parameter pages kept per device; beyond this a launch waits for one. */
#define PARAM_BOS_MAX 64u

/* ---- launches ---- */

static int param_bo_new(struct vgpu_device *dev, struct vgpu_param_bo *p)
{
	struct drm_vgpu_bo_create c = {
		.size = VGPU_MAX_PARAM_BYTES,
		.flags = VGPU_BO_READ_ONLY | VGPU_BO_NO_EXEC,
	};
	struct drm_vgpu_bo_mmap_offset mo = { 0 };
	void *map;
	int ret;

	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_BO_CREATE, &c);
	if (ret)
		return ret;
	mo.handle = c.handle;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &mo);
	if (!ret)
		ret = dev->ops->mmap(dev, mo.offset, VGPU_MAX_PARAM_BYTES, &map);
	if (ret) {
		vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ .handle = c.handle });
		return ret;
	}
	p->handle = c.handle;
	p->va = c.va;
	p->map = map;
	return 0;
}

/*
 * Take a parameter page for a launch and hold @dev->param_lock until
 * param_page_put(); *@idx is its index in @dev->param_bos (indices never
 * change).  In order of preference: a page known idle (no ioctl), the
 * oldest busy page if WAIT_BO says its job has completed, a new page, and
 * with PARAM_BOS_MAX pages already made, the oldest busy page once its job
 * completes.  Pages held by job handles are not candidates: their job
 * gives them back (vgpu_job_wait() knows they are idle then).
 */
static void param_userq_idle(struct vgpu_param_bo *p)
{
	p->uq = NULL;
	p->state = PARAM_IDLE;
}

static int param_page_get(struct vgpu_device *dev, unsigned int *idx)
{
	struct vgpu_param_bo *oldest = NULL, *ouq = NULL, p = { 0 };
	int ret;

	pthread_mutex_lock(&dev->param_lock);
	if (dev->nparam_bos && dev->ops->sync_submit) {
		*idx = 0; /* its job completed in SUBMIT */
		return 0;
	}
	for (unsigned int i = 0; i < dev->nparam_bos; i++) {
		struct vgpu_param_bo *q = &dev->param_bos[i];

		if (q->state == PARAM_USERQ && vgpu_userq_seq_done(q->uq, q->useq))
			param_userq_idle(q);
		if (q->state == PARAM_USERQ && !ouq)
			ouq = q;
		if (q->state == PARAM_IDLE) {
			*idx = i;
			return 0;
		}
		if (q->state == PARAM_BUSY && (!oldest || q->seq < oldest->seq))
			oldest = q;
	}
	if (oldest) {
		struct drm_vgpu_wait_bo w = { .handle = oldest->handle };

		ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_WAIT_BO, &w);
		if (ret == -ETIME && dev->nparam_bos >= PARAM_BOS_MAX) {
			w.timeout_ns = INT64_MAX;
			ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_WAIT_BO, &w);
		}
		if (!ret) {
			oldest->state = PARAM_IDLE;
			*idx = (unsigned int)(oldest - dev->param_bos);
			return 0;
		}
		if (ret != -ETIME)
			goto fail;
	}
	if (!oldest && ouq && dev->nparam_bos >= PARAM_BOS_MAX) {
		/* a stopped queue (-EIO) runs nothing more: idle too */
		ret = vgpu_userq_wait_seq(ouq->uq, ouq->useq, INT64_MAX);
		if (ret && ret != -EIO)
			goto fail;
		param_userq_idle(ouq);
		*idx = (unsigned int)(ouq - dev->param_bos);
		return 0;
	}
	if (dev->nparam_bos == dev->param_bos_cap) {
		unsigned int cap = dev->param_bos_cap ? 2 * dev->param_bos_cap : 4;
		struct vgpu_param_bo *n = realloc(dev->param_bos, cap * sizeof(*n));

		ret = -ENOMEM;
		if (!n)
			goto fail;
		dev->param_bos = n;
		dev->param_bos_cap = cap;
	}
	ret = param_bo_new(dev, &p);
	if (ret)
		goto fail;
	p.state = PARAM_IDLE;
	p.seq = 0;
	*idx = dev->nparam_bos;
	dev->param_bos[dev->nparam_bos++] = p;
	return 0;
fail:
	pthread_mutex_unlock(&dev->param_lock);
	return ret;
}

/*
 * After the SUBMIT that used page @idx: on success the page is busy, held
 * by @job when there is a handle (it gives the page back), else left for
 * WAIT_BO to find idle; after a failed SUBMIT it is idle.
 */
static void param_page_put(struct vgpu_device *dev, unsigned int idx,
			   bool submitted, struct vgpu_job *job,
			   struct vgpu_userq *uq, uint64_t useq)
{
	struct vgpu_param_bo *p = &dev->param_bos[idx];

	if (!submitted || dev->ops->sync_submit) {
		p->state = PARAM_IDLE;
	} else if (uq && !job) {
		/* idle once the queue's fence reaches its launch */
		p->uq = uq;
		p->useq = useq;
		p->state = PARAM_USERQ;
	} else {
		p->seq = ++dev->param_seq;
		p->state = job ? PARAM_HELD : PARAM_BUSY;
		if (job)
			job->param_idx = (int)idx;
	}
	pthread_mutex_unlock(&dev->param_lock);
}

/*
 * The job gives its parameter page back: idle when it has completed, else
 * busy (the next launch that wants it asks WAIT_BO).
 */
/* @add (freed) after *@text. */
static void text_append(char **text, char *add)
{
	size_t a, b;
	char *t;

	if (!add)
		return;
	if (!*text) {
		*text = add;
		return;
	}
	a = strlen(*text);
	b = strlen(add);
	t = realloc(*text, a + b + 1);
	if (t) {
		memcpy(t + a, add, b + 1);
		*text = t;
	}
	free(add);
}

void vgpu_param_page_release(struct vgpu_job *job, bool completed)
{
	struct vgpu_device *dev = job->dev;

	if (job->param_idx < 0)
		return;
	/* the children's printf records (device-side launch, cdp.c) */
	if (completed && job->cdp_prog) {
		char *cdp_text = vgpu_cdp_printf_collect(dev, job->cdp_prog);

		job->cdp_prog = NULL;
		if (job->printf_prog && !job->printf_text) {
			pthread_mutex_lock(&dev->param_lock);
			job->printf_text = vgpu_printf_collect(job->printf_prog,
							       dev->param_bos[job->param_idx].printf_map);
			pthread_mutex_unlock(&dev->param_lock);
		}
		text_append(&job->printf_text, cdp_text);
	}
	pthread_mutex_lock(&dev->param_lock);
	if (completed && job->printf_prog && !job->printf_text)
		job->printf_text = vgpu_printf_collect(job->printf_prog,
						       dev->param_bos[job->param_idx].printf_map);
	if (completed)
		vgpu_timeline_collect(job, &dev->param_bos[job->param_idx]);
	if (!completed && job->uq) {
		struct vgpu_param_bo *p = &dev->param_bos[job->param_idx];

		p->uq = job->uq;
		p->useq = job->useq;
		p->state = PARAM_USERQ;
	} else {
		dev->param_bos[job->param_idx].state = completed ? PARAM_IDLE : PARAM_BUSY;
	}
	pthread_mutex_unlock(&dev->param_lock);
	job->param_idx = -1;
}

static uint32_t dim(uint32_t v)
{
	return v ? v : 1;
}

/*
 * Page @p's local memory, at least @size bytes (its job has completed or
 * it never ran one: the old buffer is idle and can go).
 */
static int local_mem(struct vgpu_device *dev, struct vgpu_param_bo *p, uint64_t size)
{
	/* resident from the start: a user queue's launch lists no BO */
	struct drm_vgpu_bo_create c = { .flags = VGPU_BO_NO_EXEC | VGPU_BO_POPULATE };
	int ret;

	if (p->local_size >= size)
		return 0;
	if (p->local_handle) {
		vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ .handle = p->local_handle });
		p->local_handle = 0;
		p->local_size = 0;
	}
	c.size = (size + 0xffff) & ~(uint64_t)0xffff;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_BO_CREATE, &c);
	if (ret)
		return ret;
	p->local_handle = c.handle;
	p->local_va = c.va;
	p->local_size = c.size;
	return 0;
}

/*
 * A buffer of @size bytes for what the device writes and the library
 * reads back (printf records, timelines): created, mapped.
 */
int vgpu_mapped_bo(struct vgpu_device *dev, uint64_t size, uint32_t *handle,
		   uint64_t *va, uint8_t **map)
{
	struct drm_vgpu_bo_create c = { .size = size, .flags = VGPU_BO_NO_EXEC };
	struct drm_vgpu_bo_mmap_offset mo = { 0 };
	void *m;
	int ret;

	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_BO_CREATE, &c);
	if (ret)
		return ret;
	mo.handle = c.handle;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &mo);
	if (!ret)
		ret = dev->ops->mmap(dev, mo.offset, size, &m);
	if (ret) {
		vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &(struct drm_gem_close){ .handle = c.handle });
		return ret;
	}
	*handle = c.handle;
	*va = c.va;
	*map = m;
	return 0;
}

/* @k's printf buffer (on its page, like local memory): made once, mapped. */
static int printf_mem(struct vgpu_device *dev, struct vgpu_param_bo *p)
{
	if (p->printf_handle)
		return 0;
	return vgpu_mapped_bo(dev, VGPU_PRINTF_BYTES, &p->printf_handle, &p->printf_va,
			      &p->printf_map);
}

/*
 * Page @p's timeline buffer of @size bytes (its job has completed: the
 * old one can go), mapped, its header cleared: a launch that never starts
 * leaves no timeline.
 */
static int timeline_mem(struct vgpu_device *dev, struct vgpu_param_bo *p,
			uint64_t size)
{
	if (p->tl_handle && p->tl_size != size) {
		dev->ops->munmap(dev, p->tl_map, p->tl_size);
		vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ .handle = p->tl_handle });
		p->tl_handle = 0;
	}
	if (!p->tl_handle) {
		int ret = vgpu_mapped_bo(dev, size, &p->tl_handle, &p->tl_va, &p->tl_map);

		if (ret)
			return ret;
		p->tl_size = size;
	}
	memset(p->tl_map, 0, sizeof(struct vgpu_trace_header));
	return 0;
}

/* The bytes of local memory a launch of @k with @l needs (0: none). */
static int local_bytes(const struct vgpu_obj_kernel *k, const struct drm_vgpu_launch *l,
		       uint64_t *size)
{
	uint64_t n = k->local_bytes;

	*size = 0;
	if (!n)
		return 0;
	for (int i = 0; i < 3; i++) {
		if (n > (UINT64_C(1) << 40) / ((uint64_t)l->grid[i] * l->block[i]))
			return -E2BIG;
		n *= (uint64_t)l->grid[i] * l->block[i];
	}
	*size = n;
	return 0;
}

/* struct drm_vgpu_sync[] for @n sync points of @dev, or an error. */
static int sync_points(struct vgpu_device *dev, const struct vgpu_sync_point *sp,
		       unsigned int n, struct drm_vgpu_sync *out)
{
	if (n && !sp)
		return -EFAULT;
	for (unsigned int i = 0; i < n; i++) {
		if (!sp[i].syncobj)
			return -EINVAL;
		if (sp[i].syncobj->dev != dev)
			return -EXDEV;
		out[i] = (struct drm_vgpu_sync){
			.handle = sp[i].syncobj->handle,
			.point = sp[i].point,
		};
	}
	return 0;
}

/*
 * The directives of the kernel's PTX (PTX ISA 11.4, 11.7) against @cfg:
 * the block must be .reqntid's shape and hold at most .maxntid's threads;
 * a cluster shape other than 1x1x1 must be .reqnctapercluster's and hold
 * at most .maxclusterrank CTAs; .explicitcluster needs a shape from one
 * or the other.  *@cluster: the shape to launch with.
 */
static int launch_check(const struct vgpu_kernel *kernel, const struct vgpu_launch_config *cfg,
			uint32_t cluster[3], char *msg, size_t len)
{
	const struct ptx_kattrs *a = &kernel->attrs;
	uint32_t b[3], c[3];
	uint64_t threads, ctas;
	bool given;
	char dummy[1];

	if (!msg || !len) {
		msg = dummy;
		len = sizeof(dummy);
	}
	msg[0] = '\0';
	if (!kernel->has_attrs) { /* nothing to check: the common case */
		for (int i = 0; i < 3; i++)
			cluster[i] = dim(cfg->cluster[i]);
		return 0;
	}
	for (int i = 0; i < 3; i++) {
		b[i] = dim(cfg->block[i]);
		c[i] = dim(cfg->cluster[i]);
	}
	threads = (uint64_t)b[0] * b[1] * b[2];
	given = c[0] * c[1] * c[2] > 1;
	if (a->reqntid[0] && memcmp(b, a->reqntid, sizeof(b))) {
		snprintf(msg, len, "block %ux%ux%u does not match the kernel's .reqntid %u, %u, %u",
			 b[0], b[1], b[2], a->reqntid[0], a->reqntid[1], a->reqntid[2]);
		return -EINVAL;
	}
	if (a->maxntid[0] &&
	    threads > (uint64_t)a->maxntid[0] * a->maxntid[1] * a->maxntid[2]) {
		snprintf(msg, len, "block %ux%ux%u has more threads than the kernel's .maxntid "
			 "%u, %u, %u allows", b[0], b[1], b[2], a->maxntid[0], a->maxntid[1],
			 a->maxntid[2]);
		return -EINVAL;
	}
	if (a->reqnctapercluster[0] && given && memcmp(c, a->reqnctapercluster, sizeof(c))) {
		snprintf(msg, len, "cluster %ux%ux%u does not match the kernel's "
			 ".reqnctapercluster %u, %u, %u", c[0], c[1], c[2],
			 a->reqnctapercluster[0], a->reqnctapercluster[1], a->reqnctapercluster[2]);
		return -EINVAL;
	}
	if (a->reqnctapercluster[0] && !given)
		memcpy(c, a->reqnctapercluster, sizeof(c));
	ctas = (uint64_t)c[0] * c[1] * c[2];
	if (a->explicitcluster && !a->reqnctapercluster[0] && !given) {
		snprintf(msg, len, "the kernel has .explicitcluster: launch it with a cluster shape");
		return -EINVAL;
	}
	if (a->maxclusterrank && ctas > a->maxclusterrank) {
		snprintf(msg, len, "a cluster of %llu CTAs exceeds the kernel's .maxclusterrank %u",
			 (unsigned long long)ctas, a->maxclusterrank);
		return -EINVAL;
	}
	memcpy(cluster, c, sizeof(c));
	return 0;
}

int vgpu_kernel_launch_check(const struct vgpu_kernel *kernel,
			     const struct vgpu_launch_config *config, char *msg, size_t len)
{
	static const struct vgpu_launch_config defaults;
	uint32_t cluster[3];

	if (msg && len)
		msg[0] = '\0';
	if (!kernel)
		return -EINVAL;
	return launch_check(kernel, config ? config : &defaults, cluster, msg, len);
}

/*
 * The launch command's fields for @kernel with @cfg and @args, all but
 * @l->param_va (left as it was).  Field by field, not a compound
 * literal: GCC builds one on the stack and copies it.
 */
static inline void launch_fields(struct drm_vgpu_launch *l, const struct vgpu_kernel *kernel,
				 const struct vgpu_launch_config *cfg,
				 const struct vgpu_args *args, const uint32_t cluster[3],
				 uint32_t smem, uint32_t flags)
{
	const struct vgpu_program *prog = kernel->prog;
	const struct vgpu_obj_kernel *k = kernel->obj;

	l->code_va = prog->code->va;
	l->code_size = prog->obj.code_size;
	l->entry = k->entry;
	for (int i = 0; i < 3; i++) {
		l->grid[i] = dim(cfg->grid[i]);
		l->block[i] = dim(cfg->block[i]);
		l->cluster[i] = cluster[i];
	}
	l->smem_bytes = smem;
	l->param_size = args ? args->size : k->nparams ? k->param_size : 0;
	l->launch_flags = flags;
	l->seed = cfg->seed;
	l->budget = cfg->budget;
}

/* launch_inline()'s syncobjs to wait for and to signal, each at most */
#define LAUNCH_INLINE_SYNCS 8

/*
 * The launch of a kernel whose parameters need no page of their own
 * (kernel->inline_params: nothing the launch writes into them, no extra
 * buffer), with no timeline or user queue and at most LAUNCH_INLINE_SYNCS
 * syncobjs each way, on a backend that runs a job inside SUBMIT
 * (ops->submit_job, the sim): the parameter bytes go with the SUBMIT, as
 * a pushbuffer's inline data would, instead of through a parameter page
 * the device reads back.  The same SUBMIT otherwise, its checks, buffer
 * list, syncobjs, queue and job record; the code's buffer, which the
 * program holds, is not in the list (no job outlives the call to keep it
 * busy).  Everything else takes launch_general(); VGPU_SIM_PARAM_PAGES=1
 * sends every launch there.
 */
static int launch_inline(const struct vgpu_kernel *kernel, const struct vgpu_launch_config *cfg,
			 const struct vgpu_args *args, const uint32_t cluster[3], uint32_t smem,
			 uint32_t flags, struct vgpu_job **jobp)
{
	static const uint8_t zeros[VGPU_MAX_PARAM_BYTES];
	const struct vgpu_program *prog = kernel->prog;
	const struct vgpu_obj_kernel *k = kernel->obj;
	struct vgpu_device *dev = prog->dev;
	struct vgpu_exception_record exc; /* written only on an exception */
	struct drm_vgpu_sync in[LAUNCH_INLINE_SYNCS], out[LAUNCH_INLINE_SYNCS];
	struct drm_vgpu_get_job g;
	struct drm_vgpu_submit s;
	struct vgpu_job *job = NULL;
	int ret;

	/* sync_points() of none is 0: not called for them (the common case) */
	ret = cfg->nwait ? sync_points(dev, cfg->wait, cfg->nwait, in) : 0;
	if (!ret && cfg->nsignal)
		ret = sync_points(dev, cfg->signal, cfg->nsignal, out);
	if (ret)
		return ret;
	if (cfg->queue && cfg->queue->dev != dev)
		return -EINVAL;
	if (jobp) {
		job = vgpu_job_alloc();
		if (!job)
			return -ENOMEM;
	}
	/* every field set, none zeroed first (a memset call as long as this) */
	_Static_assert(sizeof(s) == 152 && sizeof(s.launch) == 88,
		       "every field of struct drm_vgpu_submit is set here");
	s.extensions = 0;
	launch_fields(&s.launch, kernel, cfg, args, cluster, smem, flags);
	s.launch.param_va = 0;
	s.flags = 0;
	s.pad = 0;
	s.job_id = 0;
	s.bo_handles = (uintptr_t)(args ? args->handles : NULL);
	s.bo_handle_count = args ? args->nhandles : 0;
	s.queue = vgpu_queue_id(cfg->queue);
	s.in_syncs = (uintptr_t)in;
	s.in_sync_count = cfg->nwait;
	s.out_syncs = (uintptr_t)out;
	s.out_sync_count = cfg->nsignal;
	ret = dev->ops->submit_job(dev, &s, args ? args->data : zeros, job ? &job->status : &g,
				   job ? &job->exc : &exc);
	if (ret) {
		free(job);
		return ret;
	}
	if (job) {
		job->done = job->status.state == VGPU_JOB_DONE ||
			    job->status.state == VGPU_JOB_FAILED;
		vgpu_job_launched(job, dev, k, s.job_id, &s.launch);
		*jobp = job;
	}
	return 0;
}

/*
 * vgpu_kernel_launch() of everything launch_inline() does not take: a
 * parameter page, the kernel's extra buffers, syncobjs, a timeline, a
 * user queue, asynchronous backends.  Checked as far as there.
 */
static int __attribute__((noinline))
launch_general(const struct vgpu_kernel *kernel, const struct vgpu_launch_config *cfg,
	       const struct vgpu_args *args, struct vgpu_job **jobp, const uint32_t cluster[3],
	       uint32_t smem, uint32_t flags, struct vgpu_userq *uq)
{
	const struct vgpu_program *prog = kernel->prog;
	const struct vgpu_obj_kernel *k = kernel->obj;
	struct vgpu_device *dev = prog->dev;
	struct drm_vgpu_sync in_small[8], out_small[9];
	struct drm_vgpu_sync *in = in_small, *outs = out_small;
	uint32_t handles_small[32], *handles = handles_small;
	struct drm_vgpu_ext_timeline tl;
	struct drm_vgpu_ext_device_launch dl = { 0 };
	char *cdp_text = NULL;
	struct drm_vgpu_submit s = { 0 };
	unsigned int page;
	struct vgpu_job *job = NULL;
	uint64_t useq = 0;
	uint32_t uslot = 0;
	unsigned int nbos, nout;
	int ret;

	nbos = (args ? args->nhandles : 0) + 2 + vgpu_kernel_extra_bos(kernel) +
	       !!(flags & VGPU_LAUNCH_TIMELINE);
	nout = cfg->nsignal + (jobp && !dev->ops->sync_submit && !uq ? 1 : 0);
	if (cfg->nwait > 8)
		in = malloc(cfg->nwait * sizeof(*in));
	if (nout > 9)
		outs = malloc(nout * sizeof(*outs));
	if (nbos > 32)
		handles = malloc(nbos * sizeof(*handles));
	ret = -ENOMEM;
	if (!in || !outs || !handles)
		goto out;
	ret = sync_points(dev, cfg->wait, cfg->nwait, in);
	if (!ret)
		ret = sync_points(dev, cfg->signal, cfg->nsignal, outs);
	if (ret)
		goto out;
	if (jobp) {
		ret = -ENOMEM;
		job = vgpu_job_alloc();
		if (!job)
			goto out;
		if (!dev->ops->sync_submit && !uq) {
			ret = vgpu_job_sync_get(dev, &job->sync);
			if (ret)
				goto out;
			outs[nout - 1] = (struct drm_vgpu_sync){
				.handle = job->sync };
		}
	}

	handles[0] = prog->code->handle;
	if (args && args->nhandles)
		memcpy(&handles[2], args->handles,
		       args->nhandles * sizeof(*handles));
	launch_fields(&s.launch, kernel, cfg, args, cluster, smem, flags);
	s.bo_handles = (uintptr_t)handles;
	s.bo_handle_count = nbos;
	if (cfg->queue && cfg->queue->dev != dev) {
		ret = -EINVAL;
		goto out;
	}
	s.queue = vgpu_queue_id(cfg->queue);
	s.in_syncs = (uintptr_t)in;
	s.in_sync_count = cfg->nwait;
	s.out_syncs = (uintptr_t)outs;
	s.out_sync_count = nout;

	{
		uint64_t lsize;

		ret = local_bytes(k, &s.launch, &lsize);
		if (ret)
			goto out;
		ret = param_page_get(dev, &page);
		if (ret)
			goto out;
		if (args && args->size)
			memcpy(dev->param_bos[page].map, args->data, args->size);
		else if (k->nparams)
			memset(dev->param_bos[page].map, 0, k->param_size);
		if (lsize)
			ret = local_mem(dev, &dev->param_bos[page], lsize);
	}
	if (!ret && vgpu_kernel_has_param(kernel, VGPU_PARAM_PRINTF)) {
		struct vgpu_param_bo *p = &dev->param_bos[page];

		ret = printf_mem(dev, p);
		if (!ret)
			*(struct vgpu_printf_header *)p->printf_map = (struct vgpu_printf_header){
				.capacity = VGPU_PRINTF_BYTES - sizeof(struct vgpu_printf_header),
			};
	}
	if (!ret && vgpu_kernel_has_param(kernel, VGPU_PARAM_ENVREGS)) {
		struct vgpu_param_bo *p = &dev->param_bos[page];

		for (uint32_t i = 0; i < k->nparams; i++) {
			const struct vgpu_obj_param *pa = &prog->obj.params[k->first_param + i];

			if (pa->type != VGPU_PARAM_ENVREGS)
				continue;
			for (uint32_t r = 0; r < VGPU_ENVREGS; r++)
				vgpu_put_le(p->map + pa->offset + 4 * r, args ? args->envreg[r] : 0, 4);
		}
	}
	if (!ret && vgpu_kernel_has_param(kernel, VGPU_PARAM_PARAMS)) {
		struct vgpu_param_bo *p = &dev->param_bos[page];

		for (uint32_t i = 0; i < k->nparams; i++)
			if (prog->obj.params[k->first_param + i].type == VGPU_PARAM_PARAMS)
				vgpu_put_le(p->map + prog->obj.params[k->first_param + i].offset, p->va, 8);
	}
	if (!ret && vgpu_kernel_extra_bos(kernel)) {
		struct vgpu_param_bo *p = &dev->param_bos[page];
		unsigned int h = nbos - vgpu_kernel_extra_bos(kernel);

		for (uint32_t i = 0; i < k->nparams; i++) {
			const struct vgpu_obj_param *pa = &prog->obj.params[k->first_param + i];

			if (pa->type == VGPU_PARAM_LOCAL)
				vgpu_put_le(p->map + pa->offset, p->local_va, 8);
			if (pa->type == VGPU_PARAM_DATA)
				vgpu_put_le(p->map + pa->offset, prog->data->va, 8);
			if (pa->type == VGPU_PARAM_PRINTF)
				vgpu_put_le(p->map + pa->offset, p->printf_va, 8);
		}
		if (k->local_bytes)
			handles[h++] = p->local_handle;
		if (prog->data)
			handles[h++] = prog->data->handle;
		if (vgpu_kernel_has_param(kernel, VGPU_PARAM_PRINTF))
			handles[h++] = p->printf_handle;
		if (!ret && prog->uses_heap)
			ret = vgpu_heap_attach(prog, &handles[h++]);
		if (!ret && prog->uses_cdp) {
			uint64_t va = 0;

			ret = vgpu_cdp_attach(dev, &handles[h], &va);
			h += VGPU_CDP_BOS;
			dl.area_va = va;
		}
	}
	if (!ret && (flags & VGPU_LAUNCH_TIMELINE)) {
		struct vgpu_param_bo *p = &dev->param_bos[page];

		ret = timeline_mem(dev, p, dev->timeline_bytes ? dev->timeline_bytes :
								VGPU_TIMELINE_DEFAULT_BYTES);
		if (!ret) {
			tl = (struct drm_vgpu_ext_timeline){
				.base.name = VGPU_SUBMIT_EXT_TIMELINE,
				.va = p->tl_va,
				.size = p->tl_size,
			};
			s.extensions = (uintptr_t)&tl;
			handles[nbos - 1] = p->tl_handle;
		}
	}
	if (!ret && dl.area_va && !uq) { /* device-side launch (cdp.c) */
		dl.base.name = VGPU_SUBMIT_EXT_DEVICE_LAUNCH;
		dl.base.next = s.extensions;
		s.extensions = (uintptr_t)&dl;
	}
	handles[1] = dev->param_bos[page].handle;
	s.launch.param_va = dev->param_bos[page].va;
	if (!ret && uq)
		ret = vgpu_userq_launch(uq, &s.launch,
					(flags & VGPU_LAUNCH_TIMELINE) ? tl.va : 0,
					(flags & VGPU_LAUNCH_TIMELINE) ? tl.size : 0,
					&useq, &uslot);
	else if (!ret && dl.area_va) {
		/* the children's printf records are this launch's (cdp.c) */
		pthread_mutex_lock(&dev->cdp_run_lock);
		ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_SUBMIT, &s);
		if (dev->ops->sync_submit) /* it has run */
			cdp_text = vgpu_cdp_printf_collect(dev, prog);
		pthread_mutex_unlock(&dev->cdp_run_lock);
	} else if (!ret && job && dev->ops->submit_job) {
		/* the job has run: how it ended comes with it */
		ret = dev->ops->submit_job(dev, &s, NULL, &job->status, &job->exc);
		job->done = !ret && (job->status.state == VGPU_JOB_DONE ||
				     job->status.state == VGPU_JOB_FAILED);
	} else if (!ret) {
		ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_SUBMIT, &s);
	}
	if (!ret && job) {
		vgpu_job_launched(job, dev, k, uq ? useq : s.job_id, &s.launch);
		if (uq) {
			vgpu_userq_get(uq);
			job->uq = uq;
			job->useq = useq;
			job->uslot = uslot;
		}
		/* with synchronous submission the job has run: collect now,
		 * before the next launch takes the page */
		if (job->tl_wanted && dev->ops->sync_submit)
			vgpu_timeline_collect(job, &dev->param_bos[page]);
		if (vgpu_kernel_has_param(kernel, VGPU_PARAM_PRINTF)) {
			if (dev->ops->sync_submit)
				job->printf_text = vgpu_printf_collect(prog,
								       dev->param_bos[page].printf_map);
			else
				job->printf_prog = prog;
		}
		text_append(&job->printf_text, cdp_text);
		cdp_text = NULL;
		/* asynchronous: when it has completed (param_page_release) */
		if (dl.area_va && !uq && !dev->ops->sync_submit)
			job->cdp_prog = prog;
	}
	free(cdp_text);
	param_page_put(dev, page, !ret, job, uq, useq);
	if (ret)
		goto out;
	if (job) {
		*jobp = job;
		job = NULL;
	}
out:
	if (job) {
		if (job->sync)
			vgpu_job_sync_put(dev, job->sync);
		free(job->printf_text);
		free(job);
	}
	if (in != in_small)
		free(in);
	if (outs != out_small)
		free(outs);
	if (handles != handles_small)
		free(handles);
	return ret;
}

int vgpu_kernel_launch(const struct vgpu_kernel *kernel,
		       const struct vgpu_launch_config *cfg,
		       const struct vgpu_args *args, struct vgpu_job **jobp)
{
	static const struct vgpu_launch_config defaults;
	uint32_t cluster[3];
	const struct vgpu_obj_kernel *k;
	struct vgpu_device *dev;
	struct vgpu_userq *uq;
	uint64_t smem;
	uint32_t flags;
	int ret;

	if (!kernel)
		return -EINVAL;
	dev = kernel->prog->dev;
	k = kernel->obj;
	cfg = cfg ? cfg : &defaults;
	if (!kernel->has_attrs) { /* launch_check()'s common case, inline */
		for (int i = 0; i < 3; i++)
			cluster[i] = dim(cfg->cluster[i]);
	} else if (launch_check(kernel, cfg, cluster, NULL, 0)) {
		return -EINVAL;
	}
	flags = cfg->flags | (jobp && dev->timeline_dir ? VGPU_LAUNCH_TIMELINE : 0);
	if (args && args->kernel != kernel)
		return -EINVAL;
	if (!args && kernel->needs_args)
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	smem = (uint64_t)k->smem_static + cfg->smem_bytes;
	if (smem > UINT32_MAX)
		return -EINVAL;
	uq = cfg->queue ? cfg->queue->uq : NULL;
	/* a user queue makes no dma_fence: nothing to wait for or signal */
	if (uq && (cfg->nwait || cfg->nsignal))
		return -EINVAL;
	if (cfg->nwait > VGPU_SUBMIT_MAX_SYNCS ||
	    cfg->nsignal + 1ull > VGPU_SUBMIT_MAX_SYNCS)
		return -E2BIG;
	if (kernel->inline_params && dev->inline_params && !uq &&
	    cfg->nwait <= LAUNCH_INLINE_SYNCS && cfg->nsignal <= LAUNCH_INLINE_SYNCS &&
	    !(flags & VGPU_LAUNCH_TIMELINE))
		return launch_inline(kernel, cfg, args, cluster, (uint32_t)smem, flags, jobp);
	return launch_general(kernel, cfg, args, jobp, cluster, (uint32_t)smem, flags, uq);
}
