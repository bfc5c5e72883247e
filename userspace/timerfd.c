// SPDX-License-Identifier: GPL-2.0
/*
 * timerfds ("timerfd" records): the clock, the flags of the last
 * timerfd_settime, the expirations not yet read (ticks), the time left
 * until the next one and the period, from /proc/PID/fdinfo ("clockid:",
 * "settime flags:", "ticks:", "it_value:", "it_interval:"), and the file
 * status flags.
 *
 * An expired periodic timer is not re-armed until it is read: its fdinfo
 * shows one tick and no time left, whatever the periods that went by.  So
 * dump first calls timerfd_gettime on a duplicate of the fd (pidfd_getfd,
 * the tree is frozen), which does what a read would do without consuming
 * anything: it adds the missed periods to the ticks and re-arms the timer.
 * (Without pidfd_getfd the phase of such a timer is lost: it is restored
 * to fire one period after the restore.)
 *
 * Restore creates a timerfd on the same clock and arms it with the time
 * left (from now, made absolute for TFD_TIMER_ABSTIME so that
 * TFD_TIMER_CANCEL_ON_SET keeps working) and the period: it fires as it
 * would have had the tree not stopped; the time between dump and restore
 * does not count, not even for CLOCK_REALTIME or absolute timers.  The
 * unread ticks are put back with TFD_IOC_SET_TICKS (a kernel with
 * CONFIG_CHECKPOINT_RESTORE, as Debian's), so the first read after the
 * restore returns them plus any expiry since.
 */
#include <limits.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "log.h"
#include "proc.h"
#include "record.h"

#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

#define NSEC 1000000000LL
#define MAX_SEC (INT64_MAX / NSEC - 1)

/* "(SEC, NSEC)" into ns; 0 or -1. */
static int parse_ts(const char *s, long long *ns)
{
	unsigned long long sec, nsec;

	if (!s || sscanf(s, "(%llu, %llu)", &sec, &nsec) != 2 || nsec >= (unsigned long long)NSEC ||
	    sec > (unsigned long long)MAX_SEC)
		return -1;
	*ns = (long long)sec * NSEC + (long long)nsec;
	return 0;
}

static int timerfd_dump(struct fd_dump *c, struct fd_parms *p, struct tree_file *f)
{
	struct itimerspec cur;
	const char *clk, *flags, *ticks;
	char *info;
	int fd, ret = FD_FAILED;

	(void)c;
	if (strcmp(p->link, "anon_inode:[timerfd]"))
		return FD_OTHER;
	fd = fd_steal(p);
	if (fd >= 0) {
		if (timerfd_gettime(fd, &cur))
			pr_pwarn("pid %d fd %d: timerfd_gettime", p->pid, p->fd);
		close(fd);
	}
	info = fd_info(p);
	if (!info)
		return FD_FAILED;
	clk = status_field(info, "clockid");
	flags = status_field(info, "settime flags");
	ticks = status_field(info, "ticks");
	if (!clk || !flags || !ticks ||
	    sscanf(clk, "%d", &f->clockid) != 1 || sscanf(flags, "%o", &f->settime_flags) != 1 ||
	    sscanf(ticks, "%llu", &f->count) != 1 ||
	    parse_ts(status_field(info, "it_value"), &f->value_ns) ||
	    parse_ts(status_field(info, "it_interval"), &f->interval_ns)) {
		pr_err("pid %d fd %d: timerfd: cannot parse its fdinfo (or times beyond %lld s)",
		       p->pid, p->fd, (long long)MAX_SEC);
		goto out;
	}
	if (f->clockid < 0 || f->clockid >= 64 || f->settime_flags > 3) {
		ret = fd_refuse(p, "timerfd: clock %d, settime flags 0%o: not supported", f->clockid,
				f->settime_flags);
		goto out;
	}
	ret = FD_DESCRIBED;
out:
	free(info);
	return ret;
}

static struct timespec ts_of(long long ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC, .tv_nsec = ns % NSEC };

	return ts;
}

