/* SPDX-License-Identifier: GPL-2.0 */
/* One shape for every message: "imgcr: what failed[: why]". */
#ifndef IMGCR_LOG_H
#define IMGCR_LOG_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define pr_err(fmt, ...) fprintf(stderr, "imgcr: " fmt "\n", ##__VA_ARGS__)
#define pr_perror(fmt, ...) \
	fprintf(stderr, "imgcr: " fmt ": %s\n", ##__VA_ARGS__, strerror(errno))

#endif
