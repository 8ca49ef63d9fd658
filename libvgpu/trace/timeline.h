/* SPDX-License-Identifier: MIT */
/*
 * Timelines of VGPU_LAUNCH_TIMELINE launches (timeline.c): records as
 * text, as Chrome trace-event JSON, and the wait-for graph of a deadlock
 * as Graphviz DOT (deadlock_graph.c).
 */
#ifndef VGPU_TIMELINE_H
#define VGPU_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "vgpu_priv.h"

/*
 * Where a launch's events go in a larger trace (vgpu-trace's system
 * timeline): processes from @pid_base + 1, flow and copy ids made unique
 * by @id_base, process names prefixed with @label, and time in us from
 * @t0_us at @us_per_cycle (instead of plain cycles).
 */
struct vgpu_timeline_map {
	uint32_t pid_base;
	uint64_t id_base;
	double t0_us, us_per_cycle;
	const char *label;
};

/* What the converters know of the launch besides its records. */
struct vgpu_timeline_info {
	const char *kernel;
	const struct vgpu_timeline_map *map; /* NULL: a trace of its own */
	uint32_t grid[3], block[3], cluster[3];
	uint32_t nwarps; /* per CTA */
	/* the job's exception record, or NULL */
	const struct vgpu_exception_record *exc;
};

VGPU_HIDDEN const char *vgpu_trace_type_name(uint32_t type);
VGPU_HIDDEN const char *vgpu_trace_wait_name(uint32_t reason);
VGPU_HIDDEN const char *vgpu_trace_copy_name(uint32_t kind);
/* One line per record (the sim backend's --trace). */
VGPU_HIDDEN void vgpu_trace_print(FILE *f, const struct vgpu_trace_event *ev);
/*
 * The records of timeline buffer @buf of @size bytes (malloc'd into *@out):
 * -ENODATA when the launch wrote none, -EIO when the header is not one
 * the device writes.
 */
VGPU_HIDDEN int vgpu_trace_read(const void *buf, uint64_t size,
				struct vgpu_trace_event **out, uint32_t *count,
				uint64_t *dropped);
VGPU_HIDDEN int vgpu_trace_write_json(FILE *f, const struct vgpu_trace_event *ev,
				      uint32_t n, uint64_t dropped,
				      const struct vgpu_timeline_info *info);
/*
 * Only the events, each preceded by ",\n" unless *@first (then cleared):
 * to be spliced into a "traceEvents" array.
 */
VGPU_HIDDEN int vgpu_trace_write_events(FILE *f, const struct vgpu_trace_event *ev,
					uint32_t n, const struct vgpu_timeline_info *info,
					int *first);
VGPU_HIDDEN int vgpu_trace_write_dot(FILE *f, const struct vgpu_trace_event *ev,
				     uint32_t n,
				     const struct vgpu_timeline_info *info);

/*
 * What libvgpu saves of each job's timeline under $VGPU_TIMELINE_DIR
 * (DIR/job-CLIENT-ID.vgtl, CLIENT the file's drm-client-id, 0 on sim):
 * this header, then @count records.  vgpu-trace merges them.
 */
#define VGPU_JOBTL_MAGIC "VGPUJTL1"
struct vgpu_jobtl_file {
	char magic[8];
	uint64_t client, job;
	uint32_t grid[3], block[3], cluster[3], nwarps;
	char kernel[64];
	uint64_t dropped;
	uint32_t count, pad;
};

/*
 * The system timeline: @ftrace_text (tracefs "trace" with the vgpu and
 * gpu_scheduler events, trace_clock mono) merged with the timelines in
 * @timeline_dir (NULL: none), as Chrome trace-event JSON (systrace.c).
 */
VGPU_HIDDEN int vgpu_systrace_write(FILE *f, const char *ftrace_text,
				    const char *timeline_dir);

/* job_timeline.c: $VGPU_TIMELINE_DIR (NULL when unset), and the job's
 * timeline copied out of its page's buffer (the job has completed) */
VGPU_HIDDEN const char *vgpu_timeline_dir(void);
VGPU_HIDDEN void vgpu_timeline_collect(struct vgpu_job *job, const struct vgpu_param_bo *p);

#endif /* VGPU_TIMELINE_H */
