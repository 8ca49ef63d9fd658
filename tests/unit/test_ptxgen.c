// SPDX-License-Identifier: MIT
/*
 * ptxgen's kernels (tests/ptx/gen: one small kernel per PTX form, written
 * at build time into BUILD/ptxgen/) through the PTX front end on the
 * device's backend (sim on the host), compared bit for bit with what a
 * real GPU computed (tests/ptx/gen/MODULE.expected, written by
 * tests/ptx/gen/run-gpu.sh on a machine with one).
 *
 * Each kernel is compiled alone (the module's header and its own text),
 * so that one unsupported form does not hide the others, and is one test
 * of the KTAP output:
 *
 *   ok        it ran and every word matched the GPU's
 *   not ok    a word differed, the device raised an exception, or the
 *             front end crashed
 *   ok # SKIP the front end refused it ("unsupported: " and its message),
 *             or there is no GPU result for it yet, or it is a known
 *             difference (below)
 *
 * tests/ptx/gen/known-differences.txt lists, "MODULE KERNEL # why" a
 * line, the kernels whose results are known to differ from the GPU's
 * (bugs of the front end or the core not fixed yet, each a line to
 * delete when fixed): such a kernel that differs is skipped with its
 * reason, and one that now matches fails ("remove it from the list"), so
 * the list only ever shrinks with the bugs it names.
 *
 * and one test per module checks that its .expected was computed from
 * the PTX and inputs generated now (the hash in its header): an
 * .expected out of date fails, and its kernels are not compared.  Without
 * .expected files every kernel still compiles and runs, and is skipped.
 *
 * Each module runs in a child process; a crash names the kernel that was
 * being compiled or run, and the next child goes on after it.
 *
 *   test_ptxgen [--module NAME] [--coverage FILE.md] [--write-sim DIR]
 *
 * --coverage writes the instruction x form table of docs/ptx-coverage.md
 * (make ptx-coverage); --write-sim writes what the sim backend computed
 * in the .expected format, headed "the sim backend (NOT a GPU)", to diff
 * with the GPU's (an .expected must come from a GPU: one that does not
 * start with "# ptxgen: GPU " fails).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vgpu.h"
#include "vgpu_hw.h"
#include "cuda/cu_exc.h"
#include "test_paths.h"
#include "ptx/gen/ptxgen_manifest.h"

#if defined(__SANITIZE_ADDRESS__)
#define PTXGEN_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PTXGEN_LSAN 1
#endif
#endif
#ifdef PTXGEN_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define WAIT_NS (20ll * 1000000000ll)
#define MAXMOD 32

enum status { ST_MATCH, ST_DIFF, ST_NOGPU, ST_UNSUPPORTED, ST_EXCEPTION, ST_CRASH, ST_GPUERR,
	      ST_STALE, ST_LEAK, NSTATUS };

static const char *const status_name[NSTATUS] = {
	[ST_MATCH] = "matches the GPU",
	[ST_DIFF] = "differs from the GPU",
	[ST_NOGPU] = "runs (no GPU result yet)",
	[ST_UNSUPPORTED] = "unsupported",
	[ST_EXCEPTION] = "device exception",
	[ST_CRASH] = "front end crashed",
	[ST_GPUERR] = "the GPU failed it",
	[ST_STALE] = "not compared (.expected out of date)",
	[ST_LEAK] = "leaked memory (LeakSanitizer)",
};

struct result {
	uint32_t status;
	char msg[300];
};

struct module {
	char name[64];
	struct pg_module m;
	char *expected;      /* NULL: none */
	bool stale;
	char why[256];
	struct result *res;
};

static struct module mods[MAXMOD];
static int nmods;
/* --write-sim DIR: the sim backend's words in .expected format (not a GPU's) */
static const char *write_dir;

static void write_words(const struct module *md, const struct pg_kernel *k, const uint32_t *w)
{
	char path[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.expected", write_dir, md->name);
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "kernel %s %u\n", k->name, k->outwords);
	for (unsigned int j = 0; j < k->outwords; j++)
		fprintf(f, "%08x%c", w[j], j % 8 == 7 || j + 1 == k->outwords ? '\n' : ' ');
	fclose(f);
}

