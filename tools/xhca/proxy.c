/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca proxy: the proxy thread: show, pause, resume.
 */
#include "cli.h"

/* The proxy's state and counters: one call per value, text or JSON (out.c). */
static void proxy_print(const struct xhca_proxy_info *p)
{
	out_open(NULL, NULL);
	out_bool("paused", NULL, p->paused);
	out_text("proxy:        %s", p->paused ? "paused (taking no requests)" : "running");
	out_u64("qps", ", %llu QPs on proxy CQs", p->qps);
	out_u64("filters", ", %llu filters\n", p->filters);
	out_u64("limit_high", "load limit:   %llu requests waiting stop offloading", p->limit_high);
	out_u64("limit_low", ", %llu start it again", p->limit_low);
	out_u64("backlog", "; now %llu waiting", p->backlog);
	out_bool("no_offload_mode", NULL, p->gate);
	out_text("%s", p->gate ? ", no offload mode" : "");
	out_u64("gate_closes", " (%llu times closed)\n", p->gate_closes);
	out_u64("offloaded", "xhca_rx:      %llu offloaded", p->offloaded);
	out_u64("normal", ", %llu normal", p->normal);
	out_u64("no_offload", ", %llu held back by the load limit", p->no_offload);
	out_u64("records", ", %llu WRITE records", p->records);
	out_u64("record_fail", " (%llu lost)\n", p->record_fail);
	out_u64("frames", "executed:     %llu frames", p->frames);
	out_u64("reads", ": %llu READs", p->reads);
	out_u64("atomics", ", %llu ATOMICs", p->atomics);
	out_u64("sends", ", %llu SENDs", p->sends);
	out_u64("declined", " (%llu declined", p->declined);
	out_u64("replayed", ", %llu frames replayed)", p->replayed);
	out_u64("tx_frames", ", %llu response frames", p->tx_frames);
	out_u64("acks", " (%llu ACKs)\n", p->acks);
	out_u64("lock_granted", "locks:        %llu granted", p->lock_granted);
	out_u64("lock_refused", ", %llu refused", p->lock_refused);
	out_u64("lock_released", ", %llu released", p->lock_released);
	out_u64("lock_undone", ", %llu undone\n", p->lock_undone);
	out_text("handlers:    ");
	if (json)
		jw_open("handlers", '[');
	for (int k = 0; k < XHCA_PXH_MAX; k++) {
		char n[17];

		field_str(n, sizeof(n), p->handlers[k], sizeof(p->handlers[k]));
		if (!n[0])
			continue;
		if (json)
			jw_open(NULL, '{');
		out_u64("id", " %llu", (unsigned long long)k);
		out_str("name", "=%s", n);
		if (json)
			jw_close('}');
	}
	if (json)
		jw_close(']');
	out_u64("handled", "; %llu SENDs taken by loaded ones\n", p->handled);
	out_u64("released", "completions:  %llu released in order", p->released);
	out_u64("skipped", ", %llu no-ops", p->skipped);
	out_u64("late", ", %llu late", p->late);
	out_u64("gaps", ", %llu gaps timed out", p->gaps);
	out_u64("timeout_ms", " (after %llu ms)", p->timeout_ms);
	out_u64("lost", ", %llu lost\n", p->lost);
	out_close(NULL);
}

static int proxy_cmd(const struct call *call, int argc, char **argv, int set, __u32 paused)
{
	struct xhca_proxy_set r = { .paused = paused };
	struct xhca_proxy_info *p = NULL;
	const char *op = call->op;
	__u32 len = 0;
	int rc;

	rc = parse_word(call, argc, argv, NULL);
	if (rc)
		return rc;
	rc = set ? request(op, XHCA_CTL_PROXY_SET, &r, sizeof(r), (void **)&p, &len)
		 : request(op, XHCA_CTL_PROXY_SHOW, NULL, 0, (void **)&p, &len);
	if (rc)
		goto out;
	if (len < sizeof(*p)) {
		rc = short_reply(op, len, sizeof(*p));
		goto out;
	}
	proxy_print(p);
out:
	free(p);
	return rc;
}

static int do_proxy_show(const struct call *call, int argc, char **argv)
{
	return proxy_cmd(call, argc, argv, 0, 0);
}

static int do_proxy_pause(const struct call *call, int argc, char **argv)
{
	return proxy_cmd(call, argc, argv, 1, 1);
}

static int do_proxy_resume(const struct call *call, int argc, char **argv)
{
	return proxy_cmd(call, argc, argv, 1, 0);
}

const char proxy_text[] =
	"The proxy thread: it executes the requests xhca_rx offloads to it (xhca\n"
	"filter add) and releases their completions in message order.";

const struct cmd proxy_cmds[] = {
	{ .name = "show", .fn = do_proxy_show, .summary = "its load limit and counters",
	  .text = "Shows the proxy thread: its load limit, what xhca_rx offloaded, what it\n"
		  "executed and the completions it released in order." },
	{ .name = "pause", .fn = do_proxy_pause, .summary = "it takes no new requests",
	  .text = "The proxy thread takes no new requests (they wait in the proxy queue, whose\n"
		  "backlog then closes the load limit's gate: no offload mode). Prints what\n"
		  "proxy show prints." },
	{ .name = "resume", .fn = do_proxy_resume, .summary = "it takes requests again",
	  .text = "The proxy thread takes requests again. Prints what proxy show prints." },
	{ 0 },
};
