// SPDX-License-Identifier: GPL-2.0
/*
 * The guest side of the instruction counter (insn_plugin.c): executes the
 * marker sequence once, so the plugin prints the instruction total at this
 * point.
 *
 *   marker                       mark now
 *   marker IFACE COUNT TIMEOUT_MS
 *                                first wait until IFACE has sent COUNT
 *                                packets (its tx_packets counter, polled
 *                                every 2 ms), then mark: the end of a
 *                                shaped run is when the qdisc has drained.
 *                                Exits 1 (after marking) on timeout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long tx_packets(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct timespec tick = { .tv_nsec = 2 * 1000 * 1000 };
	int rc = 0;

	if (argc == 4) {
		unsigned long long want = strtoull(argv[2], NULL, 10);
		long polls = strtol(argv[3], NULL, 10) / 2;
		char path[256];

		snprintf(path, sizeof(path),
			 "/sys/class/net/%s/statistics/tx_packets", argv[1]);
		while (tx_packets(path) < want) {
			if (polls-- <= 0) {
				rc = 1;
				break;
			}
			nanosleep(&tick, NULL);
		}
	}
	__asm__ volatile("xchg %%bx, %%bx\n\txchg %%cx, %%cx" ::: "memory");
	return rc;
}
