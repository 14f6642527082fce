/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal pcap writer (user/lib/pcap.c): classic libpcap format, microsecond
 * timestamps, link type Ethernet. Lets xhca-gen and the tests hand frames to
 * tshark and scapy without a network interface.
 */
#ifndef XHCA_PCAP_H
#define XHCA_PCAP_H

#include <stddef.h>
#include <stdio.h>

/* Creates (truncates) path and writes the global header. */
int xhca_pcap_open(const char *path, FILE **out);
/* Appends one frame, stamped with the current time. */
int xhca_pcap_write(FILE *f, const void *frame, size_t len);
/* Flushes and closes; reports a failed flush (e.g. disk full). */
int xhca_pcap_close(FILE *f);

#endif /* XHCA_PCAP_H */
