/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The lock service (locksvc.h). */
#include <stdlib.h>
#include <string.h>
#include "locksvc.h"

void locksvc_init(struct locksvc *s)
{
	memset(s, 0, sizeof(*s));
}

static struct lock_ent *find(struct locksvc *s, const char *name, int create)
{
	struct lock_ent *free_slot = NULL;

	for (unsigned int i = 0; i < LOCKSVC_MAX; i++) {
		if (!strcmp(s->e[i].name, name))
			return &s->e[i];
		if (!free_slot && !s->e[i].name[0])
			free_slot = &s->e[i];
	}
	if (!create || !free_slot)
		return NULL;
	strcpy(free_slot->name, name);
	return free_slot;
}

/* A lock nobody holds or waits for gives its slot back. */
static void tidy(struct lock_ent *e)
{
	if (!e->owner[0] && !e->nwait)
		e->name[0] = 0;
}

unsigned int locksvc_cancel(struct locksvc *s, __u64 value, __u64 mask)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LOCKSVC_MAX; i++) {
		struct lock_ent *e = &s->e[i];

		for (unsigned int k = 0; k < e->nwait;) {
			if ((e->wait[k].cookie & mask) != (value & mask)) {
				k++;
				continue;
			}
			memmove(&e->wait[k], &e->wait[k + 1], (e->nwait - k - 1) * sizeof(e->wait[0]));
			e->nwait--;
			n++;
		}
		if (e->name[0])
			tidy(e);
	}
	return n;
}

const char *locksvc_owner(const struct locksvc *s, const char *name)
{
	struct lock_ent *e = find((struct locksvc *)s, name, 0);

	return e ? e->owner : "";
}

/* Splits msg into up to 4 words of < LOCKSVC_NAME bytes (commas stay in a
 * word). Returns the number of words, or -1: too long, not text. */
static int words(const __u8 *msg, __u32 len, char w[4][LOCKSVC_NAME * 8])
{
	int n = 0;
	__u32 i = 0;

	while (len && msg[len - 1] == 0)
		len--; /* a C string's NUL, and padding */
	while (i < len) {
		size_t k = 0;

		while (i < len && (msg[i] == ' ' || msg[i] == '\n'))
			i++;
		if (i == len)
			break;
		if (n == 4)
			return -1;
		while (i < len && msg[i] != ' ' && msg[i] != '\n') {
			if (msg[i] < 0x21 || msg[i] > 0x7e || k + 1 >= sizeof(w[0]))
				return -1;
			w[n][k++] = (char)msg[i++];
		}
		w[n++][k] = 0;
	}
	return n;
}

static int name_ok(const char *n)
{
	return n[0] && strlen(n) < LOCKSVC_NAME;
}

/* Takes e for owner if it is free or owner's. */
static int take(struct lock_ent *e, const char *owner)
{
	if (e->owner[0] && strcmp(e->owner, owner))
		return 0;
	strcpy(e->owner, owner);
	return 1;
}

/* Gives e to its first waiter, or frees it. */
static void pass_on(struct locksvc *s, struct lock_ent *e, lock_done_fn done, void *arg)
{
	e->owner[0] = 0;
	if (e->nwait) {
		struct lock_waiter w = e->wait[0];

		memmove(&e->wait[0], &e->wait[1], (e->nwait - 1) * sizeof(e->wait[0]));
		e->nwait--;
		strcpy(e->owner, w.owner);
		s->granted++;
		done(arg, w.cookie, LOCK_GRANTED);
	}
	tidy(e);
}

static enum lock_result lock_all(struct locksvc *s, char *list, const char *owner)
{
	struct lock_ent *taken[16];
	unsigned int n = 0;
	char *save = NULL;

	for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		struct lock_ent *e = name_ok(name) && n < 16 ? find(s, name, 1) : NULL;
		int was_free = e && !e->owner[0];

		if (!e || !take(e, owner)) {
			/* undo: what this request took goes back */
			for (unsigned int i = 0; i < n; i++) {
				taken[i]->owner[0] = 0;
				tidy(taken[i]);
				s->undone++;
			}
			if (e)
				tidy(e);
			s->declined++;
			return LOCK_DECLINED;
		}
		if (was_free)
			taken[n++] = e;
	}
	s->granted++;
	return LOCK_GRANTED;
}

enum lock_result locksvc_handle(struct locksvc *s, const __u8 *msg, __u32 len, __u64 cookie,
				__u64 now_ns, lock_done_fn done, void *arg)
{
	char w[4][LOCKSVC_NAME * 8];
	int n = words(msg, len, w);
	struct lock_ent *e;

	if (n == 3 && !strcmp(w[0], "LOCKALL") && name_ok(w[2]))
		return lock_all(s, w[1], w[2]);
	if ((n == 3 || n == 4) && !strcmp(w[0], "LOCK") && name_ok(w[1]) && name_ok(w[2])) {
		char *end = NULL;
		unsigned long wait_ms = n == 4 ? strtoul(w[3], &end, 10) : 0;

		if ((n == 4 && (!end || *end || wait_ms > 3600000)) || !(e = find(s, w[1], 1)))
			goto decline;
		if (take(e, w[2])) {
			s->granted++;
			return LOCK_GRANTED;
		}
		if (!wait_ms || e->nwait == LOCKSVC_WAITERS) {
			s->refused++;
			return LOCK_REFUSED;
		}
		e->wait[e->nwait].cookie = cookie;
		e->wait[e->nwait].deadline_ns = now_ns + (__u64)wait_ms * 1000000u;
		strcpy(e->wait[e->nwait++].owner, w[2]);
		return LOCK_WAITING;
	}
	if (n == 3 && !strcmp(w[0], "UNLOCK") && name_ok(w[1]) && name_ok(w[2])) {
		e = find(s, w[1], 0);
		if (!e || strcmp(e->owner, w[2])) {
			s->refused++;
			return LOCK_REFUSED; /* not the owner's to release */
		}
		s->released++;
		pass_on(s, e, done, arg);
		return LOCK_RELEASED;
	}
decline:
	s->declined++;
	return LOCK_DECLINED;
}

void locksvc_tick(struct locksvc *s, __u64 now_ns, lock_done_fn done, void *arg)
{
	for (unsigned int i = 0; i < LOCKSVC_MAX; i++) {
		struct lock_ent *e = &s->e[i];

		for (unsigned int k = 0; k < e->nwait;) {
			if (e->wait[k].deadline_ns > now_ns) {
				k++;
				continue;
			}
			__u64 cookie = e->wait[k].cookie;

			memmove(&e->wait[k], &e->wait[k + 1], (e->nwait - k - 1) * sizeof(e->wait[0]));
			e->nwait--;
			s->refused++;
			done(arg, cookie, LOCK_REFUSED);
		}
		if (e->name[0])
			tidy(e);
	}
}
