/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host memory under the application's own pages (xhca_adopt, xhca_unadopt;
 * xhca_int.h), and a fork's child's private copy of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <pthread.h>
#include "xhca_int.h"

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/*
 * How [base, base + n) is mapped now, from /proc/self/maps: 0 when it is
 * private memory (heap, stack, malloc, mmap MAP_PRIVATE, a program's data
 * and bss) with no hole, readable, its protection in *prot; with
 * want_hostmem, when it is all host memory mapped from xhcad's map.
 * -EFAULT: a hole or unreadable; -EOPNOTSUPP: other memory (shared, whose
 * writes others must see; hugetlb; the kernel's vdso and vvar).
 */
static int maps_check(uintptr_t base, size_t n, int want_hostmem, int *prot)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uintptr_t at = base, end = base + n;
	char line[512];
	int rc = -EFAULT;

	if (!f)
		return -errno;
	*prot = PROT_READ | PROT_WRITE;
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, inode;
		char perms[8], path[256] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %255[^\n]", &lo, &hi, perms, &inode,
			   path) < 4)
			continue;
		if (hi <= at)
			continue;
		if (lo > at)
			break; /* a hole */
		if (!want_hostmem && perms[0] != 'r')
			break; /* -EFAULT */
		if (want_hostmem ? !strstr(path, "bpf-map")
				 : (perms[3] != 'p' || strstr(path, "huge") ||
				    (path[0] == '[' && strcmp(path, "[heap]") &&
				     strncmp(path, "[stack", 6)))) {
			rc = -EOPNOTSUPP;
			break;
		}
		if (perms[1] != 'w')
			*prot &= ~PROT_WRITE;
		if (perms[2] == 'x')
			*prot |= PROT_EXEC;
		at = hi;
	}
	fclose(f);
	return at >= end ? 0 : rc;
}

/* Private anonymous pages with the bytes of [va, va + n) in place of what
 * is there (one atomic replacement). */
/*
 * Pages are copied, then the copy mapped in their place: whatever is
 * written there in between is lost. The calling thread's own stack may be
 * among them (a buffer on the stack: its page holds the frames of this very
 * call), so the copy and the swap run on another thread, which starts them
 * only once this one sleeps in the kernel (its futex wait, every signal
 * blocked): from then on nothing writes its stack until it is woken.
 */
struct swap {
	__u8 *va;		/* the application's pages */
	size_t n;
	__u8 *tmp;		/* adopt: host memory mapped at tmp, in runs */
	const struct xhca_alloc_run *runs;
	__u32 nruns;
	size_t done;		/* bytes swapped */
	int err;
};

/* [va, va + n) to private anonymous pages holding its bytes. A page of
 * host memory the application discarded (madvise MADV_DONTNEED, as
 * allocators do with memory freed: glibc shrinking a thread's arena) has
 * lost its mapping, and host memory has no fault handler to give it back:
 * a read there is SIGBUS. So the bytes are read by the kernel
 * (process_vm_readv fails instead), page by page where a read of all of
 * them failed, and a discarded page comes back as the zero page it would
 * have been. */
static void *swap_private(void *arg)
{
	struct swap *s = arg;
	void *tmp = sys_mmap(NULL, s->n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec l = { tmp, s->n }, r = { s->va, s->n };

	s->err = 0;
	if (tmp == MAP_FAILED) {
		s->err = -errno;
		return NULL;
	}
	/* (whole pages, beyond the application's buffers: copied by the
	 * kernel, which no sanitizer of the program's takes for an overflow
	 * of its malloc'd buffer) */
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)s->n)
		for (size_t o = 0; o < s->n; o += XHCA_PAGE_SIZE) {
			l = (struct iovec){ (__u8 *)tmp + o, XHCA_PAGE_SIZE };
			r = (struct iovec){ s->va + o, XHCA_PAGE_SIZE };
			if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != XHCA_PAGE_SIZE)
				memset(l.iov_base, 0, XHCA_PAGE_SIZE);
		}
	if (sys_mremap(tmp, s->n, s->n, MREMAP_MAYMOVE | MREMAP_FIXED, s->va) == MAP_FAILED) {
		s->err = -errno;
		sys_munmap(tmp, s->n);
	}
	return NULL;
}

/* The host memory at tmp gets the bytes of [va, va + n) (a read that would
 * fault fails instead), then each run of it moves over the application's
 * pages in one step. */
