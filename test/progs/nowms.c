/* nowms: print CLOCK_MONOTONIC in milliseconds (busybox date has no %N). */
#define _GNU_SOURCE
#include <time.h>

#include "common.h"

int main(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	say("%lld\n", (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000);
	return 0;
}
