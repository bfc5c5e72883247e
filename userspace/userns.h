/* SPDX-License-Identifier: GPL-2.0 */
/* The user namespace kind (userns.c; ns.h has its ops, ns_user_ops). */
#ifndef IMGCR_USERNS_H
#define IMGCR_USERNS_H

struct tree;

/* dump: every task's ids and loginuid and every pipe's and socket's owner are mapped in the tree's user namespace; 0 or -1 (printed) */
int userns_dump_check(const struct tree *t);
/* restore: the tree's user namespace can be restored here (root, uid and gid 0 mapped); 0 or -1 (printed) */
int userns_restore_check(const struct tree *t);
/* the tree has a user namespace of its own whose maps move ids (0 100000 65536) */
int userns_moves(const struct tree *t);
/*
 * With moving maps (not a mount namespace of the tree's own), the files
 * are opened outside the new namespaces and the sockets made by host root
 * (in the tree's network namespace if it has one: restore.c sk_late_open):
 * no netlink or packet socket, and with a network namespace no
 * /proc/.../net file (it would be imgcr's).  0, or -1 after naming the
 * pid, the fd and the file.
 */
int userns_files_check(const struct tree *t);
/*
 * @id (imgcr's view; @w 0: a uid, 1: a gid) as the tree's own user
 * namespace sees it, into *@inner (the id itself if the tree has none);
 * 0, or -1 if the namespace does not map it (*@inner 65534).
 */
int userns_inner(const struct tree *t, int w, unsigned int id, unsigned int *inner);
/* imgcr show (text, JSON members) and the unit tests' model */
void userns_show_text(const struct tree *t);
void userns_show_json(const struct tree *t);
void userns_model(const struct tree *t);

#endif