static void *swap_adopt(void *arg)
{
	struct swap *s = arg;
	struct iovec l = { s->tmp, s->n }, r = { s->va, s->n };

	s->err = 0;
	s->done = 0;
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)s->n) {
		s->err = -EFAULT;
		return NULL;
	}
	for (__u32 i = 0; i < s->nruns; i++) {
		size_t rl = (size_t)s->runs[i].count * XHCA_PAGE_SIZE;

		if (sys_mremap(s->tmp + s->done, rl, rl, MREMAP_MAYMOVE | MREMAP_FIXED,
			   s->va + s->done) == MAP_FAILED) {
			s->err = -errno;
			return NULL;
		}
		s->done += rl;
	}
	return NULL;
}

/* What off_stack's thread runs, and the futex the caller sleeps on. */
struct off_job {
	void *(*fn)(void *);
	struct swap *s;
	pid_t caller;		/* its thread id */
	int state;		/* 0 running, 1 done */
};

/* Whether thread tid sleeps in futex(addr, FUTEX_WAIT...): the syscall it
 * is blocked in, from /proc (-1: cannot be told). */
static int asleep_on(pid_t tid, const void *addr)
{
	char path[64], line[256];
	unsigned long nr, a0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	line[n] = 0;
	if (sscanf(line, "%lu %lx", &nr, &a0) != 2)
		return 0; /* "running" */
	return nr == SYS_futex && a0 == (unsigned long)(uintptr_t)addr;
}