/* The words the GPU wrote for @name: a pointer to its first word's line,
 * the count in *@n; NULL, with *@err the GPU's error when it failed. */
static const char *gpu_words(const char *exp, const char *name, unsigned int *n, char *err,
			     size_t errlen)
{
	size_t len = strlen(name);

	err[0] = '\0';
	for (const char *p = exp; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, "kernel ", 7) || strncmp(p + 7, name, len) || p[7 + len] != ' ')
			continue;
		p += 8 + len;
		if (!strncmp(p, "error ", 6)) {
			snprintf(err, errlen, "%.*s", (int)strcspn(p + 6, "\n"), p + 6);
			return NULL;
		}
		if (sscanf(p, "%u", n) != 1)
			return NULL;
		return strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	}
	snprintf(err, errlen, "no result in the .expected file");
	return NULL;
}

/* The front end's message without its location: what follows "error: ". */
static void first_error(const char *log, char *out, size_t len)
{
	const char *e = strstr(log, "error: ");

	e = e ? e + 7 : log;
	snprintf(out, len, "%.*s", (int)strcspn(e, "\n"), e);
	if (!out[0])
		snprintf(out, len, "(no message)");
}

/*
 * The tensormap.replace kernels (g_tmr_*, ptxgen_table4.py) find the
 * runner's tensor map in their input's first 128 bytes: the backend's own
 * encoding (here vGPU's struct vgpu_tensor_map; ptxgen-run.cu writes the
 * GPU's, from cuTensorMapEncodeTiled) of a 2-D .u32 tensor over the
 * input, dims 16 x 16, row stride 64 bytes, box 8 x 4, element strides 1.
 */
static int tmap_in(const struct pg_kernel *k, struct vgpu_bo *in)
{
	struct vgpu_tensor_map t = { .magic = VGPU_TMAP_MAGIC, .rank = 2, .elem_size = 4 };

	if (strncmp(k->name, "g_tmr_", 6) || k->inwords * 4 < sizeof(t))
		return 0;
	t.base = vgpu_bo_gpu_address(in);
	t.dims[0] = t.dims[1] = 16;
	t.strides[0] = 64;
	t.box[0] = 8;
	t.box[1] = 4;
	t.elem_strides[0] = t.elem_strides[1] = 1;
	return vgpu_bo_write(in, 0, &t, sizeof(t));
}

