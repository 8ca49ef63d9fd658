// SPDX-License-Identifier: MIT
/*
 * vgpu-trace: a system timeline of a workload.  Records the vgpu driver's
 * tracepoints and the gpu_scheduler ones with tracefs while COMMAND runs,
 * has libvgpu record the timeline of each of its jobs
 * ($VGPU_TIMELINE_DIR), and merges both into one Chrome trace-event file
 * (libvgpu/trace/systrace.c says what is in it; docs/tools.md shows it).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/timeline.h"

#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: vgpu-trace [-o FILE] [--tracefs DIR] [--] COMMAND [ARG]...\n"
	"       vgpu-trace --merge TRACE [--timelines DIR] [-o FILE]\n"
	"Record the vgpu driver's and drm_sched's tracepoints (tracefs) while\n"
	"COMMAND runs, with the timeline of every job it launches through\n"
	"libvgpu, and write them as one Chrome trace-event file (default\n"
	"vgpu-trace.json) for ui.perfetto.dev or chrome://tracing.  Needs root\n"
	"(tracefs).  Exit status: COMMAND's, or 1 when tracing failed.\n"
	"\n"
	"  -o, --output FILE   where the trace goes\n"
	"  --tracefs DIR       tracefs (default /sys/kernel/tracing, mounted\n"
	"                      there if it is not)\n"
	"  --merge TRACE       no COMMAND: merge a saved tracefs text TRACE ...\n"
	"  --timelines DIR     ... with the job timelines saved in DIR\n"
	"  -h, --help          this text\n";

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap);

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	/* tracefs files have no size: read to the end */
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *p = realloc(buf, cap *= 2);

			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* Write @val to tracefs file @name; @optional: a missing file is fine. */
static int tfs_write(const char *tfs, const char *name, const char *val,
		     int optional)
{
	char path[4096];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", tfs, name);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		if (optional && errno == ENOENT)
			return 0;
		fprintf(stderr, "vgpu-trace: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	if (!ok)
		fprintf(stderr, "vgpu-trace: writing '%s' to %s: %s\n", val, path,
			strerror(errno));
	close(fd);
	return ok ? 0 : -1;
}

static int write_trace(const char *out, const char *text, const char *dir)
{
	FILE *f = fopen(out, "w");
	int ret;

	if (!f) {
		fprintf(stderr, "vgpu-trace: %s: %s\n", out, strerror(errno));
		return -1;
	}
	ret = vgpu_systrace_write(f, text, dir);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret)
		fprintf(stderr, "vgpu-trace: %s: %s\n", out, strerror(-ret));
	return ret ? -1 : 0;
}

static void rm_dir(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "vgpu-trace: could not remove %s\n", dir);
}

static int record(const char *tfs, const char *out, char **argv)
{
	char dir[] = "/tmp/vgpu-trace-XXXXXX", tracefile[4096];
	struct stat sb;
	int status = 1, wst;
	char *text;
	pid_t pid;

	if (stat(tfs, &sb) || stat(strcat(strcpy(tracefile, tfs), "/trace"), &sb)) {
		mkdir(tfs, 0755);
		if (mount("tracefs", tfs, "tracefs", 0, NULL) && errno != EBUSY) {
			fprintf(stderr, "vgpu-trace: mounting tracefs on %s: %s\n", tfs,
				strerror(errno));
			return 1;
		}
	}
	if (!mkdtemp(dir)) {
		perror("vgpu-trace: mkdtemp");
		return 1;
	}
	if (tfs_write(tfs, "tracing_on", "0", 0) ||
	    tfs_write(tfs, "trace_clock", "mono", 0) ||
	    tfs_write(tfs, "trace", "", 0) ||
	    tfs_write(tfs, "buffer_size_kb", "4096", 1) ||
	    tfs_write(tfs, "events/vgpu/enable", "1", 0) ||
	    tfs_write(tfs, "events/gpu_scheduler/enable", "1", 1) ||
	    tfs_write(tfs, "tracing_on", "1", 0)) {
		fprintf(stderr, "vgpu-trace: is vgpu.ko loaded, and are you root?\n");
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("vgpu-trace: fork");
		goto out;
	}
	if (!pid) {
		setenv("VGPU_TIMELINE_DIR", dir, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "vgpu-trace: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &wst, 0) < 0) {
		perror("vgpu-trace: waitpid");
		goto out;
	}
	tfs_write(tfs, "tracing_on", "0", 0);
	text = slurp(tracefile);
	if (!text) {
		fprintf(stderr, "vgpu-trace: %s: %s\n", tracefile, strerror(errno));
		goto out;
	}
	if (getenv("VGPU_TRACE_KEEP")) { /* debugging: the raw text beside the output */
		char keep[4200];
		FILE *k;

		snprintf(keep, sizeof(keep), "%s.txt", out);
		k = fopen(keep, "w");
		if (k) {
			fputs(text, k);
			fclose(k);
		}
	}
	if (!write_trace(out, text, dir))
		status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	free(text);
out:
	tfs_write(tfs, "tracing_on", "0", 1);
	tfs_write(tfs, "events/vgpu/enable", "0", 1);
	tfs_write(tfs, "events/gpu_scheduler/enable", "0", 1);
	rm_dir(dir);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "tracefs", required_argument, NULL, 't' },
		{ "merge", required_argument, NULL, 'm' },
		{ "timelines", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = "vgpu-trace.json", *tfs = "/sys/kernel/tracing";
	const char *merge = NULL, *dir = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': tfs = optarg; break;
		case 'm': merge = optarg; break;
		case 'd': dir = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return EXIT_USAGE;
		}
	}
	if (merge) {
		char *text;
		int ret;

		if (optind != argc) {
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
		text = slurp(merge);
		if (!text) {
			fprintf(stderr, "vgpu-trace: %s: %s\n", merge, strerror(errno));
			return 1;
		}
		ret = write_trace(out, text, dir);
		free(text);
		return ret ? 1 : 0;
	}
	if (optind == argc || dir) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	return record(tfs, out, argv + optind);
}
