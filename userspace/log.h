/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One shape for every message: "imgcr: what failed[: why]", at a level
 * (log.c).  Like CRIU's -v: 0 errors only, 1 also warnings, 2 also notes
 * (the default), 3 and more also debug lines.
 */
#ifndef IMGCR_LOG_H
#define IMGCR_LOG_H

#include <stddef.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum {
	LOG_MSG = -1,		/* asked for (--stats): always */
	LOG_ERROR = 0,
	LOG_WARN = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,
};

__attribute__((format(printf, 2, 3)))
void log_print(int level, const char *fmt, ...);
/* -v N / --verbosity N */
void log_set_level(int level);
int log_get_level(void);
/* -o FILE / --log-file FILE: 0, or -1 (printed) */
int log_open(const char *path);
/* the log file's fd, -1 if none (restore moves it out of the tree's way) */
int log_fd(void);
void log_set_fd(int fd);
/* messages go to a terminal, not to a file: progress lines may be drawn */
int log_to_tty(void);
/* the options every command takes: returns 1 if @opt was one, -1 if bad */
int log_option(int opt, const char *arg);
/* the first error message printed, "" if none (imgcr-criu's cr_errmsg) */
const char *log_first_error(void);
/* CLOCK_MONOTONIC in ms, for --stats */
long long log_now_ms(void);

/*
 * The progress line of a dump or restore (a terminal only, see log.c):
 * begun with the number of tasks and the bytes expected (0: unknown),
 * updated with the bytes and tasks done, and while one call writes the
 * image @fd, redrawn from its size; progress_watch(-1) ends that.
 */
void progress_begin(const char *what, int ntasks, unsigned long long total);
void progress_update(unsigned long long done, int tasks);
void progress_watch(int fd);
void progress_end(void);

#define LOG_OPTS "o:v::"
#define LOG_LONG_OPTS							\
	{ "log-file", required_argument, NULL, 'o' },			\
	{ "verbosity", required_argument, NULL, 'v' }

/* malloc, realloc, strdup that print "out of memory" and exit(1) when they fail */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#define pr_msg(fmt, ...) log_print(LOG_MSG, "imgcr: " fmt, ##__VA_ARGS__)
#define pr_err(fmt, ...) log_print(LOG_ERROR, "imgcr: " fmt, ##__VA_ARGS__)
#define pr_perror(fmt, ...) \
	log_print(LOG_ERROR, "imgcr: " fmt ": %s", ##__VA_ARGS__, strerror(errno))
#define pr_warn(fmt, ...) log_print(LOG_WARN, "imgcr: warning: " fmt, ##__VA_ARGS__)
#define pr_pwarn(fmt, ...) \
	log_print(LOG_WARN, "imgcr: warning: " fmt ": %s", ##__VA_ARGS__, strerror(errno))
#define pr_info(fmt, ...) log_print(LOG_INFO, "imgcr: note: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log_print(LOG_DEBUG, "imgcr: debug: " fmt, ##__VA_ARGS__)

#endif
