// SPDX-License-Identifier: MIT
/*
 * Jobs' timelines (VGPU_LAUNCH_TIMELINE): collected from their parameter
 * page's buffer once they have completed, saved for vgpu-trace under
 * $VGPU_TIMELINE_DIR, and the public API over them (vgpu.h "Timelines").
 * launch.c makes the buffers and submits them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu_priv.h"
#include "timeline.h"

/* $VGPU_TIMELINE_DIR: record every launch with a job handle, save each. */
const char *vgpu_timeline_dir(void)
{
	const char *d = getenv("VGPU_TIMELINE_DIR");

	return d && d[0] ? d : NULL;
}

/* The file's drm-client-id (what the driver's tracepoints name); 0 on sim. */
static uint64_t client_id(struct vgpu_device *dev)
{
	char path[64], line[128];
	unsigned long long id = 0;
	FILE *f;

	if (dev->backend != VGPU_BACKEND_DRM)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", dev->fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "drm-client-id: %llu", &id) == 1)
			break;
	if (f)
		fclose(f);
	return id;
}

/* Save the job's timeline as DIR/job-CLIENT-ID.vgtl for vgpu-trace. */
static void timeline_save(struct vgpu_job *job, const char *dir)
{
	struct vgpu_jobtl_file h = {
		.magic = VGPU_JOBTL_MAGIC,
		.client = client_id(job->dev),
		.job = job->id,
		.nwarps = job->nwarps,
		.dropped = job->tl_dropped,
		.count = job->tl_n,
	};
	char path[4096];
	FILE *f;

	memcpy(h.grid, job->grid, sizeof(h.grid));
	memcpy(h.block, job->block, sizeof(h.block));
	memcpy(h.cluster, job->cluster, sizeof(h.cluster));
	snprintf(h.kernel, sizeof(h.kernel), "%s", job->kernel);
	snprintf(path, sizeof(path), "%s/job-%llu-%llu.vgtl", dir,
		 (unsigned long long)h.client, (unsigned long long)h.job);
	f = fopen(path, "wb");
	if (!f)
		return; /* a debugging aid: the job itself is fine */
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(job->tl_ev, sizeof(*job->tl_ev), job->tl_n, f) != job->tl_n) {
		fclose(f);
		remove(path);
		return;
	}
	fclose(f);
}

/* Copy the job's timeline out of its page's buffer (it has completed). */
void vgpu_timeline_collect(struct vgpu_job *job, const struct vgpu_param_bo *p)
{
	if (!job->tl_wanted || job->tl_collected)
		return;
	job->tl_collected = true;
	job->tl_status = vgpu_trace_read(p->tl_map, p->tl_size, &job->tl_ev,
					 &job->tl_n, &job->tl_dropped);
	if (!job->tl_status && job->dev->timeline_dir)
		timeline_save(job, job->dev->timeline_dir);
}

int vgpu_device_set_timeline_bytes(struct vgpu_device *dev, uint64_t bytes)
{
	if (!dev || bytes < sizeof(struct vgpu_trace_header) || bytes % 8 ||
	    bytes > VGPU_TRACE_MAX_BYTES)
		return -EINVAL;
	pthread_mutex_lock(&dev->param_lock);
	dev->timeline_bytes = bytes;
	pthread_mutex_unlock(&dev->param_lock);
	return 0;
}

/* The job's timeline, once it has completed. */
static int job_timeline(struct vgpu_job *job)
{
	if (!job->tl_wanted)
		return -ENODATA;
	if (!job->done) {
		int ret = vgpu_job_wait(job, 0);

		if (ret == -ETIME)
			return -EBUSY;
	}
	if (!job->tl_collected)
		return -EBUSY;
	return job->tl_status;
}

int vgpu_job_timeline(struct vgpu_job *job, const struct vgpu_trace_event **events,
		      uint32_t *count, uint64_t *dropped)
{
	int ret;

	if (!job || !events || !count)
		return -EINVAL;
	ret = job_timeline(job);
	if (ret)
		return ret;
	*events = job->tl_ev;
	*count = job->tl_n;
	if (dropped)
		*dropped = job->tl_dropped;
	return 0;
}

static void timeline_info(struct vgpu_job *job, struct vgpu_timeline_info *in)
{
	*in = (struct vgpu_timeline_info){
		.kernel = job->kernel,
		.nwarps = job->nwarps,
		.exc = job->exc.code != VGPU_EXC_NONE ? &job->exc : NULL,
	};
	memcpy(in->grid, job->grid, sizeof(in->grid));
	memcpy(in->block, job->block, sizeof(in->block));
	memcpy(in->cluster, job->cluster, sizeof(in->cluster));
}

int vgpu_job_write_timeline(struct vgpu_job *job, FILE *f)
{
	struct vgpu_timeline_info in;
	int ret;

	if (!job || !f)
		return -EINVAL;
	ret = job_timeline(job);
	if (ret)
		return ret;
	timeline_info(job, &in);
	return vgpu_trace_write_json(f, job->tl_ev, job->tl_n, job->tl_dropped, &in);
}

int vgpu_job_write_deadlock_graph(struct vgpu_job *job, FILE *f)
{
	struct vgpu_timeline_info in;
	int ret;

	if (!job || !f)
		return -EINVAL;
	ret = job_timeline(job);
	if (ret && ret != -ENODATA)
		return ret;
	if (job->exc.code == VGPU_EXC_NONE)
		return -ENOENT;
	timeline_info(job, &in);
	return vgpu_trace_write_dot(f, ret ? NULL : job->tl_ev, ret ? 0 : job->tl_n, &in);
}
