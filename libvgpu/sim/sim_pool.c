/* SPDX-License-Identifier: MIT */
/*
 * sim backend: one launch on several SMs at once (VGPU_SIM_THREADS=N), as
 * the device's worker pool runs it (qemu-device/vgpu-pool.c).
 *
 * The pool has N SMs (struct vgpu_sm, the device's configuration, SM i
 * with sm_id i): the calling thread runs SM 0 (the device's @sm) and N - 1
 * threads, made at the first launch that needs them and kept until the
 * device closes or its configuration changes, run the others.  Each SM
 * claims chunks of clusters from one atomic counter, so chunks start in
 * linear cluster order, and runs its chunk in order; the lowest cluster
 * not completed is therefore always running or about to, and a CTA that
 * spins on an earlier CTA's flag (a decoupled look-back) never keeps that
 * one from starting (docs/ptx-corpus.md "Forward progress between CTAs").
 * A claim is what the device's is: a quarter of the grid's share of one
 * SM, at most 16 clusters, and at most half of what is left over the SMs.
 *
 * The SMs share the launch's struct vgpu_launch_ctl: its counter is the
 * launch's warp-instructions and budget; the first SM to raise an
 * exception sets its abort, which stops the others within a budget slice
 * (VGPU_EXC_ABORTED) and stops the claims.  The launch's record is, as on
 * the device, a real exception before an abort it caused, else the one
 * of the lowest chunk.  Each SM has its own struct sim_mem (the one-entry
 * BO cache and the fault it records); the address map they read does not
 * change during a launch (the device's lock is held for the whole SUBMIT).
 *
 * A launch starts on the calling thread alone, its claims growing with
 * what it ran, and wakes the others once it has run
 * SIM_ALONE_BUDGET warp-instructions with clusters left to claim (the
 * launch's slice hook, struct vgpu_launch_ctl: within a budget slice, also
 * inside a long CTA).  A small grid, which the wake-ups would cost more
 * than they gain, runs as on one thread, as the device runs a doorbell's
 * launch inline up to its inline budget.  The threads and their SMs are
 * made at the first wake-up and kept.  The calling thread hands work to a
 * thread with its semaphore and waits on the pool's: a launch wakes no
 * more threads than it has claims left.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_priv.h"

/* clusters an SM claims at a time, at most (the device's VGPU_CLAIM_MAX) */
#define SIM_CLAIM_MAX 16u
/*
 * Warp-instructions a launch runs on the calling thread alone before it
 * wakes the others (the device's VGPU_INLINE_BUDGET): about what the
 * wake-ups cost.
 */
#define SIM_ALONE_BUDGET 4096u

struct sim_pool;

/**
 * struct sim_worker - one SM of the pool and what it did in the launch
 * @pool:    its pool
 * @thread:  its thread (not worker 0: the calling thread)
 * @go:      posted when a launch has work for it (or the pool stops)
 * @sm:      its SM (worker 0: the device's @sm, taken at each launch)
 * @mem:     its view of global memory for the launch
 * @rc:      0, or -1 with @exc when a run raised an exception
 * @first:   the first cluster of the chunk that raised it
 * @cycles:  SM cycles it spent in the launch
 */
struct sim_worker {
	struct sim_pool *pool;
	pthread_t thread;
	sem_t go;
	struct vgpu_sm *sm;
	struct sim_mem mem;
	int rc;
	uint32_t first;
	uint64_t cycles;
	struct vgpu_exception_record exc;
};

/**
 * struct sim_pool - the SMs of VGPU_SIM_THREADS
 * @n:       workers, the calling thread's included
 * @started: threads running (workers 1 .. @started), made at the first
 *           launch that wakes them
 * @pid:     the process that made them (a child of fork() has none)
 * @done:    posted by a thread when it has finished its part of a launch
 * @exiting: the threads return when woken
 * @sim:     the device
 * @l:       the launch in progress
 * @total:   its clusters
 * @chunk:   clusters per claim
 * @next:    the first cluster not yet claimed
 * @woken:   the launch has woken its threads (1 .. @nw - 1)
 * @nw:      workers the launch runs on, the calling thread's included
 */
struct sim_pool {
	uint32_t n, started;
	pid_t pid;
	sem_t done;
	bool exiting;
	struct vgpu_sim *sim;
	const struct vgpu_launch *l;
	uint32_t total, chunk;
	_Atomic uint32_t next;
	_Atomic bool woken;
	uint32_t nw;
	struct sim_worker w[];
};