static void run_kernel(struct vgpu_device *dev, struct module *md, unsigned int i,
		       struct result *r)
{
	const struct pg_kernel *k = &md->m.k[i];
	size_t hl = md->m.header_len, len = hl + k->ptx_len;
	char *text = malloc(len + 1), file[128], log[4096] = "", gerr[128];
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *vk;
	struct vgpu_bo *in = NULL, *out = NULL;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	uint32_t *got = calloc(k->outwords + 1, 4);
	struct vgpu_launch_config cfg = { .grid = { k->rows / 32 }, .block = { 32 },
					  .budget = 10000000 };
	const char *w;
	unsigned int n = 0, bad = 0;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!text || !got) {
		r->status = ST_EXCEPTION;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		goto out;
	}
	memcpy(text, md->m.header, hl);
	memcpy(text + hl, k->ptx, k->ptx_len);
	text[len] = '\0';
	snprintf(file, sizeof(file), "ptxgen/%s.ptx", md->name);
	ret = vgpu_program_from_ptx(dev, text, len, file, &prog, log, sizeof(log));
	if (ret) {
		r->status = ST_UNSUPPORTED;
		first_error(log, r->msg, sizeof(r->msg));
		goto out;
	}
	r->status = ST_EXCEPTION;
	if ((ret = vgpu_program_find_kernel(prog, k->name, &vk)) ||
	    (ret = vgpu_bo_new(dev, k->inwords * 4 + 4, 0, &in)) ||
	    (ret = vgpu_bo_new(dev, k->outwords * 4 + 4, 0, &out)) ||
	    (ret = vgpu_bo_write(in, 0, k->in, k->inwords * 4)) || (ret = tmap_in(k, in)) ||
	    (ret = vgpu_bo_write(out, 0, got, k->outwords * 4)) ||
	    (ret = vgpu_args_new(vk, &args)) || (ret = vgpu_args_set_bo(args, 0, out, 0)) ||
	    (ret = vgpu_args_set_bo(args, 1, in, 0)) ||
	    (ret = vgpu_kernel_launch(vk, &cfg, args, &job))) {
		snprintf(r->msg, sizeof(r->msg), "setting up the launch: %s", strerror(-ret));
		goto out;
	}
	ret = vgpu_job_wait(job, WAIT_NS);
	if (ret) {
		struct vgpu_exception_record rec;
		char desc[1024] = "";

		vgpu_job_describe(job, desc, sizeof(desc));
		snprintf(r->msg, sizeof(r->msg), "%s: %.*s", strerror(-ret),
			 (int)strcspn(desc, "\n"), desc);
		/* the GPU failed it too, with the error libcuda reports for this */
		if (ret == -EIO && !vgpu_job_exception(job, &rec) && md->expected && !md->stale &&
		    !gpu_words(md->expected, k->name, &n, gerr, sizeof(gerr)) &&
		    !strcmp(gerr, cuv_exc_result_name(rec.code)))
			r->status = ST_MATCH;
		goto out;
	}
	if ((ret = vgpu_bo_read(out, 0, got, k->outwords * 4))) {
		snprintf(r->msg, sizeof(r->msg), "reading the output: %s", strerror(-ret));
		goto out;
	}
	if (write_dir)
		write_words(md, k, got);
	if (md->stale || !md->expected) {
		r->status = md->stale ? ST_STALE : ST_NOGPU;
		goto out;
	}
	w = gpu_words(md->expected, k->name, &n, gerr, sizeof(gerr));
	if (!w) {
		r->status = gerr[0] && strcmp(gerr, "no result in the .expected file") ? ST_GPUERR
										     : ST_DIFF;
		snprintf(r->msg, sizeof(r->msg), "%s", gerr);
		goto out;
	}
	if (n != k->outwords) {
		r->status = ST_DIFF;
		snprintf(r->msg, sizeof(r->msg), "the GPU wrote %u words, the manifest says %u", n,
			 k->outwords);
		goto out;
	}
	r->status = ST_MATCH;
	for (unsigned int j = 0; j < n; j++) {
		char *end;
		uint32_t want = (uint32_t)strtoul(w, &end, 16);

		w = end;
		if (want == got[j])
			continue;
		if (!bad++) {
			unsigned int per = k->outwords / k->rows, row = j / per;
			unsigned int inper = k->inwords / k->rows;
			int o = snprintf(r->msg, sizeof(r->msg),
					 "row %u word %u: %08x, the GPU %08x; inputs", row, j % per,
					 got[j], want);

			for (unsigned int q = 0; q < inper && o > 0 && (size_t)o < sizeof(r->msg);
			     q++)
				o += snprintf(r->msg + o, sizeof(r->msg) - o, " %08x",
					      k->in[row * inper + q]);
		}
	}
	if (bad) {
		size_t o = strlen(r->msg);

		r->status = ST_DIFF;
		snprintf(r->msg + o, sizeof(r->msg) - o, " (%u of %u words differ)", bad, n);
	}
out:
	vgpu_job_free(job);
	vgpu_args_free(args);
	vgpu_bo_free(in);
	vgpu_bo_free(out);
	vgpu_program_free(prog);
	free(got);
	free(text);
}

/*
 * Child: kernels @from.. of @md, one record each down @fd.  The special
 * registers run on the h100 model, the shape of the GPU whose results
 * they are compared with (%nwarpid: its 64 warps an SM).
 */
