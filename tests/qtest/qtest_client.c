/* SPDX-License-Identifier: MIT */
/*
 * qtest protocol client: see qtest_client.h.
 */
#include "qtest_client.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QTS_TIMEOUT_MS 60000
#define QTS_MAX_ARGS 64

struct qts {
	pid_t pid;
	int fd;
	bool dead;
	char dir[64];
	char rbuf[1 << 16]; /* received, not yet consumed */
	size_t rlen;
	char *line;	/* last reply line */
	size_t line_cap;
	char *log;
};

uint64_t qts_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void qts_die(struct qts *s, const char *why)
{
	if (!s->dead)
		fprintf(stderr, "qtest: QEMU stopped answering (%s)\n", why);
	s->dead = true;
}

/* Read one reply line into s->line; false if QEMU is gone. */
static bool qts_getline(struct qts *s)
{
	for (;;) {
		char *nl = memchr(s->rbuf, '\n', s->rlen);

		if (nl) {
			size_t n = (size_t)(nl - s->rbuf);

			if (n + 1 > s->line_cap) {
				s->line_cap = n + 1;
				s->line = realloc(s->line, s->line_cap);
				if (!s->line)
					abort();
			}
			memcpy(s->line, s->rbuf, n);
			s->line[n] = 0;
			memmove(s->rbuf, nl + 1, s->rlen - n - 1);
			s->rlen -= n + 1;
			/* Asynchronous notifications ("IRQ raise 3") are skipped. */
			if (!strncmp(s->line, "IRQ ", 4))
				continue;
			return true;
		}
		if (s->rlen == sizeof(s->rbuf)) {
			qts_die(s, "reply line too long");
			return false;
		}
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int r = poll(&p, 1, QTS_TIMEOUT_MS);

		if (r <= 0) {
			qts_die(s, r ? "poll failed" : "timeout");
			return false;
		}
		ssize_t got = read(s->fd, s->rbuf + s->rlen, sizeof(s->rbuf) - s->rlen);

		if (got <= 0) {
			qts_die(s, "connection closed");
			return false;
		}
		s->rlen += (size_t)got;
	}
}

/* Send a command; returns the reply after "OK" ("" if none), or NULL. */
static const char *qts_cmd(struct qts *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *qts_cmd(struct qts *s, const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int n;

	if (s->dead)
		return NULL;
	va_start(ap, fmt);
	n = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	for (size_t off = 0; off < (size_t)n;) {
		ssize_t w = write(s->fd, cmd + off, (size_t)n - off);

		if (w <= 0) {
			free(cmd);
			qts_die(s, "write failed");
			return NULL;
		}
		off += (size_t)w;
	}
	free(cmd);
	if (!qts_getline(s))
		return NULL;
	if (strncmp(s->line, "OK", 2)) {
		fprintf(stderr, "qtest: unexpected reply \"%s\"\n", s->line);
		return NULL;
	}
	return s->line[2] == ' ' ? s->line + 3 : s->line + 2;
}

static uint64_t qts_cmd_val(struct qts *s, const char *what, uint64_t addr)
{
	const char *r = qts_cmd(s, "%s 0x%" PRIx64 "\n", what, addr);

	return r ? strtoull(r, NULL, 0) : 0;
}

struct qts *qts_start(const char *args)
{
	const char *bin = getenv("VGPU_QEMU");
	char sock[128], logf[128], qtarg[160], hmp[160];
	char dflt[] = "build/qemu-build/qemu-system-x86_64";
	char *argv[QTS_MAX_ARGS], *copy, *tok, *save;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct qts *s = calloc(1, sizeof(*s));
	int lfd, argc = 0;

	if (!s)
		return NULL;
	if (!bin || !*bin)
		bin = dflt;
	snprintf(s->dir, sizeof(s->dir), "/tmp/vgpu-qtest-XXXXXX");
	if (!mkdtemp(s->dir)) {
		perror("qtest: mkdtemp");
		free(s);
		return NULL;
	}
	snprintf(sock, sizeof(sock), "%s/qtest.sock", s->dir);
	snprintf(logf, sizeof(logf), "%s/qemu.log", s->dir);
	snprintf(qtarg, sizeof(qtarg), "unix:%s", sock);
	snprintf(hmp, sizeof(hmp), "unix:%s/hmp.sock,server=on,wait=off", s->dir);
	memcpy(sa.sun_path, sock, strlen(sock) + 1); /* < 64 + 12 bytes */

	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 1)) {
		perror("qtest: socket");
		goto fail;
	}

	argv[argc++] = (char *)bin;
	const char *fixed[] = { "-M", "q35", "-nodefaults", "-display", "none",
				"-accel", "qtest", "-m", "256M", "-L", "/usr/share/qemu",
				"-L", "/usr/share/seabios", "-d", "guest_errors", "-D",
				logf, "-qtest", qtarg, "-qtest-log", "/dev/null",
				"-monitor", hmp };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		argv[argc++] = (char *)fixed[i];
	copy = strdup(args ? args : "");
	for (tok = strtok_r(copy, " ", &save); tok && argc < QTS_MAX_ARGS - 1;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;

	s->pid = fork();
	if (s->pid < 0) {
		perror("qtest: fork");
		free(copy);
		goto fail;
	}
	if (!s->pid) {
		close(lfd);
		execv(bin, argv);
		fprintf(stderr, "qtest: cannot run %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	free(copy);

	struct pollfd p = { .fd = lfd, .events = POLLIN };
	if (poll(&p, 1, QTS_TIMEOUT_MS) != 1) {
		fprintf(stderr, "qtest: %s did not connect\n", bin);
		goto fail_kill;
	}
	s->fd = accept(lfd, NULL, NULL);
	if (s->fd < 0)
		goto fail_kill;
	close(lfd);
	unlink(sock);
	return s;

fail_kill:
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
fail:
	if (lfd >= 0)
		close(lfd);
	unlink(sock);
	rmdir(s->dir);
	free(s);
	return NULL;
}

const char *qts_log(struct qts *s)
{
	char path[128];
	FILE *f;
	long n;

	free(s->log);
	s->log = NULL;
	snprintf(path, sizeof(path), "%s/qemu.log", s->dir);
	f = fopen(path, "r");
	if (!f)
		return "";
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s->log = calloc(1, (size_t)n + 1);
	if (s->log && fread(s->log, 1, (size_t)n, f) != (size_t)n)
		s->log[0] = 0;
	fclose(f);
	return s->log ? s->log : "";
}

void qts_quit(struct qts *s)
{
	char path[128];
	int status;

	if (!s)
		return;
	/* SIGTERM before closing: QEMU 7.2 complains about a closed qtest
	 * socket (g_timer_elapsed assertion) */
	kill(s->pid, SIGTERM);
	for (int i = 0; i < 500; i++) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid)
			goto reaped;
		usleep(10000);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, &status, 0);
reaped:
	close(s->fd);
	snprintf(path, sizeof(path), "%s/qemu.log", s->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/hmp.sock", s->dir);
	unlink(path);
	rmdir(s->dir);
	free(s->line);
	free(s->log);
	free(s);
}

const char *qts_dir(struct qts *s)
{
	return s->dir;
}

/* Read from @fd until @buf ends with "(qemu) "; 0 or -1. */
static int hmp_read_prompt(int fd, char *buf, size_t len)
{
	size_t n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, QTS_TIMEOUT_MS) != 1)
			return -1;
		if (n + 1 >= len) /* keep the tail only */
			n = 0;
		got = read(fd, buf + n, len - n - 1);
		if (got <= 0)
			return -1;
		n += (size_t)got;
		buf[n] = 0;
		if (n >= 7 && !strcmp(buf + n - 7, "(qemu) "))
			return 0;
	}
}