static int timerfd_open(struct fd_restore *r, int i, const char *what)
{
	const struct tree_file *f = &r->t->files[i];
	struct itimerspec its = { .it_interval = ts_of(f->interval_ns) };
	long long value = f->value_ns;
	uint64_t ticks = f->count;
	struct timespec now;
	int fd;

	fd = timerfd_create(f->clockid, TFD_CLOEXEC | (f->flags & O_NONBLOCK ? TFD_NONBLOCK : 0));
	if (fd < 0) {
		pr_perror("%s: timerfd_create on clock %d", what, f->clockid);
		return -1;
	}
	/* expired, periodic, phase unknown (dump had no pidfd_getfd): one period from now */
	if (!value && f->interval_ns)
		value = f->interval_ns;
	if (value) {
		if (f->settime_flags & TFD_TIMER_ABSTIME) {
			if (clock_gettime(f->clockid, &now)) {
				pr_perror("%s: clock_gettime(%d)", what, f->clockid);
				goto fail;
			}
			value += (long long)now.tv_sec * NSEC + now.tv_nsec;
		}
		its.it_value = ts_of(value);
	}
	/*
	 * Also disarmed (an expired one-shot timer): settime is what keeps
	 * its flags (TFD_TIMER_CANCEL_ON_SET still cancels its unread ticks).
	 */
	if ((value || f->settime_flags) && timerfd_settime(fd, f->settime_flags, &its, NULL)) {
		pr_perror("%s: timerfd_settime", what);
		goto fail;
	}
	/* after settime, which clears them */
	if (ticks && ioctl(fd, TFD_IOC_SET_TICKS, &ticks)) {
		pr_perror("%s: cannot put back %llu unread expirations (TFD_IOC_SET_TICKS)", what,
			  f->count);
		goto fail;
	}
	if (fd_set_flags(fd, f->flags, what))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}


static void timerfd_rec_write(FILE *f, const struct tree_file *x)
{
	fprintf(f, " clock=%d setflags=0%o ticks=%llu value=%lld interval=%lld", x->clockid,
		x->settime_flags, x->count, x->value_ns, x->interval_ns);
}

static const char *timerfd_rec_read(struct tree *t, struct tree_file *x, struct rec *r)
{
	(void)t;
	if (REC_NUM(r, "clock", 0, 63, x->clockid) || REC_NUM(r, "setflags", 0, 3, x->settime_flags) ||
	    rec_unum(r, "ticks", &x->count) || REC_NUM(r, "value", 0, LLONG_MAX, x->value_ns) ||
	    REC_NUM(r, "interval", 0, LLONG_MAX, x->interval_ns))
		return "bad file record";
	return NULL;
}

static void timerfd_rec_show(const struct tree *t, int i, const char *mode, char *out,
			     size_t size)
{
	const struct tree_file *f = &t->files[i];

	(void)mode;
	snprintf(out, size, "timerfd clock %d settime flags 0%o ticks %llu value %lld.%09lld s interval %lld.%09lld s",
		 f->clockid, f->settime_flags, f->count, f->value_ns / 1000000000,
		 f->value_ns % 1000000000, f->interval_ns / 1000000000,
		 f->interval_ns % 1000000000);
}

static void timerfd_rec_json(const struct tree *t, int i)
{
	const struct tree_file *f = &t->files[i];

	printf(",\"clockid\":%d,\"settime_flags\":%u,\"ticks\":%llu,\"value_ns\":%lld,\"interval_ns\":%lld",
	       f->clockid, f->settime_flags, f->count, f->value_ns, f->interval_ns);
}

const struct fd_kind timerfd_fd_kind = {
	.name = "timerfd",
	.type = TK_TIMERFD,
	.dump = timerfd_dump,
	.open = timerfd_open,
	.rec_write = timerfd_rec_write,
	.rec_read = timerfd_rec_read,
	.rec_show = timerfd_rec_show,
	.rec_json = timerfd_rec_json,
};
