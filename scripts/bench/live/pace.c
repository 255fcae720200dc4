/*
 * pace: a paced packet sender for scripts/bench/live.sh.
 *
 *   pace IFACE FRAMES COUNT [PPS]
 *
 * Sends COUNT frames from FRAMES (written by `livebench.py frames`) on IFACE through an
 * AF_PACKET socket (qdisc bypass), looping over the file, at PPS frames per second (0 or
 * absent: as fast as it can). Frames go out in small batches with sendmmsg(); the batches are
 * scheduled on an absolute timeline (about one every 200 us), so the average rate is exact and
 * the largest burst is one batch, unlike trafgen's --rate (a second's worth of frames at top
 * speed, then a sleep). On every pass over the file, the address bytes the file marks get the
 * pass number (mod 256) and the IPv4 header and TCP/UDP checksums are updated incrementally
 * (RFC 1624), so each pass carries fresh flows.
 *
 * Prints "sent N packets in S seconds" on success. Linux only; standard C and libc.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NONE 0xFFFF
#define MAX_BATCH 256

struct frame {
	uint8_t *data;
	uint16_t len;
	uint8_t ncnt;     /* bytes that carry the pass number */
	uint8_t udp;      /* the L4 checksum is UDP's (0 is written as 0xFFFF) */
	uint16_t cnt[4];  /* their offsets */
	uint16_t word[4]; /* offset of the 16-bit checksum word holding each */
	uint16_t ipcsum;  /* IPv4 header checksum offset, or NONE */
	uint16_t l4csum;  /* TCP/UDP checksum offset, or NONE */
	int pass;         /* pass number the bytes carry now (-1: original) */
};

static void die(const char *what)
{
	fprintf(stderr, "pace: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void wr16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v & 0xFF; }

/* RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'). */
static uint16_t csum_update(uint16_t hc, uint16_t m, uint16_t m2)
{
	uint32_t s = (uint16_t)~hc + (uint16_t)~m + m2;
	s = (s & 0xFFFF) + (s >> 16);
	s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)~s;
}

static void set_pass(struct frame *f, int pass)
{
	for (int i = 0; i < f->ncnt; i++) {
		uint8_t *w = f->data + f->word[i];
		uint16_t before = rd16(w);
		f->data[f->cnt[i]] = (uint8_t)pass;
		uint16_t after = rd16(w);
		if (f->ipcsum != NONE)
			wr16(f->data + f->ipcsum, csum_update(rd16(f->data + f->ipcsum), before, after));
		if (f->l4csum != NONE) {
			uint16_t c = csum_update(rd16(f->data + f->l4csum), before, after);
			if (f->udp && c == 0)
				c = 0xFFFF;
			wr16(f->data + f->l4csum, c);
		}
	}
	f->pass = pass;
}

static struct frame *load(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		die(path);
	char magic[8];
	uint32_t count;
	if (fread(magic, 1, 8, fp) != 8 || memcmp(magic, "SHRKPACE", 8) || fread(&count, 4, 1, fp) != 1 || !count) {
		fprintf(stderr, "pace: %s: not a frames file\n", path);
		exit(1);
	}
	struct frame *fr = calloc(count, sizeof(*fr));
	if (!fr)
		die("calloc");
	for (uint32_t i = 0; i < count; i++) {
		uint8_t h[4];
		uint16_t meta[10];
		struct frame *f = &fr[i];
		if (fread(h, 1, 4, fp) != 4)
			goto short_file;
		f->len = (uint16_t)(h[0] | h[1] << 8);
		f->ncnt = h[2];
		f->udp = h[3];
		if (f->ncnt > 4 || f->len < 14)
			goto short_file;
		if (fread(meta, 2, 10, fp) != 10)
			goto short_file;
		for (int k = 0; k < 4; k++) {
			f->cnt[k] = meta[k];
			f->word[k] = meta[4 + k];
		}
		f->ipcsum = meta[8];
		f->l4csum = meta[9];
		f->data = malloc(f->len);
		if (!f->data)
			die("malloc");
		if (fread(f->data, 1, f->len, fp) != f->len)
			goto short_file;
		for (int k = 0; k < f->ncnt; k++)
			if (f->cnt[k] >= f->len || f->word[k] + 1 >= f->len)
				goto short_file;
		if ((f->ipcsum != NONE && f->ipcsum + 1 >= f->len) || (f->l4csum != NONE && f->l4csum + 1 >= f->len))
			goto short_file;
		f->pass = -1;
	}
	fclose(fp);
	*n = count;
	return fr;
short_file:
	fprintf(stderr, "pace: %s: truncated or malformed frames file\n", path);
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts;
	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: pace IFACE FRAMES COUNT [PPS]\n");
		return 2;
	}
	unsigned long long count = strtoull(argv[3], NULL, 10);
	double pps = argc == 5 ? strtod(argv[4], NULL) : 0;
	size_t nframes;
	struct frame *fr = load(argv[2], &nframes);

	int sock = socket(AF_PACKET, SOCK_RAW, 0);
	if (sock < 0)
		die("socket");
	int one = 1;
	/* Straight to the driver: no qdisc between the sender and the wire. */
	if (setsockopt(sock, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) < 0)
		die("PACKET_QDISC_BYPASS");
	struct sockaddr_ll sll = {0};
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = 0;
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	if (!sll.sll_ifindex)
		die(argv[1]);
	if (bind(sock, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		die("bind");
	prctl(PR_SET_TIMERSLACK, 1UL);

	/* About one batch per 200 us when paced; 64 frames per call flat out. */
	unsigned batch = 64;
	if (pps > 0) {
		double b = pps * 200e-6;
		batch = b < 1 ? 1 : b > MAX_BATCH ? MAX_BATCH : (unsigned)b;
	}
	/* A frame appears at most once per batch: its bytes change between passes. */
	if (batch > nframes)
		batch = (unsigned)nframes;
	struct mmsghdr msgs[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	memset(msgs, 0, sizeof(msgs));

	unsigned long long sent = 0, idx = 0;
	double t0 = now(), t_last = t0;
	while (sent < count) {
		unsigned n = 0;
		while (n < batch && sent + n < count) {
			size_t i = idx % nframes;
			struct frame *f = &fr[i];
			int pass = (int)((idx / nframes) & 0xFF);
			if (f->ncnt && f->pass != pass)
				set_pass(f, pass);
			iov[n].iov_base = f->data;
			iov[n].iov_len = f->len;
			msgs[n].msg_hdr.msg_iov = &iov[n];
			msgs[n].msg_hdr.msg_iovlen = 1;
			n++;
			idx++;
		}
		if (pps > 0) {
			double due = t0 + (double)sent / pps;
			if (due > now())
				sleep_until(due);
		}
		unsigned done = 0;
		while (done < n) {
			int r = sendmmsg(sock, msgs + done, n - done, 0);
			if (r < 0) {
				if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
					sched_yield();
					continue;
				}
				die("sendmmsg");
			}
			done += (unsigned)r;
		}
		sent += n;
		t_last = now();
	}
	printf("sent %llu packets in %.6f seconds\n", sent, t_last - t0);
	return 0;
}
