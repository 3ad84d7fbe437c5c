// SPDX-License-Identifier: GPL-2.0
/*
 * The guest side of the instruction counter (insn_plugin.c): executes the
 * marker sequence once, so the plugin prints the instruction total at this
 * point. Static, no libc work beyond exit.
 */
int main(void)
{
	__asm__ volatile("xchg %%bx, %%bx\n\txchg %%cx, %%cx" ::: "memory");
	return 0;
}
