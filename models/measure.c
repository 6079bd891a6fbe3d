// SPDX-License-Identifier: GPL-2.0-only
/* countercheck throughput --measure: the machine's costs the throughput model prices.
 *
 * Prints one JSON object, times in microseconds:
 *   t_local        a plain add to a private variable (the this_cpu_* ops' order of cost)
 *   t_rmw          an uncontended LOCK-prefixed RMW (__atomic_fetch_add) on a private line
 *   t_lock         an uncontended test-and-set spinlock acquire + release
 *   t_lock_global  a spinlock acquire + release while another thread takes it too (the handoff)
 *   t_xfer         one cache-line transfer between two threads (half a ping-pong round trip)
 *   t_shared_rmw   an atomic add on a line another thread adds to as well
 *   t_cpu_line     a read of one cache line 4 KiB apart from the last in a buffer far larger than the
 *                  caches (a per-possible-CPU walk's step: each CPU's unit is far from the next)
 * Interrupts cannot be disabled from user space: t_irq_save stays a named prior.
 * Build: cc -O2 -pthread measure.c -o measure
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LINE 64
static struct { _Alignas(LINE) volatile int lock; } spin;
static struct { _Alignas(LINE) volatile long v; } shared, ping;
static volatile int go, stop;

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set); /* best effort: a container may refuse */
}

static inline void lock(void)
{
	while (__atomic_exchange_n(&spin.lock, 1, __ATOMIC_ACQUIRE))
		while (spin.lock)
			__builtin_ia32_pause();
}

static inline void unlock(void) { __atomic_store_n(&spin.lock, 0, __ATOMIC_RELEASE); }

static volatile long done_by_contender;

static void *contender(void *arg)
{
	long mode = (long)arg, k = 0;
	pin(1);
	while (!go)
		;
	if (mode == 0) {          /* the lock */
		while (!stop) { lock(); unlock(); k++; }
	} else if (mode == 1) {   /* the shared counter */
		while (!stop) { __atomic_fetch_add(&shared.v, 1, __ATOMIC_RELAXED); k++; }
	} else {                  /* ping-pong: answer every odd value */
		long seen = 0;
		while (!stop) {
			long v = ping.v;
			if (v != seen && (v & 1)) { ping.v = v + 1; seen = v + 1; }
		}
	}
	done_by_contender = k;
	return NULL;
}

/* Per operation, both threads' operations counted: under contention the lock (or the line) is the
 * serialising resource, so elapsed time / all operations is one acquisition's or one RMW's share. */
static double with_contender(long mode, long n)
{
	pthread_t t;
	double t0, t1;
	long i;
	go = stop = 0;
	done_by_contender = 0;
	pthread_create(&t, NULL, contender, (void *)mode);
	go = 1;
	t0 = now_us();
	if (mode == 0) {
		for (i = 0; i < n; i++) { lock(); unlock(); }
	} else if (mode == 1) {
		for (i = 0; i < n; i++) __atomic_fetch_add(&shared.v, 1, __ATOMIC_RELAXED);
	} else {
		for (i = 0; i < n; i++) {
			long v = 2 * i + 1;
			ping.v = v;
			while (ping.v == v)
				;
		}
	}
	t1 = now_us();
	stop = 1;
	pthread_join(t, NULL);
	if (mode == 2)
		return (t1 - t0) / (2.0 * n);
	return (t1 - t0) / (n + done_by_contender);
}

int main(void)
{
	const long n = 2000000;
	volatile long private_v = 0;
	long private_a = 0, i;
	double t0, t_local, t_rmw, t_lock, t_cpu_line;
	size_t size = 256u << 20, stride = 4096, k;
	unsigned char *buf;
	volatile unsigned long sink = 0;

	cpu_set_t set;
	int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;

	pin(0);
	t0 = now_us();
	for (i = 0; i < n; i++) private_v = private_v + 1;
	t_local = (now_us() - t0) / n;
	t0 = now_us();
	for (i = 0; i < n; i++) __atomic_fetch_add(&private_a, 1, __ATOMIC_SEQ_CST);
	t_rmw = (now_us() - t0) / n;
	t0 = now_us();
	for (i = 0; i < n; i++) { lock(); unlock(); }
	t_lock = (now_us() - t0) / n;

	buf = malloc(size);
	if (!buf) return 1;
	for (k = 0; k < size; k += stride) buf[k] = (unsigned char)k;
	/* evict: touch the whole buffer once more at line granularity, then walk at the 4 KiB stride */
	for (k = 0; k < size; k += LINE) sink += buf[k];
	t_cpu_line = 1e9;
	for (i = 0; i < 3; i++) {  /* the least of three walks: another process's burst only adds time */
		double t;
		for (k = 0; k < size; k += LINE) sink += buf[(k * 7919) % size];
		t0 = now_us();
		for (k = 0; k < size; k += stride) sink += buf[k];
		t = (now_us() - t0) / (size / stride);
		if (t < t_cpu_line) t_cpu_line = t;
	}
	free(buf);

	printf("{\"cpus\": %d, \"t_local\": %.6f, \"t_rmw\": %.6f, \"t_lock\": %.6f, \"t_lock_global\": %.6f, "
	       "\"t_xfer\": %.6f, \"t_shared_rmw\": %.6f, \"t_cpu_line\": %.6f}\n",
	       cpus, t_local, t_rmw, t_lock, with_contender(0, n / 4), with_contender(2, n / 20),
	       with_contender(1, n / 4), t_cpu_line);
	return (int)(sink & 0);
}
