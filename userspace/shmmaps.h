/* SPDX-License-Identifier: GPL-2.0 */
/* Shared memory objects of the tree, mapped by no one else (shmmaps.c). */
#ifndef IMGCR_SHMMAPS_H
#define IMGCR_SHMMAPS_H
#include <sys/types.h>

struct shm_map;
struct tree;

struct shm_maps {
	struct shm_map *v;
	int n, cap;
	int dump_fd;		/* an open /proc/PID/dump of the tree, for the ioctl; -1 */
};

void shm_maps_init(struct shm_maps *m);
/*
 * After task @pid's image @path was written from its open /proc/PID/dump
 * @dump_fd (kept by @m until shm_maps_free()): add the shared memory
 * objects it maps or runs (IMGCR_FILE_SHMEM), its mappings of each and
 * the kernel's count of everyone's.  0, or -1 (printed).
 */
struct image;
int shm_maps_add(struct shm_maps *m, pid_t pid, int dump_fd, const struct image *img);
/*
 * Every image added: refuse an object mapped outside the tree, and a memfd
 * of @t held as an fd and mapped by no task of the tree that a process
 * outside maps.  0 or -1 (printed).
 */
int shm_maps_check(struct shm_maps *m, const struct tree *t);
void shm_maps_free(struct shm_maps *m);

#endif
