// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_mpi_test - an MPI program that checks every byte it moves.
 *
 *   mpirun -np N sroce_mpi_test [-m MAX_BYTES] [-x SIZE]
 *
 * Built once per MPI implementation (tests/progs/Makefile: .openmpi with
 * mpicc.openmpi, .mpich with mpicc.mpich); the transport is the launcher's
 * business (tests/groups/apps.sh forces it onto the RDMA device).
 *
 *   p2p        every rank sends to the next rank of a ring and receives
 *              from the previous one, then the other way round, messages
 *              of every power of two from 8 bytes to MAX_BYTES (4 MiB by
 *              default) and of a few odd sizes between; each message has
 *              its own pattern (sender, receiver, size, direction), and
 *              the receiver checks its length and every byte;
 *   allreduce  MPI_SUM over 64-bit integers, 1 and 131072 of them (1 MiB),
 *              every element of the result against the sum computed
 *              locally;
 *   rma        one-sided: each rank MPI_Puts a pattern into the next
 *              rank's window and MPI_Gets the previous rank's own pattern
 *              from its window (fence epochs), 8 bytes, 64 KiB and 1 MiB;
 *              every byte checked.
 *
 * Rank 0 prints one line per part and last "bytes between ranks: N", the
 * payload the ranks sent each other (point-to-point and one-sided; the
 * collective's traffic depends on its algorithm and is not counted), for
 * the caller to hold against the device's packet counters.  Any wrong
 * byte prints "FAIL: rank R: ..." and aborts the job with status 1.
 * -x SIZE proves that: the senders of point-to-point messages of SIZE
 * bytes change one byte in the middle after making the pattern.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

#define DEFAULT_MAX (4u << 20)
#define RMA_MAX (1u << 20)
#define TAG_P2P 17

static int rank, nranks;
static size_t spoil_size;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL: rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void mpi_check(int err, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (err == MPI_SUCCESS)
		return;
	MPI_Error_string(err, msg, &len);
	fail("%s: %.*s", what, len, msg);
}

/* splitmix64: a different word at every offset of every message. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Byte @i of the pattern @seed: byte i % 8 of its own 64-bit word. */
static uint64_t pat_word(uint64_t seed, size_t w)
{
	return mix(seed ^ (w * 0x100000001b3ull));
}

static uint8_t pat_byte(uint64_t seed, size_t i)
{
	return (uint8_t)(pat_word(seed, i / 8) >> (8 * (i % 8)));
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	size_t w, i;

	for (w = 0; w < len / 8; w++) {
		uint64_t x = pat_word(seed, w);

		for (i = 0; i < 8; i++)
			p[8 * w + i] = (uint8_t)(x >> (8 * i));
	}
	for (i = len / 8 * 8; i < len; i++)
		p[i] = pat_byte(seed, i);
}

/* The first wrong byte of @p against the pattern, or -1; @nbad: how many. */
static long first_bad(const uint8_t *p, size_t len, uint64_t seed, size_t *nbad)
{
	long first = -1;
	size_t i;

	*nbad = 0;
	for (i = 0; i < len; i++) {
		if (i % 8 == 0 && i + 8 <= len) {
			uint64_t x = pat_word(seed, i / 8);
			size_t j;

			for (j = 0; j < 8; j++)
				if (p[i + j] != (uint8_t)(x >> (8 * j)))
					break;
			if (j == 8) {
				i += 7;
				continue;
			}
		}
		if (p[i] == pat_byte(seed, i))
			continue;
		if (first < 0)
			first = (long)i;
		(*nbad)++;
	}
	return first;
}

static void expect(const uint8_t *p, size_t len, uint64_t seed, const char *what,
		   size_t size, int peer)
{
	size_t nbad;
	long off = first_bad(p, len, seed, &nbad);

	if (off >= 0)
		fail("%s of %zu bytes from rank %d: %zu wrong bytes, the first at offset %ld is 0x%02x, expected 0x%02x",
		     what, size, peer, nbad, off, p[off], pat_byte(seed, (size_t)off));
}

static uint64_t seed_of(unsigned int part, int from, int to, size_t size, int dir)
{
	return mix(((uint64_t)part << 56) ^ ((uint64_t)(unsigned int)from << 40) ^
		   ((uint64_t)(unsigned int)to << 24) ^ ((uint64_t)dir << 20) ^ size);
}

static size_t p2p_sizes(size_t max, size_t *out)
{
	static const size_t odd[] = { 13, 1000, 4097, 65535, 1048577 };
	size_t n = 0, s, i;

	for (s = 8; s <= max; s *= 2)
		out[n++] = s;
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		if (odd[i] <= max)
			out[n++] = odd[i];
	return n;
}

/* One message each way round the ring per size; returns the bytes sent. */
static uint64_t part_p2p(size_t max, uint8_t *sbuf, uint8_t *rbuf)
{
	size_t sizes[64], n = p2p_sizes(max, sizes), k;
	uint64_t sent = 0;
	int dir;

	for (dir = 0; dir < 2; dir++) {
		int to = (rank + (dir ? nranks - 1 : 1)) % nranks;
		int from = (rank + (dir ? 1 : nranks - 1)) % nranks;

		for (k = 0; k < n; k++) {
			size_t size = sizes[k];
			MPI_Status st;
			int got = -1;

			fill(sbuf, size, seed_of(1, rank, to, size, dir));
			if (size == spoil_size)
				sbuf[size / 2] ^= 0x20;
			memset(rbuf, 0, size + 64);
			mpi_check(MPI_Sendrecv(sbuf, (int)size, MPI_BYTE, to, TAG_P2P,
					       rbuf, (int)size + 64, MPI_BYTE, from, TAG_P2P,
					       MPI_COMM_WORLD, &st), "MPI_Sendrecv");
			mpi_check(MPI_Get_count(&st, MPI_BYTE, &got), "MPI_Get_count");
			if (got < 0 || (size_t)got != size)
				fail("p2p: a message of %zu bytes from rank %d arrived as %d bytes",
				     size, from, got);
			expect(rbuf, size, seed_of(1, from, rank, size, dir), "p2p message",
			       size, from);
			if (to != rank)
				sent += size;
		}
	}
	if (rank == 0)
		printf("p2p: %zu sizes from 8 to %zu bytes, each way round a ring of %d ranks, every byte checked\n",
		       n, max, nranks);
	return sent;
}

static int64_t contrib(int r, size_t i)
{
	return (int64_t)(mix(((uint64_t)(unsigned int)r << 32) ^ i) >> 20) - (1ll << 42);
}

static void part_allreduce(void)
{
	static const size_t counts[] = { 1, 131072 };
	size_t c, i;
	int r;

	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t n = counts[c];
		int64_t *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));

		if (!in || !out)
			fail("out of memory");
		for (i = 0; i < n; i++)
			in[i] = contrib(rank, i);
		memset(out, 0, n * sizeof(*out));
		mpi_check(MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
			  "MPI_Allreduce");
		for (i = 0; i < n; i++) {
			int64_t want = 0;

			for (r = 0; r < nranks; r++)
				want += contrib(r, i);
			if (out[i] != want)
				fail("allreduce of %zu int64: element %zu is %" PRId64 ", expected %" PRId64,
				     n, i, out[i], want);
		}
		free(in);
		free(out);
	}
	if (rank == 0)
		printf("allreduce: MPI_SUM of 1 and 131072 int64 over %d ranks, every element checked\n",
		       nranks);
}

