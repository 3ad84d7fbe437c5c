// SPDX-License-Identifier: GPL-2.0
/*
 * pause - the test cluster's sandbox process: it holds the pod's
 * namespaces, reaps the zombies re-parented to it (it is PID 1 of the
 * pod when the pod shares a PID namespace) and exits 0 on SIGINT or
 * SIGTERM.  Built static into the pause image that containerd's config
 * names as its sandbox image (scripts/k8s-build.sh).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig)
{
	(void)sig;
	_exit(0);
}

static void reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(int argc, char **argv)
{
	struct sigaction q = { .sa_handler = quit };
	struct sigaction r = { .sa_handler = reap, .sa_flags = SA_NOCLDSTOP };

	if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'v') {
		puts("pause (sch_arbtable test cluster)");
		return 0;
	}
	if (sigaction(SIGINT, &q, NULL) || sigaction(SIGTERM, &q, NULL) ||
	    sigaction(SIGCHLD, &r, NULL)) {
		perror("pause: sigaction");
		return 1;
	}
	for (;;)
		pause();
}