static void child(struct module *md, unsigned int from, int fd)
{
	struct vgpu_device *dev = NULL;
	struct result r;
	int ret;

	if (!strcmp(md->name, "sreg"))
		setenv("VGPU_SIM_MODEL", "h100", 1);
	ret = vgpu_device_open(NULL, &dev);

	for (unsigned int i = from; i < md->m.nk; i++) {
		if (ret) {
			memset(&r, 0, sizeof(r));
			r.status = ST_EXCEPTION;
			snprintf(r.msg, sizeof(r.msg), "vgpu_device_open: %s", strerror(-ret));
		} else {
			run_kernel(dev, md, i, &r);
#ifdef PTXGEN_LSAN
			/* what compiling and running the last 64 kernels left behind */
			fflush(stdout);
			if (((i - from) % 64 == 63 || i + 1 == md->m.nk) &&
			    __lsan_do_recoverable_leak_check()) {
				r.status = ST_LEAK;
				snprintf(r.msg, sizeof(r.msg), "in kernels %s..%s (report above)",
					 md->m.k[i >= from + 63 ? i - 63 : from].name, md->m.k[i].name);
			}
#endif
		}
		if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
			break;
	}
	vgpu_device_close(dev);
}

static void run_module(struct module *md)
{
	unsigned int next = 0;

	md->res = calloc(md->m.nk ? md->m.nk : 1, sizeof(*md->res));
	while (md->res && next < md->m.nk) {
		int p[2], st = 0;
		pid_t pid;
		struct result r;

		if (pipe(p))
			exit(1);
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			exit(1);
		if (pid == 0) {
			close(p[0]);
			child(md, next, p[1]);
			close(p[1]);
			_exit(0);
		}
		close(p[1]);
		while (next < md->m.nk && read(p[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
			md->res[next++] = r;
		close(p[0]);
		waitpid(pid, &st, 0);
		if (next < md->m.nk) {
			struct result *c = &md->res[next++];

			c->status = ST_CRASH;
			if (WIFSIGNALED(st))
				snprintf(c->msg, sizeof(c->msg), "signal %d (%s)", WTERMSIG(st),
					 strsignal(WTERMSIG(st)));
			else
				snprintf(c->msg, sizeof(c->msg), "exit status %d",
					 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
	}
}

/* .expected files of no module ptxgen writes: their names, or 0 of them. */
static int orphans(char *out, size_t len)
{
	char dir[PATH_MAX + 32];
	struct dirent *e;
	DIR *d;
	int n = 0;

	out[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/tests/ptx/gen", test_root);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		bool known = false;

		if (l < 10 || strcmp(e->d_name + l - 9, ".expected"))
			continue;
		for (int i = 0; i < nmods; i++)
			known |= strlen(mods[i].name) == l - 9 &&
				 !strncmp(mods[i].name, e->d_name, l - 9);
		if (!known && ++n)
			snprintf(out + strlen(out), len - strlen(out), " %s", e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

static void load_module(struct module *md, const char *name)
{
	char dir[PATH_MAX + 16], path[PATH_MAX + 64], err[256];
	unsigned long long h = 0;
	const char *p;

	snprintf(md->name, sizeof(md->name), "%s", name);
	snprintf(dir, sizeof(dir), "%s/ptxgen", test_build);
	if (pg_module_load(&md->m, dir, name, err, sizeof(err))) {
		printf("# %s\n", err);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/tests/ptx/gen/%s.expected", test_root, name);
	md->expected = pg_read_file(path, NULL);
	if (!md->expected) {
		snprintf(md->why, sizeof(md->why), "tests/ptx/gen/%s.expected is missing: no GPU "
			 "results yet (run tests/ptx/gen/run-gpu.sh on a machine with a GPU)", name);
		return;
	}
	if (strncmp(md->expected, "# ptxgen: GPU ", 14)) {
		md->stale = true;
		snprintf(md->why, sizeof(md->why), "tests/ptx/gen/%s.expected does not start with "
			 "\"# ptxgen: GPU \": not what run-gpu.sh writes", name);
		return;
	}
	p = strstr(md->expected, "# module ");
	if (!p || sscanf(p, "# module %*s hash %llx", &h) != 1 || h != md->m.hash) {
		md->stale = true;
		snprintf(md->why, sizeof(md->why), "tests/ptx/gen/%s.expected is out of date: its "
			 "hash %016llx, the generated PTX and inputs %016llx (run "
			 "tests/ptx/gen/run-gpu.sh again)", name, h,
			 (unsigned long long)md->m.hash);
	}
}

/* @s for a Markdown table cell: '|' escaped. */
static void cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/*
 * The outcome a form is listed under: the status and, but for a
 * difference, the message without the form's own text (the front end
 * quotes it: "unsupported PTX construct 'atom.global.and.b64': atomics on
 * other than 32-bit integers" is listed as "unsupported PTX construct:
 * atomics on other than 32-bit integers", for every form it names).
 */
static void outcome_key(const struct result *r, const char *instr, char *out, size_t len)
{
	const char *q = strchr(r->msg, '\'');
	const char *e = q ? strchr(q + 1, '\'') : NULL;

	if (r->status == ST_DIFF || !r->msg[0]) {
		snprintf(out, len, "%s", status_name[r->status]);
		return;
	}
	if (!q || !e || strncmp(q + 1, instr, strlen(instr))) {
		snprintf(out, len, "%s: %s", status_name[r->status], r->msg);
		return;
	}
	snprintf(out, len, "%s: %.*s%s", status_name[r->status],
		 (int)(q - r->msg - (q > r->msg && q[-1] == ' ')), r->msg, e + 1);
}

/*
 * docs/ptx-coverage.md: per module, per instruction, the forms grouped by
 * outcome (and the front end's message).
 */
static void coverage(const char *path, const int counts[NSTATUS])
{
	FILE *f = fopen(path, "w");
	int have = 0;

	if (!f) {
		printf("# cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	for (int i = 0; i < nmods; i++)
		have += mods[i].expected && !mods[i].stale;
	fprintf(f, "<!-- SPDX-License-Identifier: MIT -->\n"
		   "<!-- generated by `make ptx-coverage` (tests/unit/test_ptxgen.c): do not edit -->\n"
		   "# PTX coverage\n\n"
		   "What the PTX front end does with each form of each PTX instruction that "
		   "`ptxas -arch=sm_90a` (CUDA 13.0) accepts, tensor-core, texture and surface "
		   "instructions aside: tests/ptx/gen/ptxgen writes one small kernel per form "
		   "(edge-case inputs: zeros of both signs, infinities, NaNs with payloads, "
		   "denormals, INT_MIN, -1, shifts at and past the width, out-of-range "
		   "conversions, every rounding mode), `test_ptxgen` compiles each alone with "
		   "the front end, runs it on the sim backend and compares every word with what "
		   "a GPU computed (tests/ptx/gen/*.expected, written by "
		   "tests/ptx/gen/run-gpu.sh).\n\n");
	if (have < nmods)
		fprintf(f, "**GPU results: %d of %d modules.** Where there are none yet, "
			   "\"runs\" means that the front end compiled the form and the kernel "
			   "ran without a device exception; whether it computes what the GPU "
			   "does is not known until run-gpu.sh has run.\n\n", have, nmods);
	fprintf(f, "Kernels: %d match the GPU, %d differ from it, %d run (no GPU result), "
		   "%d unsupported, %d device exceptions, %d front-end crashes.\n\n",
		counts[ST_MATCH], counts[ST_DIFF], counts[ST_NOGPU], counts[ST_UNSUPPORTED],
		counts[ST_EXCEPTION], counts[ST_CRASH]);
	fprintf(f, "| module | forms | match the GPU | differ | run, no GPU result | "
		   "unsupported | device exception | crash |\n|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nmods; i++) {
		int c[NSTATUS] = { 0 };

		for (unsigned int k = 0; k < mods[i].m.nk; k++)
			c[mods[i].res[k].status]++;
		fprintf(f, "| [%s](#%s) | %u | %d | %d | %d | %d | %d | %d |\n", mods[i].name,
			mods[i].name, mods[i].m.nk, c[ST_MATCH], c[ST_DIFF],
			c[ST_NOGPU] + c[ST_STALE], c[ST_UNSUPPORTED], c[ST_EXCEPTION], c[ST_CRASH]);
	}
	for (int i = 0; i < nmods; i++) {
		struct module *md = &mods[i];
		bool *done = calloc(md->m.nk + 1, 1);
		char (*key)[640] = calloc(md->m.nk + 1, sizeof(*key));

		fprintf(f, "\n## %s\n\n| instruction | outcome | forms |\n|---|---|---|\n",
			md->name);
		for (unsigned int k = 0; key && k < md->m.nk; k++)
			outcome_key(&md->res[k], md->m.k[k].instr, key[k], sizeof(key[k]));
		/* each instruction's rows together (in the order the instructions
		 * first appear), one per outcome */
		for (unsigned int a = 0; done && key && a < md->m.nk; a++) {
			const char *instr = md->m.k[a].instr;

			if (done[a])
				continue;
			for (unsigned int k = a; k < md->m.nk; k++) {
				const char *sep = "";

				if (done[k] || strcmp(md->m.k[k].instr, instr))
					continue;
				fprintf(f, "| %s | ", instr);
				cell(f, key[k]);
				fputs(" | ", f);
				for (unsigned int j = k; j < md->m.nk; j++) {
					if (done[j] || strcmp(md->m.k[j].instr, instr) ||
					    strcmp(key[j], key[k]))
						continue;
					done[j] = true;
					fprintf(f, "%s`", sep);
					cell(f, md->m.k[j].form);
					fputc('`', f);
					sep = ", ";
				}
				fputs(" |\n", f);
			}
		}
		free(key);
		free(done);
	}
	fclose(f);
	printf("# wrote %s\n", path);
}

/* tests/ptx/gen/known-differences.txt, whole ("" if none) */
static char *known;

static void known_load(void)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/tests/ptx/gen/known-differences.txt", test_root);
	known = pg_read_file(path, NULL);
}

/* The reason "MODULE KERNEL # why" of the list gives, or NULL. */
static const char *known_why(const char *module, const char *kernel, char *buf, size_t len)
{
	char key[256];
	size_t kl;

	if (!known)
		return NULL;
	kl = (size_t)snprintf(key, sizeof(key), "%s %s", module, kernel);
	for (const char *l = known; *l;) {
		const char *e = strchr(l, '\n');
		size_t ll = e ? (size_t)(e - l) : strlen(l);

		if (ll > kl && !strncmp(l, key, kl) && (l[kl] == ' ' || l[kl] == '\t')) {
			const char *w = memchr(l + kl, '#', ll - kl);

			if (w) {
				w++;
				while (*w == ' ')
					w++;
				snprintf(buf, len, "%.*s", (int)(ll - (size_t)(w - l)), w);
			} else {
				snprintf(buf, len, "(no reason given)");
			}
			return buf;
		}
		l = e ? e + 1 : l + ll;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *only = NULL, *cov = NULL;
	char path[PATH_MAX + 32], *list, *line, *save = NULL;
	int counts[NSTATUS] = { 0 }, pass = 0, fail = 0, skip = 0, n = 1, nknown = 0;
	unsigned int total = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--module"))
			only = argv[i + 1];
		else if (!strcmp(argv[i], "--coverage"))
			cov = argv[i + 1];
		else if (!strcmp(argv[i], "--write-sim"))
			write_dir = argv[i + 1];
	}
	printf("TAP version 13\n");
	known_load();
	snprintf(path, sizeof(path), "%s/ptxgen/modules.txt", test_build);
	list = pg_read_file(path, NULL);
	if (!list) {
		printf("# %s is missing: the build writes it (tests/ptx/gen/ptxgen)\n1..0\n", path);
		return 1;
	}
	for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if ((only && strcmp(only, line)) || nmods == MAXMOD)
			continue;
		load_module(&mods[nmods], line);
		total += mods[nmods++].m.nk + 1;
	}
	free(list);
	printf("1..%u\n", total + !only);
	if (!only) {
		char names[1024];

		if (orphans(names, sizeof(names))) {
			printf("# .expected files of no module ptxgen writes (remove them or run "
			       "run-gpu.sh again):%s\n", names);
			printf("not ok %d ptxgen.every_expected_has_a_module\n", n++);
			fail++;
		} else {
			printf("ok %d ptxgen.every_expected_has_a_module\n", n++);
			pass++;
		}
	}
	for (int i = 0; i < nmods; i++) {
		struct module *md = &mods[i];

		if (md->why[0])
			printf("# %s\n", md->why);
		if (md->stale) {
			printf("not ok %d ptxgen.%s.expected_is_current\n", n++, md->name);
			fail++;
		} else if (!md->expected) {
			printf("ok %d ptxgen.%s.expected_is_current # SKIP no .expected\n", n++,
			       md->name);
			skip++;
		} else {
			printf("ok %d ptxgen.%s.expected_is_current\n", n++, md->name);
			pass++;
		}
		if (write_dir) {
			char wp[PATH_MAX + 128];
			FILE *f;

			snprintf(wp, sizeof(wp), "%s/%s.expected", write_dir, md->name);
			f = fopen(wp, "w");
			if (f) {
				fprintf(f, "# ptxgen: the sim backend (NOT a GPU)\n# module %s hash "
					"%016llx kernels %u\n", md->name,
					(unsigned long long)md->m.hash, md->m.nk);
				fclose(f);
			}
		}
		run_module(md);
		for (unsigned int k = 0; k < md->m.nk && md->res; k++) {
			const struct result *r = &md->res[k];
			const char *name = md->m.k[k].name;
			bool bad = r->status == ST_DIFF || r->status == ST_CRASH || r->status == ST_LEAK ||
				   (r->status == ST_EXCEPTION && md->expected && !md->stale);

			char why[200];
			const char *kw = known_why(md->name, name, why, sizeof(why));

			counts[r->status]++;
			if (bad && r->status == ST_DIFF && kw) {
				printf("ok %d ptxgen.%s.%s # SKIP known difference: %s\n", n++,
				       md->name, name, kw);
				skip++;
				nknown++;
			} else if (r->status == ST_MATCH && kw) {
				printf("# %s (%s) matches the GPU now: remove it from "
				       "tests/ptx/gen/known-differences.txt\n", name, md->m.k[k].form);
				printf("not ok %d ptxgen.%s.%s\n", n++, md->name, name);
				fail++;
			} else if (bad) {
				printf("# %s (%s): %s: %s\n", name, md->m.k[k].form,
				       status_name[r->status], r->msg);
				printf("not ok %d ptxgen.%s.%s\n", n++, md->name, name);
				fail++;
			} else if (r->status == ST_MATCH) {
				printf("ok %d ptxgen.%s.%s\n", n++, md->name, name);
				pass++;
			} else {
				printf("ok %d ptxgen.%s.%s # SKIP %s%s%s\n", n++, md->name, name,
				       status_name[r->status], r->msg[0] ? ": " : "", r->msg);
				skip++;
			}
		}
	}
	printf("# ptxgen: %d kernels match the GPU, %d differ (%d of them known differences), "
	       "%d run without a GPU result, %d unsupported, %d device exceptions, "
	       "%d front-end crashes\n",
	       counts[ST_MATCH], counts[ST_DIFF], nknown, counts[ST_NOGPU],
	       counts[ST_UNSUPPORTED], counts[ST_EXCEPTION], counts[ST_CRASH]);
	if (cov)
		coverage(cov, counts);
	for (int i = 0; i < nmods; i++) {
		free(mods[i].res);
		free(mods[i].expected);
		pg_module_free(&mods[i].m);
	}
	free(known);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", pass, fail, skip);
	return fail ? 1 : 0;
}

