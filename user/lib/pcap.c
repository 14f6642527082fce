/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Classic pcap files, written in host byte order: readers detect the order
 * from the magic number, so no swapping is needed.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <xhca/pcap.h>

#define PCAP_MAGIC_USEC 0xa1b2c3d4u
#define PCAP_LINKTYPE_ETHERNET 1

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};
_Static_assert(sizeof(struct pcap_file_hdr) == 24, "pcap file header size");

struct pcap_rec_hdr {
	uint32_t ts_sec;
	uint32_t ts_usec;
	uint32_t incl_len;
	uint32_t orig_len;
};
_Static_assert(sizeof(struct pcap_rec_hdr) == 16, "pcap record header size");

int xhca_pcap_open(const char *path, FILE **out)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_USEC,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = 65535,
		.linktype = PCAP_LINKTYPE_ETHERNET,
	};
	FILE *f;
	int err = 0;

	f = fopen(path, "wb");
	if (!f)
		return -errno;
	errno = 0;	/* fwrite need not set errno: EIO if it did not */
	if (fwrite(&h, sizeof(h), 1, f) != 1) {
		err = errno ? -errno : -EIO;
		goto out;
	}
	*out = f;
	f = NULL;
out:
	if (f)
		fclose(f);
	return err;
}

int xhca_pcap_write(FILE *f, const void *frame, size_t len)
{
	struct pcap_rec_hdr r;
	struct timespec ts;

	if (!f || (!frame && len) || len > 65535)
		return -EINVAL;
	clock_gettime(CLOCK_REALTIME, &ts);
	r.ts_sec = (uint32_t)ts.tv_sec;
	r.ts_usec = (uint32_t)(ts.tv_nsec / 1000);
	r.incl_len = r.orig_len = (uint32_t)len;
	errno = 0;
	if (fwrite(&r, sizeof(r), 1, f) != 1 || (len && fwrite(frame, len, 1, f) != 1))
		return errno ? -errno : -EIO;
	return 0;
}

int xhca_pcap_close(FILE *f)
{
	if (!f)
		return -EINVAL;
	errno = 0;
	if (fclose(f))
		return errno ? -errno : -EIO;
	return 0;
}
