// SPDX-License-Identifier: GPL-2.0
/*
 * jsonon.c - preloaded into tc (LD_PRELOAD) by the parse checks: tc's
 * monitor has no JSON mode, so this turns iproute2's JSON writer on
 * before tc's main() and closes the document after it.
 */
void new_json_obj(int json);
void delete_json_obj(void);
__attribute__((constructor)) static void on(void) { new_json_obj(1); }
__attribute__((destructor)) static void off(void) { delete_json_obj(); }