/*
 * The window holds two areas of RMA_MAX bytes: the first takes the previous
 * rank's puts, the second holds this rank's own pattern for the next rank
 * to get.
 */
static uint64_t part_rma(uint8_t *buf)
{
	static const size_t sizes[] = { 8, 65536, RMA_MAX };
	int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
	uint8_t *win_mem, *src = buf, *dst = buf + RMA_MAX;
	uint64_t moved = 0;
	size_t k;
	MPI_Win win;

	mpi_check(MPI_Alloc_mem(2 * RMA_MAX, MPI_INFO_NULL, &win_mem), "MPI_Alloc_mem");
	mpi_check(MPI_Win_create(win_mem, 2 * RMA_MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
		  "MPI_Win_create");
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = sizes[k];

		memset(win_mem, 0, RMA_MAX);
		fill(win_mem + RMA_MAX, size, seed_of(3, rank, rank, size, 0));
		fill(src, size, seed_of(2, rank, to, size, 0));
		memset(dst, 0, size);
		mpi_check(MPI_Win_fence(0, win), "MPI_Win_fence");
		mpi_check(MPI_Put(src, (int)size, MPI_BYTE, to, 0, (int)size, MPI_BYTE, win),
			  "MPI_Put");
		mpi_check(MPI_Get(dst, (int)size, MPI_BYTE, from, RMA_MAX, (int)size, MPI_BYTE,
				  win), "MPI_Get");
		mpi_check(MPI_Win_fence(0, win), "MPI_Win_fence");
		expect(win_mem, size, seed_of(2, from, rank, size, 0), "MPI_Put", size, from);
		expect(dst, size, seed_of(3, from, from, size, 0), "MPI_Get", size, from);
		if (to != rank)
			moved += 2 * size;
	}
	mpi_check(MPI_Win_free(&win), "MPI_Win_free");
	mpi_check(MPI_Free_mem(win_mem), "MPI_Free_mem");
	if (rank == 0)
		printf("rma: MPI_Put and MPI_Get of 8, 65536 and %u bytes in fence epochs, every byte checked\n",
		       RMA_MAX);
	return moved;
}

int main(int argc, char **argv)
{
	size_t max = DEFAULT_MAX, bufsize;
	uint64_t mine = 0, total = 0;
	uint8_t *sbuf, *rbuf;
	char name[MPI_MAX_PROCESSOR_NAME];
	int opt, len = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "m:x:")) != -1) {
		switch (opt) {
		case 'm':
			max = strtoul(optarg, NULL, 0);
			if (max < 8 || max > (1u << 30))
				fail("-m %s: from 8 bytes to 1 GiB", optarg);
			break;
		case 'x':
			spoil_size = strtoul(optarg, NULL, 0);
			break;
		default:
			fail("usage: sroce_mpi_test [-m MAX_BYTES] [-x SIZE]");
		}
	}
	MPI_Get_processor_name(name, &len);
	printf("rank %d of %d on %s, pid %d\n", rank, nranks, name, (int)getpid());
	fflush(stdout);
	mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

	bufsize = (max > 2 * RMA_MAX ? max : 2 * RMA_MAX) + 64;
	sbuf = malloc(bufsize);
	rbuf = malloc(bufsize);
	if (!sbuf || !rbuf)
		fail("out of memory");
	mine += part_p2p(max, sbuf, rbuf);
	part_allreduce();
	mine += part_rma(sbuf);
	mpi_check(MPI_Reduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD),
		  "MPI_Reduce");
	if (rank == 0) {
		printf("bytes between ranks: %" PRIu64 "\n", total);
		printf("sroce_mpi_test: pass\n");
	}
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
