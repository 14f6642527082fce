/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-neightest: the neighbour lookup (xhca_neigh_lookup, user/lib/
 * neigh.c) against the table of this network namespace (tests/integ/
 * neigh.sh sets it up).
 *
 *   xhca-neightest [--dump] IF THREADS ROUNDS ADDR=MAC|ADDR=none ...
 *
 * Each address (IPv4 or IPv6) looked up once on IF: its MAC, or none
 * (-ENOENT); then THREADS threads at once, each ROUNDS times through every
 * address, every answer checked. --dump: the fallback of kernels before 5.0
 * (xhca_neigh_lookup_dump) instead. A line per check (check.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xhca/pkt.h>
#include "check.h"

struct want {
	const char *name;
	uint8_t ip[16];
	int ipv6;
	int have;	/* a MAC expected, else -ENOENT */
	uint8_t mac[6];
};

static struct want *wants;
static int n_wants, ifindex, rounds;
static int (*look)(int, const uint8_t *, int, uint8_t *);

struct worker {
	pthread_t t;
	int id;
	long wrong, errs;
};

/* 0: the answer expected; else what came instead, in out */
static int ask(const struct want *w, char *out, size_t len)
{
	uint8_t mac[6] = { 0 };
	int err = look(ifindex, w->ip, w->ipv6, mac);

	if (err)
		snprintf(out, len, "%s", strerror(-err));
	else
		snprintf(out, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
			 mac[4], mac[5]);
	if (w->have)
		return err || memcmp(mac, w->mac, 6);
	return err != -ENOENT;
}

static void *work(void *arg)
{
	struct worker *k = arg;
	char out[64];

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < n_wants; i++) { /* each thread in another order */
			const struct want *w = &wants[(i + k->id * 7) % n_wants];

			if (ask(w, out, sizeof(out))) {
				k->wrong++;
				if (k->wrong <= 3)
					fprintf(stderr, "thread %d: %s: %s\n", k->id, w->name, out);
			}
		}
	return NULL;
}

static int parse(struct want *w, char *arg)
{
	char *eq = strchr(arg, '=');
	struct in_addr a4;

	if (!eq)
		return -1;
	*eq = 0;
	w->name = arg;
	if (inet_pton(AF_INET, arg, &a4) == 1) {
		memset(w->ip, 0, 10);
		w->ip[10] = w->ip[11] = 0xff;
		memcpy(w->ip + 12, &a4, 4);
	} else if (inet_pton(AF_INET6, arg, w->ip) == 1) {
		w->ipv6 = 1;
	} else {
		return -1;
	}
	if (!strcmp(eq + 1, "none"))
		return 0;
	w->have = 1;
	return sscanf(eq + 1, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &w->mac[0], &w->mac[1], &w->mac[2],
		      &w->mac[3], &w->mac[4], &w->mac[5]) == 6 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *how = "lookup";
	struct worker *ks;
	struct timespec t0, t1;
	int threads, a = 1;
	long wrong = 0, total;
	uint8_t mac[6];
	char out[64];
	double us;

	look = xhca_neigh_lookup;
	if (argc > 1 && !strcmp(argv[1], "--dump")) {
		look = xhca_neigh_lookup_dump;
		how = "dump";
		a++;
	}
	if (argc - a < 4) {
		fprintf(stderr, "usage: %s [--dump] IF THREADS ROUNDS ADDR=MAC|ADDR=none ...\n", argv[0]);
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[a]);
	threads = atoi(argv[a + 1]);
	rounds = atoi(argv[a + 2]);
	if (!ifindex || threads < 1 || rounds < 1) {
		fprintf(stderr, "%s: no such interface, or no threads or rounds\n", argv[a]);
		return 2;
	}
	n_wants = argc - a - 3;
	wants = calloc((size_t)n_wants, sizeof(*wants));
	ks = calloc((size_t)threads, sizeof(*ks));
	if (!wants || !ks)
		return 2;
	for (int i = 0; i < n_wants; i++)
		if (parse(&wants[i], argv[a + 3 + i])) {
			fprintf(stderr, "not ADDR=MAC or ADDR=none: %s\n", argv[a + 3 + i]);
			return 2;
		}

	for (int i = 0; i < n_wants; i++) {
		const struct want *w = &wants[i];
		int bad = ask(w, out, sizeof(out));

		check(!bad, "neigh %s: %s on %s: %s%s", how, w->name, argv[a], out,
		      bad ? (w->have ? " (want its MAC)" : " (want no entry)") : "");
	}
	/* an interface that is not there has no entry either */
	check(look(0, wants[0].ip, wants[0].ipv6, mac) == -ENOENT &&
		      look(0x7ffffff0, wants[0].ip, wants[0].ipv6, mac) == -ENOENT,
	      "neigh %s: %s on no interface (0, or an index none has): no entry", how,
	      wants[0].name);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < threads; i++) {
		ks[i].id = i;
		if (pthread_create(&ks[i].t, NULL, work, &ks[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return 2;
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(ks[i].t, NULL);
		wrong += ks[i].wrong;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	total = (long)threads * rounds * n_wants;
	us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) *
	     threads / (double)total;
	check(!wrong, "neigh %s: %d threads at once, %ld lookups: %ld wrong (%.1f us a lookup)", how,
	      threads, total, wrong, us);
	free(ks);
	free(wants);
	return fails ? 1 : 0;
}
