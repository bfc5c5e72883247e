/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records of the tree file (DIR/tree, format in tree.c): one line
 * "NAME key=value key=value ...", read into a struct rec and handed to the
 * owner of NAME through the record table (tree.c).  Each owner (a kind of
 * fd, attrs.c, locks.c...) reads its fields by key with the helpers below
 * and writes them with fprintf(" key=%d"), and shows them (imgcr show: the
 * record's show hook, or a fd kind's rec_show/rec_json) -- adding a field
 * to a record is a line in its writer, a line in its reader, a line in its
 * show if it is shown, all in the owner's file, and a line in the format
 * document (imgcr-image(5)).
 *
 * Values use the syntax of version 2's positional fields: numbers decimal
 * (or 0x hex, 0 octal, as strtoll base 0 reads them), text escaped
 * (tree_escape: %XX for bytes <= 0x20, >= 0x7f and '%', "%" for "").
 */
#ifndef IMGCR_RECORD_H
#define IMGCR_RECORD_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REC_MAXF	512	/* most fields of one record */

struct tree;

struct rec {
	const char *name;
	int n;				/* fields */
	char *key[REC_MAXF];
	char *val[REC_MAXF];
	unsigned char used[REC_MAXF];	/* read by the owner: the rest are unknown keys */
};

/*
 * The value of @key (marked used), or NULL if absent.  Every getter below
 * returns 0, or -1 if the key is absent or its value malformed or out of
 * range (then the owner refuses the record).
 */
const char *rec_val(struct rec *r, const char *key);
/* 1 if @key is present (not marked used). */
int rec_has(const struct rec *r, const char *key);
/* A number (tree_num: decimal, 0x hex, 0 octal) in [@min, @max], stored in
 * the integer @dst of @size bytes (REC_NUM picks the size). */
int rec_num_to(struct rec *r, const char *key, long long min, long long max, void *dst,
	       size_t size);
#define REC_NUM(r, key, min, max, dst) rec_num_to(r, key, min, max, &(dst), sizeof(dst))
/* An unsigned 64-bit number (tree_unum). */
int rec_unum(struct rec *r, const char *key, unsigned long long *out);
/* "MAJ:MIN" (a device number) */
int rec_dev(struct rec *r, const char *key, unsigned int *maj, unsigned int *min);
/* A text value, unescaped (malloc'ed; exits if out of memory). */
int rec_str(struct rec *r, const char *key, char **out);

/*
 * The owner of one record name.  read: the record @r into @t (the records
 * read so far); NULL, or what is wrong (the reader names the file and the
 * line).  write: every record of this name in @t, NULL if another
 * owner's writer writes them (records that follow a record of another
 * name, e.g. cred after its task).  show: imgcr show of every record of
 * this name in @t, after the tasks: lines of text, or (@json) the member
 * ",\"NAME\":[...]" of the tree's JSON object (show.c calls them in its
 * own order: show_records); NULL: not shown, or shown in the line of its
 * task or file (attrs.c, the fd kinds' rec_show).
 */
struct tree_record {
	const char *name;
	const char *(*read)(struct tree *t, struct rec *r);
	void (*write)(FILE *f, const struct tree *t);
	void (*show)(const struct tree *t, int json);
};

/* The record of @name, or NULL (tree.c: the record table). */
const struct tree_record *tree_record_find(const char *name);

/* Each owner's records (the table is in tree.c). */
extern const struct tree_record attrs_records[], ghost_records[], reg_records[], sk_records[],
	pipe_records[], tty_records[], epoll_records[], inotify_records[], locks_records[],
	ns_records[], userns_records[], ipc_records[], mnt_records[], net_records[], cgroup_records[],
	nl_records[], pkt_records[], fanotify_records[], bpfmap_records[], cgm_records[];

/*
 * tree-v2.c: a version 2 line (modified) into @r, its positional fields
 * named as version 3 names them: NULL, or what is wrong.
 */
const char *tree_v2_split(char *line, struct rec *r);

#endif