int vgpu_sim_threads_env(uint32_t *n)
{
	const char *e = getenv("VGPU_SIM_THREADS");
	char *end;
	unsigned long v;

	*n = 1;
	if (!e || !e[0])
		return 0;
	errno = 0;
	v = strtoul(e, &end, 10);
	if (errno || *end || e[0] == '-' || e[0] == '+' || v < 1 ||
	    v > SIM_MAX_THREADS) {
		fprintf(stderr, "libvgpu: VGPU_SIM_THREADS=%s: must be a number "
			"of threads from 1 to %u\n", e, SIM_MAX_THREADS);
		return -EINVAL;
	}
	*n = (uint32_t)v;
	return 0;
}

/*
 * Claim chunks of the launch and run them on @w's SM until none is left
 * or the launch is aborted.
 */
static void sim_worker_run(struct sim_pool *p, struct sim_worker *w)
{
	struct vgpu_launch l = *p->l;
	struct vgpu_sm_stats st;
	uint64_t c0;

	w->mem = (struct sim_mem){ .sim = p->sim };
	l.mem_opaque = &w->mem;
	w->rc = 0;
	vgpu_sm_get_stats(w->sm, &st);
	c0 = st.cycles;
	while (!atomic_load(&l.ctl->abort)) {
		uint32_t first = atomic_load(&p->next), count = 0;

		/*
		 * At most a chunk, and at most half of what is left over the
		 * SMs (guided self-scheduling, as the device): the claims
		 * shrink towards the end of the grid, so that no SM starts a
		 * long claim when the others are about to run dry.
		 */
		do {
			uint32_t left = p->total - first;

			if (first >= p->total)
				break;
			count = left < p->chunk ? left : p->chunk;
			if (count > left / (2 * p->n))
				count = left / (2 * p->n) ? left / (2 * p->n) : 1;
			/*
			 * Alone (the calling thread before the wake-up, which
			 * claims from 0): as many as it ran, up to
			 * SIM_CLAIM_MAX, so that a short grid takes few claims
			 * and a long CTA holds back at most as many as ran.
			 */
			if (!atomic_load_explicit(&p->woken, memory_order_relaxed) &&
			    count < first)
				count = first < SIM_CLAIM_MAX ? first : SIM_CLAIM_MAX;
			if (count > left)
				count = left;
		} while (!atomic_compare_exchange_weak(&p->next, &first, first + count));
		if (first >= p->total)
			break;
		if (vgpu_sm_run(w->sm, &l, first, count, &w->exc)) {
			if (w->exc.code == VGPU_EXC_GLOBAL_FAULT)
				vgpu_sim_fault_record(&w->mem, &w->exc);
			w->rc = -1;
			w->first = first;
			/* the others stop at their next budget check */
			atomic_store(&l.ctl->abort, 1);
			break;
		}
	}
	vgpu_sm_get_stats(w->sm, &st);
	w->cycles = st.cycles - c0;
}

static void *sim_worker_thread(void *opaque)
{
	struct sim_worker *w = opaque;
	struct sim_pool *p = w->pool;

	for (;;) {
		while (sem_wait(&w->go))
			; /* EINTR */
		if (p->exiting)
			return NULL;
		sim_worker_run(p, w);
		sem_post(&p->done);
	}
}

static void sim_pool_destroy(struct sim_pool *p)
{
	p->exiting = true;
	for (uint32_t i = 1; i <= p->started; i++)
		sem_post(&p->w[i].go);
	for (uint32_t i = 1; i <= p->started; i++) {
		pthread_join(p->w[i].thread, NULL);
		vgpu_sm_free(p->w[i].sm);
		sem_destroy(&p->w[i].go);
	}
	sem_destroy(&p->done);
	free(p);
}

void vgpu_sim_pool_free(struct vgpu_sim *sim)
{
	struct sim_pool *p = sim->pool;

	sim->pool = NULL;
	if (!p)
		return;
	if (p->pid != getpid()) {
		/* fork()'s child: the threads are the parent's; keep out */
		return;
	}
	sim_pool_destroy(p);
}

/* The pool of sim->nthreads SMs, made if need be; NULL without memory. */
static struct sim_pool *sim_pool_get(struct vgpu_sim *sim)
{
	struct sim_pool *p = sim->pool;