static void *off_job_run(void *arg)
{
	struct off_job *j = arg;
	int k = 0, r;

	/* (without /proc: a while, which the caller's few instructions to
	 * its sleep never take) */
	while ((r = asleep_on(j->caller, &j->state)) == 0 && k++ < 200000)
		sched_yield();
	if (r < 0)
		usleep(20000);
	j->fn(j->s);
	__atomic_store_n(&j->state, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &j->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

static int off_stack(void *(*fn)(void *), struct swap *s)
{
	struct off_job *j = calloc(1, sizeof(*j));
	sigset_t all, old;
	pthread_t t;

	if (!j) {
		fn(s); /* as well as it goes */
		return s->err;
	}
	*j = (struct off_job){ .fn = fn, .s = s, .caller = (pid_t)syscall(SYS_gettid) };
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, off_job_run, j)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		free(j);
		fn(s); /* no thread to be had: here, as well as it goes */
		return s->err;
	}
	while (!__atomic_load_n(&j->state, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &j->state, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(j);
	return s->err;
}

static int to_private(__u8 *va, size_t n)
{
	struct swap s = { .va = va, .n = n };

	return off_stack(swap_private, &s);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&xl_sessions_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&xl_sessions_lock);
}

/* The child of a fork gets its own copy of adopted memory, as a kernel
 * with copy-on-fork of pinned pages gives it (the parent keeps the host
 * memory, and remote WRITEs land only there). */
static void fork_child(void)
{
	for (struct xhca_ctx *c = xl_sessions; c; c = c->next_session)
		for (__u32 i = 0; i < c->nbufs; i++)
			if (c->bufs[i].adopted)
				to_private(c->bufs[i].va, c->bufs[i].len);
	pthread_mutex_unlock(&xl_sessions_lock);
}

static void fork_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The host memory pages [g0, g1) of an allocation (pages: one a page)
 * over the application's pages at va + g0 pages, with their bytes. */
static int adopt_gap(struct xhca_ctx *ctx, __u8 *va, const __u32 *pages, __u32 g0, __u32 g1)
{
	size_t n = (size_t)(g1 - g0) * XHCA_PAGE_SIZE;
	struct xhca_alloc_run *runs = calloc(g1 - g0, sizeof(*runs));
	__u8 *tmp = sys_mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct swap sw;
	__u32 nruns = 0;
	int err = 0;

	if (!runs || tmp == MAP_FAILED) {
		err = xl_fail(ctx, -ENOMEM, "adopt: no memory or address space for %zu bytes", n);
		goto out;
	}
	/* (a run in one block: one mapping for mremap to move) */
	for (__u32 p = g0; p < g1; p++) {
		if (nruns && runs[nruns - 1].page + runs[nruns - 1].count == pages[p] &&
		    pages[p] % XHCA_BLOCK_PAGES)
			runs[nruns - 1].count++;
		else
			runs[nruns++] = (struct xhca_alloc_run){ .page = pages[p], .count = 1 };
	}
	for (__u32 i = 0, pos = 0; i < nruns; pos += runs[i++].count)
		if (xl_map_host(ctx, tmp + (size_t)pos * XHCA_PAGE_SIZE, runs[i].page, runs[i].count)) {
			err = xl_fail(ctx, -EPROTO, "adopt: cannot map host memory page %u",
				      runs[i].page);
			goto out;
		}
	sw = (struct swap){ .va = va + (size_t)g0 * XHCA_PAGE_SIZE, .n = n, .tmp = tmp,
			    .runs = runs, .nruns = nruns };
	err = off_stack(swap_adopt, &sw);
	if (err) {
		xl_fail(ctx, err, err == -EFAULT ? "adopt: cannot read %zu bytes at %p"
				  : "adopt: cannot map host memory over %zu bytes at %p", n, sw.va);
		if (sw.done)
			to_private(sw.va, sw.done);
	}
out:
	if (tmp != MAP_FAILED)
		sys_munmap(tmp, n);
	free(runs);
	return err;
}

/* The next run of pages [*p, *q) not taken, from *p on; 0 when none is left. */
static int next_gap(const __u8 *taken, __u32 n, __u32 *p, __u32 *q)
{
	while (*p < n && taken[*p])
		(*p)++;
	for (*q = *p; *q < n && !taken[*q]; (*q)++)
		;
	return *p < n;
}

/* Host memory (pages: one a page) over every run of the application's
 * pages at va that no adopted buffer has yet, each keeping its protection;
 * on a failure what was swapped goes back, with its bytes. */
static int adopt_gaps(struct xhca_ctx *ctx, __u8 *va, const __u32 *pages, const __u8 *taken,
		      __u32 npages)
{
	int err = 0, prot;

	for (__u32 p = 0, q; !err && next_gap(taken, npages, &p, &q); p = q) {
		__u8 *at = va + (size_t)p * XHCA_PAGE_SIZE;
		size_t n = (size_t)(q - p) * XHCA_PAGE_SIZE;

		err = maps_check((uintptr_t)at, n, 0, &prot);
		if (!err)
			err = adopt_gap(ctx, va, pages, p, q);
		if (!err && prot != (PROT_READ | PROT_WRITE) && mprotect(at, n, prot))
			err = xl_fail(ctx, -errno, "adopt: cannot give %p its protection back", at);
		if (err)
			for (__u32 g = 0; g < p; g++)
				if (!taken[g])
					to_private(va + (size_t)g * XHCA_PAGE_SIZE, XHCA_PAGE_SIZE);
	}
	return err;
}

/* The adopted buffers that [*lo, *hi) overlaps, the range grown to take
 * them whole (and what that overlaps in turn): their indexes in join, how
 * many; -EEXIST when it meets a buffer of xhca_alloc. */
static int adopt_union(struct xhca_ctx *ctx, uintptr_t *lo, uintptr_t *hi, __u32 *idx, __u32 *n)
{
	int grew = 1;

	*n = 0;
	while (grew) {
		grew = 0;
		for (__u32 i = 0; i < ctx->nbufs; i++) {
			const struct buf *b = &ctx->bufs[i];
			uintptr_t bl = (uintptr_t)b->va, bh = bl + b->len;
			__u32 k;

			if (bh <= *lo || bl >= *hi)
				continue;
			if (!b->adopted)
				return -EEXIST;
			for (k = 0; k < *n && idx[k] != i; k++)
				;
			if (k == *n)
				idx[(*n)++] = i;
			if (bl < *lo || bh > *hi) {
				*lo = bl < *lo ? bl : *lo;
				*hi = bh > *hi ? bh : *hi;
				grew = 1;
			}
		}
	}
	return 0;
}

/* The new allocation a over [lo, hi) becomes the buffer there; the ones
 * it joined (their indexes in idx) leave the table, lookups finding the new
 * one (the same pages), but live on for their regions until it goes. */
static int adopt_commit(struct xhca_ctx *ctx, uintptr_t lo, uintptr_t hi,
			const struct xhca_alloc *a, __u32 *idx, __u32 njoin)
{
	struct buf nb = { .va = (__u8 *)lo, .len = hi - lo, .id = a->id,
			  .contiguous = a->nruns == 1, .adopted = 1 };
	struct buf *j = realloc(ctx->joined, (ctx->njoined + njoin) * sizeof(*j) + 1);

	if (!j)
		return -ENOMEM;
	ctx->joined = j;
	/* highest index first: each removal leaves the lower ones in place */
	for (__u32 k = 0; k < njoin; k++)
		for (__u32 m = k + 1; m < njoin; m++)
			if (idx[m] > idx[k]) {
				__u32 t = idx[k];

				idx[k] = idx[m];
				idx[m] = t;
			}
	for (__u32 k = 0; k < njoin; k++) {
		struct buf *b = &ctx->bufs[idx[k]];

		for (__u32 h = 0; h < ctx->njoined; h++)
			if (ctx->joined[h].parent == b->id)
				ctx->joined[h].parent = a->id;
		ctx->joined[ctx->njoined] = *b;
		ctx->joined[ctx->njoined++].parent = a->id;
		xl_buf_del(ctx, b);
	}
	return xl_buf_add(ctx, &nb);
}

void *xhca_adopt(struct xhca_ctx *ctx, void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(XHCA_PAGE_SIZE - 1), hi;
	struct xhca_alloc_join *join = NULL;
	__u32 *idx = NULL, *pages = NULL, njoin = 0, npages;
	struct xhca_alloc a = {};
	__u8 *taken = NULL;
	void *r = NULL;
	int err, prot;

	pthread_once(&fork_once, fork_init);
	if (!len || (uintptr_t)addr + len < (uintptr_t)addr) {
		err = xl_fail(ctx, -EINVAL, "adopt: %zu bytes at %p: no such range", len, addr);
		goto out;
	}
	hi = lo + pages_of((uintptr_t)addr + len - lo);
	idx = calloc(ctx->nbufs + 1, sizeof(*idx));
	join = calloc(ctx->nbufs + 1, sizeof(*join));
	if (!idx || !join) {
		err = -ENOMEM;
		goto out;
	}
	err = adopt_union(ctx, &lo, &hi, idx, &njoin);
	if (err) {
		xl_fail(ctx, err, "adopt: %zu bytes at %p overlap a buffer of xhca_alloc", len, addr);
		goto out;
	}
	npages = (__u32)((hi - lo) / XHCA_PAGE_SIZE);
	taken = calloc(npages, 1);
	pages = calloc(npages, sizeof(*pages));
	if (!taken || !pages) {
		err = -ENOMEM;
		goto out;
	}
	for (__u32 k = 0; k < njoin; k++) {
		const struct buf *b = &ctx->bufs[idx[k]];
		__u32 at = (__u32)(((uintptr_t)b->va - lo) / XHCA_PAGE_SIZE);

		join[k] = (struct xhca_alloc_join){ .id = b->id, .page = at };
		memset(taken + at, 1, b->len / XHCA_PAGE_SIZE);
	}
	/* the pages no buffer has yet must be the application's private memory */
	for (__u32 p = 0, q; next_gap(taken, npages, &p, &q); p = q) {
		err = maps_check(lo + (uintptr_t)p * XHCA_PAGE_SIZE, (size_t)(q - p) * XHCA_PAGE_SIZE,
				 0, &prot);
		if (err) {
			xl_fail(ctx, err, err == -EFAULT ? "adopt: %zu bytes at %p are not all mapped "
					  "and readable" : "adopt: %zu bytes at %p are not private memory "
					  "(a shared or hugetlb mapping): register a buffer of malloc, "
					  "posix_memalign or mmap(MAP_PRIVATE | MAP_ANONYMOUS)", len, addr);
			goto out;
		}
	}
	err = xl_alloc_join_call(ctx, hi - lo, 0, join, njoin, &a, &r);
	if (err)
		goto out;
	{
		const struct xhca_alloc_run *runs = (const void *)((const __u8 *)r + sizeof(a));

		for (__u32 i = 0, p = 0; i < a.nruns; i++)
			for (__u32 c = 0; c < runs[i].count && p < npages; c++)
				pages[p++] = runs[i].page + c;
	}
	err = adopt_gaps(ctx, (__u8 *)lo, pages, taken, npages);
	if (!err)
		err = adopt_commit(ctx, lo, hi, &a, idx, njoin);
out:
	free(r);
	free(idx);
	free(join);
	free(taken);
	free(pages);
	if (err) {
		xl_alloc_undo(ctx, a.id);
		errno = -err;
		return NULL;
	}
	return (void *)lo;
}

/* The adopted buffer at b goes back to private memory with its bytes, if
 * the application still has host memory there (it may have unmapped it). */
void xl_unadopt_pages(struct buf *b)
{
	int prot;

	if (!maps_check((uintptr_t)b->va, b->len, 1, &prot))
		to_private(b->va, b->len);
}

int xhca_unadopt(struct xhca_ctx *ctx, void *base)
{
	struct buf *b = xl_buf_find(ctx, base, 1);
	int err;

	if (!b || b->va != base || !b->adopted)
		return xl_fail(ctx, -EFAULT, "unadopt: %p is not the start of adopted memory", base);
	xl_unadopt_pages(b);
	err = xl_call(ctx, XHCA_CTL_FREE, &b->id, sizeof(b->id), -1, NULL, 0, NULL);
	/* and the allocations it joined, whose pages it held too */
	for (__u32 h = 0; h < ctx->njoined;) {
		if (ctx->joined[h].parent != b->id) {
			h++;
			continue;
		}
		if (!err)
			err = xl_call(ctx, XHCA_CTL_FREE, &ctx->joined[h].id, sizeof(ctx->joined[h].id),
				      -1, NULL, 0, NULL);
		ctx->joined[h] = ctx->joined[--ctx->njoined];
	}
	xl_buf_del(ctx, b);
	return err;
}
