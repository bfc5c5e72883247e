/* SPDX-License-Identifier: GPL-2.0 */
/* bpfmap.c: the bpf maps the tree holds by fd ("bpfmap" records, one per map). */
#ifndef IMGCR_BPFMAP_H
#define IMGCR_BPFMAP_H

#include "tree.h"

struct tree_bpfmap {
	unsigned int id;		/* its map id at the dump (file records name it: map=ID) */
	unsigned int type, key_size, value_size, max_entries, flags;
	unsigned long long extra;	/* map_extra (0 but for types imgcr refuses) */
	char name[17];			/* BPF_OBJ_NAME_LEN + 1 */
	int frozen;			/* BPF_MAP_FREEZE'd: frozen again after its elements */
	int ncpus;			/* per-CPU maps: the possible CPUs of each value */
	long long count;		/* elements in DIR/bpfmap-ID.data (key, value, key, value...) */
};

struct tree_bpfmap *tree_bpfmap_find(const struct tree *t, unsigned int id);

#endif