	if (p && p->pid == getpid())
		return p;
	/* a fork()'s child: the parent's threads are not here (leaked) */
	sim->pool = NULL;
	p = calloc(1, sizeof(*p) + sim->nthreads * sizeof(p->w[0]));
	if (!p)
		return NULL;
	p->n = sim->nthreads;
	p->pid = getpid();
	p->sim = sim;
	if (sem_init(&p->done, 0, 0)) {
		free(p);
		return NULL;
	}
	sim->pool = p;
	return p;
}

/*
 * Make the threads and SMs of workers @p->started + 1 .. @p->n - 1; those
 * made are kept where one fails (no memory, no thread): the launch runs
 * on fewer.
 */
static void sim_pool_start(struct sim_pool *p)
{
	sigset_t all, old;

	/* the application's signals go to its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (uint32_t i = p->started + 1; i < p->n; i++) {
		struct sim_worker *w = &p->w[i];
		struct vgpu_sm_config cfg = p->sim->cfg;

		cfg.sm_id = i;
		w->pool = p;
		if (sem_init(&w->go, 0, 0))
			break;
		w->sm = vgpu_sm_new(&cfg);
		if (!w->sm || pthread_create(&w->thread, NULL, sim_worker_thread, w)) {
			vgpu_sm_free(w->sm);
			w->sm = NULL;
			sem_destroy(&w->go);
			break;
		}
		p->started = i;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * The launch's slice hook (struct vgpu_launch_ctl): once the calling
 * thread alone has run SIM_ALONE_BUDGET warp-instructions, wake as many
 * threads as there are claims left.  Called by the SMs of the launch;
 * until it wakes them only the calling thread's runs.
 */
static void sim_pool_slice(void *opaque, uint64_t executed)
{
	struct sim_pool *p = opaque;
	uint32_t left, claims;

	if (executed < SIM_ALONE_BUDGET || atomic_load_explicit(&p->woken, memory_order_relaxed))
		return;
	left = p->total - atomic_load(&p->next); /* claims end at @total */
	atomic_store(&p->woken, true);
	if (!left)
		return;
	if (p->started + 1 < p->n)
		sim_pool_start(p);
	claims = (left - 1) / p->chunk + 1;
	p->nw = 1 + (claims < p->started ? claims : p->started);
	for (uint32_t i = 1; i < p->nw; i++)
		sem_post(&p->w[i].go);
}

/* Whether @a (of the chunk from @a_first) is the launch's record before @b. */
static bool sim_exc_first(const struct vgpu_exception_record *a, uint32_t a_first,
			  const struct vgpu_exception_record *b, uint32_t b_first)
{
	bool a_real = a->code != VGPU_EXC_ABORTED;
	bool b_real = b->code != VGPU_EXC_ABORTED;

	if (a_real != b_real)
		return a_real;
	return a_first < b_first;
}

int vgpu_sim_pool_run(struct vgpu_sim *sim, const struct vgpu_launch *l,
		      uint32_t nclusters, struct vgpu_exception_record *exc,
		      uint64_t *cycles)
{
	struct sim_pool *p = sim_pool_get(sim);
	const struct sim_worker *fail = NULL;
	struct vgpu_launch_ctl *ctl = l->ctl;

	if (!p)
		return -2;
	p->w[0].sm = sim->sm;
	p->l = l;
	p->total = nclusters;
	p->chunk = nclusters / (p->n * 4);
	if (p->chunk > SIM_CLAIM_MAX)
		p->chunk = SIM_CLAIM_MAX;
	if (!p->chunk)
		p->chunk = 1;
	atomic_store(&p->next, 0);
	atomic_store(&p->woken, false);
	p->nw = 1;
	ctl->slice = sim_pool_slice;
	ctl->slice_opaque = p;
	sim_worker_run(p, &p->w[0]);
	/* only the calling thread wakes them (in its slice hook): p->nw is its own */
	for (uint32_t i = 1; i < p->nw; i++)
		while (sem_wait(&p->done))
			; /* EINTR */
	ctl->slice = NULL;

	*cycles = 0;
	for (uint32_t i = 0; i < p->nw; i++) {
		const struct sim_worker *w = &p->w[i];

		if (w->cycles > *cycles)
			*cycles = w->cycles;
		if (w->rc && (!fail || sim_exc_first(&w->exc, w->first,
						      &fail->exc, fail->first)))
			fail = w;
	}
	if (!fail) {
		memset(exc, 0, sizeof(*exc));
		return 0;
	}
	*exc = fail->exc;
	return -1;
}
