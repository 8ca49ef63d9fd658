/* SPDX-License-Identifier: MIT */
/*
 * A library's per-thread block (libvgpu's struct vgpu_thread, libcuda's
 * struct cuv_thread, libcudart's struct crt_thread): one initial-exec TLS
 * pointer, the block allocated on the thread's first use and freed at its
 * exit by a pthread key's destructor, which first calls @fini (when not
 * NULL) on it for what it holds; when it cannot be had, @none (read-only,
 * zeros).  Each library expands VGPU_THREAD_BLOCKS once, for its own key
 * and TLS variable (the destructor clears that variable).
 *
 * 8 bytes of initial-exec TLS per library is within what glibc reserves
 * for initial-exec TLS of libraries loaded by dlopen (Mesa's drivers do
 * the same); a larger block there would not be safe: keep it a pointer.
 */
#ifndef VGPU_THREAD_BLOCK_H
#define VGPU_THREAD_BLOCK_H

#include <pthread.h>
#include <stdlib.h>

#define VGPU_THREAD_BLOCKS(type, tls, none, new_fn, fini)                     \
	__thread struct type *tls __attribute__((tls_model("initial-exec")));  \
	const struct type none;                                               \
	static pthread_key_t tb_key;                                          \
	static pthread_once_t tb_once = PTHREAD_ONCE_INIT;                    \
	static int tb_err; /* pthread_key_create's, or -1 once unloaded */    \
	/* At the thread's exit (a destructor run after this one that calls  \
	 * the library gets a new block, freed in the next round). */        \
	static void (*const tb_fini)(struct type *) = fini;                   \
	static void tb_end(void *p)                                           \
	{                                                                     \
		tls = NULL;                                                   \
		if (tb_fini)                                                  \
			tb_fini(p);                                           \
		free(p);                                                      \
	}                                                                     \
	static void tb_make(void)                                             \
	{                                                                     \
		tb_err = pthread_key_create(&tb_key, tb_end);                 \
	}                                                                     \
	static void tb_none(void)                                             \
	{                                                                     \
		tb_err = -1;                                                  \
	}                                                                     \
	/* Unloaded (dlclose, or the process's exit): no destructor is left  \
	 * to call into unmapped code; the blocks of threads still running   \
	 * stay, and a thread's first use after this gets @none. */          \
	__attribute__((destructor)) static void tb_drop(void)                 \
	{                                                                     \
		pthread_once(&tb_once, tb_none); /* none made: none to come */ \
		if (!tb_err) {                                                \
			tb_err = -1;                                          \
			pthread_key_delete(tb_key);                           \
		}                                                             \
	}                                                                     \
	struct type *new_fn(void)                                             \
	{                                                                     \
		struct type *t;                                               \
                                                                              \
		pthread_once(&tb_once, tb_make);                              \
		if (tb_err)                                                   \
			return (struct type *)&none;                          \
		t = calloc(1, sizeof(*t));                                    \
		if (!t)                                                       \
			return (struct type *)&none;                          \
		if (pthread_setspecific(tb_key, t)) {                         \
			free(t);                                              \
			return (struct type *)&none;                          \
		}                                                             \
		tls = t;                                                      \
		return t;                                                     \
	}

#endif /* VGPU_THREAD_BLOCK_H */