void qts_clock_step(struct qts *s, uint64_t ns)
{
	qts_cmd(s, "clock_step %" PRIu64 "\n", ns);
}

int qts_hmp(struct qts *s, const char *cmd, char *out, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[8192];
	int fd, rc = -1;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/hmp.sock", s->dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto out;
	if (hmp_read_prompt(fd, buf, sizeof(buf)))
		goto out;
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd) || write(fd, "\n", 1) != 1)
		goto out;
	if (hmp_read_prompt(fd, buf, sizeof(buf)))
		goto out;
	if (out)
		snprintf(out, len, "%s", buf);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

bool qts_alive(struct qts *s)
{
	return qts_cmd(s, "readl 0x0\n") != NULL;
}

uint8_t qts_readb(struct qts *s, uint64_t a) { return (uint8_t)qts_cmd_val(s, "readb", a); }
uint16_t qts_readw(struct qts *s, uint64_t a) { return (uint16_t)qts_cmd_val(s, "readw", a); }
uint32_t qts_readl(struct qts *s, uint64_t a) { return (uint32_t)qts_cmd_val(s, "readl", a); }
uint64_t qts_readq(struct qts *s, uint64_t a) { return qts_cmd_val(s, "readq", a); }

void qts_writeb(struct qts *s, uint64_t a, uint8_t v)
{
	qts_cmd(s, "writeb 0x%" PRIx64 " 0x%x\n", a, v);
}

void qts_writew(struct qts *s, uint64_t a, uint16_t v)
{
	qts_cmd(s, "writew 0x%" PRIx64 " 0x%x\n", a, v);
}

void qts_writel(struct qts *s, uint64_t a, uint32_t v)
{
	qts_cmd(s, "writel 0x%" PRIx64 " 0x%x\n", a, v);
}

void qts_writeq(struct qts *s, uint64_t a, uint64_t v)
{
	qts_cmd(s, "writeq 0x%" PRIx64 " 0x%" PRIx64 "\n", a, v);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 0;
}

void qts_memread(struct qts *s, uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = buf;
	const char *r;

	memset(buf, 0, len);
	if (!len)
		return;
	r = qts_cmd(s, "read 0x%" PRIx64 " 0x%zx\n", addr, len);
	if (!r || strncmp(r, "0x", 2))
		return;
	r += 2;
	for (size_t i = 0; i < len && r[2 * i] && r[2 * i + 1]; i++)
		p[i] = (uint8_t)(hexval(r[2 * i]) << 4 | hexval(r[2 * i + 1]));
}

void qts_memwrite(struct qts *s, uint64_t addr, const void *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = buf;
	char *enc;

	if (!len)
		return;
	enc = malloc(2 * len + 1);
	if (!enc)
		abort();
	for (size_t i = 0; i < len; i++) {
		enc[2 * i] = hex[p[i] >> 4];
		enc[2 * i + 1] = hex[p[i] & 15];
	}
	enc[2 * len] = 0;
	qts_cmd(s, "write 0x%" PRIx64 " 0x%zx 0x%s\n", addr, len, enc);
	free(enc);
}

void qts_memset(struct qts *s, uint64_t addr, uint8_t v, size_t len)
{
	if (len)
		qts_cmd(s, "memset 0x%" PRIx64 " 0x%zx 0x%x\n", addr, len, v);
}

uint32_t qts_inl(struct qts *s, uint16_t port)
{
	return (uint32_t)qts_cmd_val(s, "inl", port);
}

void qts_outl(struct qts *s, uint16_t port, uint32_t v)
{
	qts_cmd(s, "outl 0x%x 0x%x\n", port, v);
}

void qts_outw(struct qts *s, uint16_t port, uint16_t v)
{
	qts_cmd(s, "outw 0x%x 0x%x\n", port, v);
}
