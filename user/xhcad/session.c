/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Application sessions: a session is a control connection that said HELLO
 * (or, after a restart, one that waits for its process to come back). The
 * list of them, low in xhcad's layers: the requester finds a session's send
 * doorbell here. What a session owned goes when it ends: client.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "log.h"
#include "xhcad_queues.h"

struct session *session_find(struct xhcad *d, __u32 id)
{
	for (struct session *s = d->app.sessions; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

struct session *session_new(struct xhcad *d, int fd, const struct xhca_hello *h, __u32 pid)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = ++d->app.next_session;
	s->fd = fd;
	s->pidfd = -1;
	s->sq_dbfd = -1;
	s->pid = pid;
	s->start = proc_start_time(pid);
	snprintf(s->name, sizeof(s->name), "%.*s", (int)strnlen(h->name, sizeof(h->name)),
		 h->name);
	s->next = d->app.sessions;
	d->app.sessions = s;
	d->app.nsessions++;
	pr_info("session %u: %s (pid %u)\n", s->id, s->name, s->pid);
	return s;
}

void session_fini(struct xhcad *d)
{
	while (d->app.sessions) {
		struct session *s = d->app.sessions;

		d->app.sessions = s->next;
		if (s->pidfd >= 0)
			close(s->pidfd);
		if (s->sq_dbfd >= 0)
			close(s->sq_dbfd);
		free(s);
	}
	d->app.nsessions = 0;
}
