// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl: admit, change and release sch_arbtable classes, draw the
 * two 64-slot arbitration tables and watch per-class rates, on top of
 * libarbtable. This file reads the global options and hands the command
 * to its object's file (the command table below), as ip(8) does.
 *
 * Exit codes: 0 ok, 1 other failure, 2 no such device, 3 not an arbtable
 * qdisc, 4 rejected by the kernel (its reason is printed), 64 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arbtable/arbtable.h>

#include "arbt_print.h"
#include "arbtablectl.h"

const char *const arbt_prog = "arbtablectl";
int ctl_json;

static void usage_text(FILE *f)
{
	fprintf(f,
		"Usage: %s [--json] [-n NETNS] COMMAND ...\n"
		"  admit   DEV CLASSID rate RATE [latency TIME | distance D] [ceil RATE]\n"
		"  admit   DEV CLASSID share N [distance D] [ceil RATE]\n"
		"  admit   DEV CLASSID strict ceil RATE\n"
		"  change  DEV CLASSID [rate RATE] [latency TIME | distance D] [share N]\n"
		"                      [ceil RATE [cburst BYTES]] [strict | nostrict]\n"
		"  change  DEV QDISC-OPTION...   (rate, burst, highlimit, accounting, mtu,\n"
		"                                maxweight, default, [no]prioclassid,\n"
		"                                [no]classifyforeign: as for create)\n"
		"  release DEV CLASSID\n"
		"  show    DEV\n"
		"  watch   DEV [-i SECONDS] [-n COUNT]\n"
		"  create  DEV [handle MAJOR:] [auto | manual] [rate RATE] [highlimit N]\n"
		"              [accounting deficit | iba] [mtu BYTES] [maxweight W]\n"
		"              [burst BYTES] [default MINOR]\n"
		"              [prioclassid | noprioclassid]\n"
		"              [classifyforeign | noclassifyforeign]\n"
		"              [lockless | locked]   (fixed once created)\n"
		"  table   DEV { high | low } { none | MINOR:WEIGHT[@SLOT]|-[,...] }\n"
		"  priomap DEV MINOR0 ... MINOR15   (hex minors by skb->priority, 0 = none)\n"
		"  delete  DEV\n"
		"  capacity DEV                  (free slots per distance, free guaranteed rate)\n"
		"  request DEV rate RATE [latency TIME | distance D]   (what it costs, and\n"
		"  request DEV share N [distance D]                      whether it fits now)\n"
		"  request rate RATE [latency TIME | distance D] [QDISC-PARAMETER...]\n"
		"  request share N [distance D] [QDISC-PARAMETER...]   (no device: the cost\n"
		"          for link RATE (10gbit), mtu BYTES (1514), maxweight W (255),\n"
		"          highlimit N (16), strictceil RATE, strictcburst BYTES)\n"
		"CLASSID is MAJOR:MINOR in hex (1:10) or a bare minor; RATE in tc units\n"
		"(10mbit, 500kbit, 1gbit; a bare number is bit/s); TIME 50us, 2ms, 1s\n"
		"(a bare number is us).  Exit codes: 2 no such device, 3 not an\n"
		"arbtable qdisc, 4 rejected by the kernel, 64 usage.\n",
		arbt_prog);
}

void ctl_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", arbt_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "(\"%s help\" lists the commands and options)\n", arbt_prog);
	exit(EX_USAGE);
}

int ctl_failed(struct arbtable *h, int err, const char *what)
{
	const char *msg = arbtable_errmsg(h);

	if (arbtable_err_from_kernel(h)) {
		fprintf(stderr, "%s: %s: rejected by the kernel: %s (%s)\n",
			arbt_prog, what, msg, strerror(-err));
		return EX_KERNEL;
	}
	if (*msg)
		fprintf(stderr, "%s: %s\n", arbt_prog, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", arbt_prog, what, strerror(-err));
	if (err == -ENODEV)
		return EX_NODEV;
	if (err == -EMEDIUMTYPE)
		return EX_NOTARB;
	return EX_FAIL;
}

static const struct ctl_cmd {
	const char *name;
	/* NULL: help */
	int (*run)(struct arbtable *h, int argc, char **argv);
	/* 1 when these arguments need no device, so no netlink socket */
	int (*devless)(int argc, char **argv);
} cmds[] = {
	{ "admit",	ctl_admit, NULL },
	{ "change",	ctl_change, NULL },
	{ "release",	ctl_release, NULL },
	{ "show",	ctl_show, NULL },
	{ "watch",	ctl_watch, NULL },
	{ "create",	ctl_create, NULL },
	{ "delete",	ctl_delete, NULL },
	{ "table",	ctl_table, NULL },
	{ "priomap",	ctl_priomap, NULL },
	{ "capacity",	ctl_capacity, NULL },
	{ "request",	ctl_request, ctl_request_devless },
	{ "help",	NULL, NULL },
};

static const struct ctl_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

/* -n NAME: the namespace `ip netns add NAME` created (as ip -n does) */
static int enter_netns(const char *name)
{
	char path[256];
	int fd;

	if (!*name || strchr(name, '/')) {
		fprintf(stderr, "%s: bad network namespace name \"%s\"\n", arbt_prog,
			name);
		return -1;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: network namespace %s: %s\n", arbt_prog, name,
			strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "%s: cannot enter network namespace %s: %s\n",
			arbt_prog, name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	struct arbtable *h;
	int rc;

	argv++;
	argc--;
	while (argc > 0 && argv[0][0] == '-') {
		if (!strcmp(argv[0], "--json") || !strcmp(argv[0], "-j")) {
			ctl_json = 1;
		} else if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
			usage_text(stdout);
			return EX_OK;
		} else if (!strcmp(argv[0], "--version") || !strcmp(argv[0], "-V")) {
			printf("arbtablectl (libarbtable %s)\n", arbtable_version());
			return EX_OK;
		} else if (!strcmp(argv[0], "-n") || !strcmp(argv[0], "--netns")) {
			if (argc < 2)
				ctl_usage("%s needs a network namespace name", argv[0]);
			if (enter_netns(argv[1]))
				return EX_FAIL;
			argv++;
			argc--;
		} else {
			ctl_usage("unknown option \"%s\"", argv[0]);
		}
		argv++;
		argc--;
	}
	if (argc < 1)
		ctl_usage("no command given");
	cmd = find_cmd(argv[0]);
	if (!cmd)
		ctl_usage("unknown command \"%s\"", argv[0]);
	argv++;
	argc--;
	if (!cmd->run) {
		usage_text(stdout);
		return EX_OK;
	}
	if (cmd->devless && cmd->devless(argc, argv))
		return cmd->run(NULL, argc, argv);
	h = arbtable_open();
	if (!h) {
		fprintf(stderr, "%s: cannot open rtnetlink: %s\n", arbt_prog,
			strerror(errno));
		return EX_FAIL;
	}
	rc = cmd->run(h, argc, argv);
	arbtable_close(h);
	return rc;
}
