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

/* What the converters know of the launch besides its records. */
struct vgpu_timeline_info {
	const char *kernel;
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
VGPU_HIDDEN int vgpu_trace_write_dot(FILE *f, const struct vgpu_trace_event *ev,
				     uint32_t n,
				     const struct vgpu_timeline_info *info);

#endif /* VGPU_TIMELINE_H */
