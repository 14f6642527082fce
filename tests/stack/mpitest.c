/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-mpitest: an MPI program of the tests' own (tests/stack/mpi.sh), built
 * with Debian's mpicc: a ping-pong between ranks 0 and 1 of every size from
 * 1 byte to 4 MiB (each byte checked, both ways), then an allreduce of
 * every rank's number and an allreduce of a 1 MiB vector. Prints "ok - ..."
 * or "not ok - ..." lines (rank 0); the exit status is the number of
 * failed checks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX (4 << 20)

static unsigned char pat(size_t i, int round)
{
	return (unsigned char)(i * 7 + (size_t)round * 13 + 1);
}

int main(int argc, char **argv)
{
	unsigned char *buf = malloc(MAX);
	int rank, n, bad = 0, fails = 0, rounds = 0;
	long mine, sum = 0;
	double *v, *w;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (int len = 1; len <= MAX && n >= 2; len *= 4, rounds++) {
		if (rank == 0) {
			for (int i = 0; i < len; i++)
				buf[i] = pat((size_t)i, rounds);
			MPI_Send(buf, len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			memset(buf, 0, (size_t)len);
			MPI_Recv(buf, len, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int i = 0; i < len; i++)
				if (buf[i] != (unsigned char)(pat((size_t)i, rounds) + 1)) {
					bad++;
					break;
				}
		} else if (rank == 1) {
			MPI_Recv(buf, len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int i = 0; i < len; i++)
				if (buf[i] != pat((size_t)i, rounds)) {
					bad++;
					break;
				}
			for (int i = 0; i < len; i++)
				buf[i]++;
			MPI_Send(buf, len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
		}
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	mine = rank + 1;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	v = malloc((1 << 17) * sizeof(*v));
	w = malloc((1 << 17) * sizeof(*w));
	for (int i = 0; i < 1 << 17; i++)
		v[i] = i * (rank + 1);
	MPI_Allreduce(v, w, 1 << 17, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		int vbad = 0;

		for (int i = 0; i < 1 << 17 && !vbad; i++)
			vbad = w[i] != (double)i * n * (n + 1) / 2;
		printf("%s - ping-pong of %d sizes, 1 B to %d MiB, every byte checked both ways "
		       "(%d bad)\n", bad ? "not ok" : "ok", rounds, MAX >> 20, bad);
		printf("%s - allreduce of the ranks' numbers: %ld (want %d)\n",
		       sum == (long)n * (n + 1) / 2 ? "ok" : "not ok", sum, n * (n + 1) / 2);
		printf("%s - allreduce of a 1 MiB vector\n", vbad ? "not ok" : "ok");
		fails = (bad != 0) + (sum != (long)n * (n + 1) / 2) + vbad;
	}
	MPI_Bcast(&fails, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	free(buf);
	free(v);
	free(w);
	return fails;
}
