// SPDX-License-Identifier: GPL-2.0
/*
 * libarbtable-example: admit two classes on an auto-mode arbtable qdisc,
 * print where the allocator put them, then release them.
 *
 *   cc -o example libarbtable-example.c $(pkg-config --cflags --libs libarbtable)
 *   ./example DEV [--create RATE_MBIT] [--keep]
 *
 * --create puts a root auto-mode qdisc 1: with that rate on DEV first
 * (and deletes it at the end unless --keep); without it DEV must already
 * have an auto-mode arbtable qdisc. Needs CAP_NET_ADMIN.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arbtable/arbtable.h>

static int report(struct arbtable *h, const char *what, int err)
{
	/* every failure carries the kernel's own explanation */
	fprintf(stderr, "%s failed: %s (%s)%s\n", what, arbtable_errmsg(h),
		strerror(-err),
		arbtable_err_from_kernel(h) ? " [kernel]" : "");
	return err;
}

static void print_class(const struct arbtable_state *st, uint32_t minor)
{
	struct arbtable_class_info c;
	int i = arbtable_state_find_class(st, minor);
	int t, s;

	/* the library copies into the struct this program was built with */
	if (i < 0 || arbtable_state_class(st, i, &c, sizeof(c)) < 0) {
		printf("class %x not found\n", minor);
		return;
	}
	printf("class %x:%x distance %u reserved %llu B/s bound %llu ns slots",
	       ARBTABLE_MAJOR(c.classid), ARBTABLE_MINOR(c.classid),
	       c.distance, (unsigned long long)c.reserved_rate,
	       (unsigned long long)c.guaranteed_bound_ns);
	for (t = 0; t < ARBTABLE_NTABLES; t++)
		for (s = 0; s < ARBTABLE_SLOTS; s++)
			if (c.slots[t] & (1ull << s))
				printf(" %s%d", t == ARBTABLE_HIGH ? "H" : "L", s);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct arbtable_class_opts video = {
		/* 1 Mbit/s guaranteed, head-of-line wait at most 20 ms */
		.set = ARBTABLE_C_RATE | ARBTABLE_C_LATENCY,
		.rate = 1000000 / 8,
		.latency_ns = 20 * 1000 * 1000,
	};
	struct arbtable_class_opts bulk = {
		/* best effort, LOW table weight 20 */
		.set = ARBTABLE_C_SHARE,
		.share = 20,
	};
	struct arbtable_qdisc_info q;
	struct arbtable_state *st;
	const char *dev = NULL;
	int create_mbit = 0, keep = 0, err, i, rc = 1;
	struct arbtable *h;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			printf("usage: %s DEV [--create RATE_MBIT] [--keep]\n",
			       argv[0]);
			return 0;
		} else if (!strcmp(argv[i], "--create") && i + 1 < argc) {
			create_mbit = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--keep")) {
			keep = 1;
		} else if (!dev) {
			dev = argv[i];
		} else {
			fprintf(stderr, "unexpected argument %s\n", argv[i]);
			return 64;
		}
	}
	if (!dev) {
		fprintf(stderr, "usage: %s DEV [--create RATE_MBIT] [--keep]\n",
			argv[0]);
		return 64;
	}

	h = arbtable_open();
	if (!h) {
		perror("arbtable_open");
		return 1;
	}
	st = arbtable_state_new();
	if (!st)
		goto out;

	if (create_mbit > 0) {
		struct arbtable_qdisc_opts q = {
			.set = ARBTABLE_Q_MODE | ARBTABLE_Q_RATE,
			.mode = ARBTABLE_MODE_AUTO,
			.rate = (uint64_t)create_mbit * 1000000 / 8,
		};

		err = arbtable_qdisc_create(h, dev, ARBTABLE_CLASSID(1, 0), &q,
					    sizeof(q));
		if (err) {
			report(h, "create qdisc", err);
			goto out;
		}
		printf("created arbtable 1: on %s, auto, %d Mbit/s\n", dev,
		       create_mbit);
	}

	/* a major of 0 means: the handle of the device's arbtable qdisc */
	/* options go with their size: a newer library reads what this
	 * program set and takes the fields it did not know of as unset
	 */
	err = arbtable_admit(h, dev, ARBTABLE_CLASSID(0, 0x10), &video,
			     sizeof(video));
	if (err) {
		report(h, "admit 10 (1mbit, 20ms)", err);
		goto cleanup;
	}
	err = arbtable_admit(h, dev, ARBTABLE_CLASSID(0, 0x20), &bulk,
			     sizeof(bulk));
	if (err) {
		report(h, "admit 20 (share 20)", err);
		goto release10;
	}

	/* a reservation above the capacity: the kernel says why not */
	video.rate = 1000ull * 1000 * 1000 * 1000;
	err = arbtable_admit(h, dev, ARBTABLE_CLASSID(0, 0x30), &video,
			     sizeof(video));
	if (err)
		printf("admit 30 (8 Tbit/s) refused as expected: %s\n",
		       arbtable_errmsg(h));
	else
		arbtable_release(h, dev, ARBTABLE_CLASSID(0, 0x30));

	err = arbtable_read(h, dev, st);
	if (err) {
		report(h, "read", err);
		goto release20;
	}
	err = arbtable_state_qdisc(st, &q, sizeof(q));
	if (err < 0) {
		fprintf(stderr, "state_qdisc: %s\n", strerror(-err));
		goto release20;
	}
	printf("qdisc %x: on %s: %u classes, high %u/64, low %u/64 slots\n",
	       ARBTABLE_MAJOR(q.handle), q.ifname, q.nclasses,
	       q.used[ARBTABLE_HIGH], q.used[ARBTABLE_LOW]);
	print_class(st, 0x10);
	print_class(st, 0x20);
	rc = 0;

release20:
	err = arbtable_release(h, dev, ARBTABLE_CLASSID(0, 0x20));
	if (err)
		rc = report(h, "release 20", err) ? 1 : rc;
release10:
	err = arbtable_release(h, dev, ARBTABLE_CLASSID(0, 0x10));
	if (err)
		rc = report(h, "release 10", err) ? 1 : rc;
	else
		printf("released 10 and 20\n");
cleanup:
	if (create_mbit > 0 && !keep) {
		err = arbtable_qdisc_delete(h, dev);
		if (err)
			rc = report(h, "delete qdisc", err) ? 1 : rc;
	}
out:
	arbtable_state_free(st);
	arbtable_close(h);
	return rc;
}
