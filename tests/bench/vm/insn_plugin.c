// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU TCG plugin for `make bench-vm`: counts executed guest instructions
 * with an inline add per translation block (cheap, deterministic for a
 * given guest path) and prints the running total whenever the guest runs
 * the marker sequence of tests/bench/vm/marker.c:
 *
 *   xchg %bx,%bx ; xchg %cx,%cx      (66 87 db 66 87 c9)
 *
 * Both no-ops must sit back to back in one block, which ordinary kernel or
 * user code does not contain. Output ("MARK <total>") goes through
 * qemu_plugin_outs, i.e. to the file given with `-d plugin -D FILE`.
 * The inline counter is not atomic: one vCPU, or several run by one host
 * thread (single-threaded TCG, scripts/vm.sh's default; the mq mode's 4).
 *
 * With the argument profile=on it also attributes instructions to
 * translation blocks (a callback per block execution: slow, for finding
 * where a qdisc spends its instructions): at every second marker it prints
 * "TB <vaddr> <insns>" for the blocks that ran since the first, heaviest
 * first, which the host maps to symbols with the guest's /proc/kallsyms.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t insns;
static bool profile;
static unsigned int nmarks;

/* Profile: one record per translated block start address. */
struct tbrec {
	uint64_t vaddr;
	uint64_t n;		/* instructions in the block */
	uint64_t count;		/* instructions executed since the window opened */
};
#define NREC	(1 << 20)
static struct tbrec *rec;
static size_t nrec;
/* User-space blocks land at new addresses in every process (ASLR): one
 * record for all of them, or they fill the table and later kernel blocks
 * (modules loaded for the bench, code retranslated after a flush) would
 * go uncounted.
 */
static struct tbrec user_rec;
static uint64_t untracked;	/* blocks translated with the table full */
#define KERNEL_SPACE	0xffff800000000000ULL

/* Open addressing on the block address; records never move. */
static struct tbrec **slot;

static struct tbrec *tbrec_get(uint64_t vaddr, uint64_t n)
{
	size_t h = (size_t)((vaddr ^ n) * 0x9e3779b97f4a7c15ULL >> 40) & (NREC - 1);

	while (slot[h]) {
		if (slot[h]->vaddr == vaddr && slot[h]->n == n)
			return slot[h];
		h = (h + 1) & (NREC - 1);
	}
	if (nrec >= NREC / 2)
		return NULL;
	rec[nrec] = (struct tbrec){ .vaddr = vaddr, .n = n };
	slot[h] = &rec[nrec];
	return &rec[nrec++];
}

static void on_tb_exec(unsigned int vcpu, void *udata)
{
	struct tbrec *r = udata;

	(void)vcpu;
	r->count += r->n;
}

static void on_user_tb_exec(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	user_rec.count += (uintptr_t)udata;
}

static int by_count(const void *a, const void *b)
{
	const struct tbrec *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void profile_reset(void)
{
	for (size_t i = 0; i < nrec; i++)
		rec[i].count = 0;
	user_rec.count = 0;
}

static void profile_dump(void)
{
	struct tbrec *copy = malloc(nrec * sizeof(*copy));
	char line[64];
	size_t i;

	if (!copy)
		return;
	memcpy(copy, rec, nrec * sizeof(*copy));
	qsort(copy, nrec, sizeof(*copy), by_count);
	for (i = 0; i < nrec && copy[i].count; i++) {
		snprintf(line, sizeof(line), "TB %" PRIx64 " %" PRIu64 "\n",
			 copy[i].vaddr, copy[i].count);
		qemu_plugin_outs(line);
	}
	free(copy);
	snprintf(line, sizeof(line), "TB 0 %" PRIu64 "\n", user_rec.count);
	qemu_plugin_outs(line);
	if (untracked) {
		snprintf(line, sizeof(line), "TBFULL %" PRIu64 "\n", untracked);
		qemu_plugin_outs(line);
	}
	profile_reset();
}

static const uint8_t mark1[] = { 0x66, 0x87, 0xdb };	/* xchg %bx,%bx */
static const uint8_t mark2[] = { 0x66, 0x87, 0xc9 };	/* xchg %cx,%cx */

static bool insn_is(struct qemu_plugin_insn *insn, const uint8_t *b, size_t n)
{
	return qemu_plugin_insn_size(insn) == n &&
	       !memcmp(qemu_plugin_insn_data(insn), b, n);
}

static void on_mark(unsigned int vcpu, void *udata)
{
	char line[64];

	(void)vcpu;
	(void)udata;
	snprintf(line, sizeof(line), "MARK %" PRIu64 "\n", insns);
	qemu_plugin_outs(line);
	if (profile) {
		if (nmarks % 2)
			profile_dump();
		else
			profile_reset();
	}
	nmarks++;
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &insns, n);
	if (profile && qemu_plugin_tb_vaddr(tb) < KERNEL_SPACE) {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_user_tb_exec,
						     QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)n);
	} else if (profile) {
		struct tbrec *r = tbrec_get(qemu_plugin_tb_vaddr(tb), n);

		if (r)
			qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec,
							     QEMU_PLUGIN_CB_NO_REGS, r);
		else
			untracked++;
	}
	for (i = 0; i + 1 < n; i++) {
		struct qemu_plugin_insn *a = qemu_plugin_tb_get_insn(tb, i);

		if (insn_is(a, mark1, sizeof(mark1)) &&
		    insn_is(qemu_plugin_tb_get_insn(tb, i + 1), mark2, sizeof(mark2)))
			qemu_plugin_register_vcpu_insn_exec_cb(a, on_mark,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], "profile=on"))
			profile = true;
	if (profile) {
		rec = calloc(NREC / 2, sizeof(*rec));
		slot = calloc(NREC, sizeof(*slot));
		if (!rec || !slot)
			return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
	return 0;
}
