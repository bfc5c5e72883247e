/* SPDX-License-Identifier: GPL-2.0 */
/* Shared memory objects the tree maps, mapped by no one else (shmmaps.c). */
#ifndef IMGCR_SHMMAPS_H
#define IMGCR_SHMMAPS_H
#include <sys/types.h>

struct shm_map;

struct shm_maps {
	struct shm_map *v;
	int n, cap;
};

/*
 * After task @pid's image @path was written from its open /proc/PID/dump
 * @dump_fd: add the shared memory objects it maps (IMGCR_FILE_SHMEM), its
 * mappings of each and the kernel's count of everyone's.  0, or -1
 * (printed).
 */
int shm_maps_add(struct shm_maps *m, pid_t pid, int dump_fd, const char *path);
/* Every image added: refuse an object mapped outside the tree.  0 or -1. */
int shm_maps_check(const struct shm_maps *m);
void shm_maps_free(struct shm_maps *m);

#endif
