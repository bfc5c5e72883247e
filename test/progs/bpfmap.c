/*
 * bpfmap: bpf maps across dump + restore (test/guest/fds/t_bpfmap.sh),
 * with the raw bpf() syscall.
 *
 *   bpfmap       makes (map name: what it holds)
 *                  arr     ARRAY key 4 value 8, 16 entries: i -> i*1000+7
 *                  hash    HASH key 8 value 16, 128 at most, 100 elements
 *                          (k*7919 -> {k, ~k}), and a second, read-only fd
 *                          of it (BPF_MAP_GET_FD_BY_ID, BPF_F_RDONLY)
 *                  frozen  ARRAY key 4 value 4, 4 entries (i -> 100+i),
 *                          BPF_MAP_FREEZE'd
 *                  shared  HASH key 4 value 4, 8 at most, {0 -> 42},
 *                          shared with a child (fork)
 *                  pcpu    PERCPU_ARRAY key 4 value 8, 2 entries (each
 *                          CPU's value: 10*i + cpu)
 *                  lru     LRU_HASH key 4 value 4, 64 at most, 10 elements
 *                          (k -> k*k)
 *                  queue   QUEUE value 4, 8 at most: 1..5 (0..5 pushed
 *                          and 0 popped before: the head is 1)
 *                  stack   STACK value 8, 4 at most, 10, 20, 30 pushed, and
 *                          a second, read-only fd of it (sro: a lower fd)
 *                  lpm     LPM_TRIE key 8 (prefix length + IPv4) value 4,
 *                          BPF_F_NO_PREALLOC, 16 at most: 10/8 -> 1,
 *                          10.1/16 -> 2, 10.1.2/24 -> 3, 192.168/16 -> 4
 *                  fq      QUEUE value 4, 4 at most, empty, frozen
 *                  bloom   BLOOM_FILTER value 2, BPF_F_ZERO_SEED, 16
 *                          entries: 1, 2, 300 pushed
 *                  bz      BLOOM_FILTER value 1, a random seed, empty
 *                Prints "fd NAME N" (and "child PID"), "ready", waits until
 *                the file "restored" appears, then checks (ok/BAD): every
 *                element of every map (and no others), each fd's fdinfo
 *                (map_type, key_size, value_size, max_entries, map_flags,
 *                frozen), the read-only fd names the same map as hash's
 *                and cannot write (EPERM), frozen cannot be written
 *                (EPERM), queue pops 1..5 in order then pushes and
 *                pops again, stack pops 30, 20, 10 and is full at 4, lpm's
 *                longest prefix matches, fq is empty and cannot be pushed
 *                onto (EPERM), bloom's members (every value tested) are
 *                those before the dump, bz has none, the parent and the child see each other's
 *                updates of "shared" (one map: the child writes its map_id
 *                there too).  Prints "done ok" and exits 0 if all passed.
 *   bpfmap ringbuf  a RINGBUF map (refused); "fd N", "ready", "tick I" every 100 ms
 *   bpfmap mmap     an ARRAY with BPF_F_MMAPABLE, mapped (refused); the same
 *   bpfmap prog     a HASH map that a socket filter program uses (loaded by
 *                   the parent, which keeps it and closes the map): the
 *                   child holds the map, prints "pid PID" and the same
 *   bpfmap outside  the same without a program: the parent holds the map too
 *   bpfmap bloom    a QUEUE with 1, 2, 3 (dumped first: a lower fd), then a
 *                   BLOOM_FILTER of 4-byte values (refused); once "restored" appears, pops
 *                   the queue: "queue ok" if it still holds 1, 2, 3 in order
 *   bpfmap qfrozen  a frozen QUEUE with 7 in it (refused)
 *   bpfmap bseed    a BLOOM_FILTER of 1-byte values, random seed, 5 pushed (refused)
 *   bpfmap qprog    a QUEUE with 7 in it that a socket filter program of the
 *                   parent uses (refused before it is read)
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define COMMON_CHECK
#include "common.h"

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int mkmap(int type, int ks, int vs, int max, int flags, const char *name)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = max;
	a.map_flags = flags;
	snprintf(a.map_name, sizeof(a.map_name), "%s", name);
	fd = sys_bpf(BPF_MAP_CREATE, &a);
	if (fd < 0) {
		say("BAD BPF_MAP_CREATE %s: %s\n", name, strerror(errno));
		exit(1);
	}
	return fd;
}

static int pop(int fd, void *v)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.value = (unsigned long)v;
	return sys_bpf(BPF_MAP_LOOKUP_AND_DELETE_ELEM, &a) ? -errno : 0;
}

static void freeze(int fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	if (sys_bpf(BPF_MAP_FREEZE, &a))
		say("BAD BPF_MAP_FREEZE: %s\n", strerror(errno));
}

static int upd(int fd, const void *k, const void *v)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (unsigned long)k;
	a.value = (unsigned long)v;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) ? -errno : 0;
}

static int get(int fd, const void *k, void *v)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (unsigned long)k;
	a.value = (unsigned long)v;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) ? -errno : 0;
}

static int count(int fd, int ks)
{
	unsigned char k[64], n[64];
	union bpf_attr a;
	int c = 0;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = c ? (unsigned long)k : 0;
		a.next_key = (unsigned long)n;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a))
			return c;
		memcpy(k, n, ks);
		c++;
	}
}

/* fdinfo field @key of our fd @fd, or -1 */
static long long fdinfo(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 0);
	if (f)
		fclose(f);
	return v;
}

/* bloom filter @fd's members (value size 1 or 2) into bitmap @set (8 KiB); their number */
static int members(int fd, int vs, unsigned char *set)
{
	unsigned int v, end = 1u << (8 * vs), n = 0;

	memset(set, 0, 8192);
	for (v = 0; v < end; v++)
		if (!get(fd, NULL, &v)) {
			set[v / 8] |= 1 << (v % 8);
			n++;
		}
	return n;
}

static void check_info(int fd, const char *name, int type, int ks, int vs, int max, int flags, int frozen)
{
	long long t = fdinfo(fd, "map_type"), k = fdinfo(fd, "key_size"), v = fdinfo(fd, "value_size"),
		  m = fdinfo(fd, "max_entries"), fl = fdinfo(fd, "map_flags"), fr = fdinfo(fd, "frozen");

	check(t == type && k == ks && v == vs && m == max && fl == flags && fr == frozen, "fdinfo",
	      "%s: type %lld key %lld value %lld max %lld flags 0x%llx frozen %lld (want %d %d %d %d 0x%x %d)",
	      name, t, k, v, m, fl, fr, type, ks, vs, max, flags, frozen);
}

static int ncpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int a = 0, b = 0, n;

	if (!f)
		return 1;
	n = fscanf(f, "%d-%d", &a, &b);
	fclose(f);
	return n == 2 ? b - a + 1 : 1;
}

static int refused(const char *kind)
{
	int fd, i, q = -1, checked = 0;
	unsigned int v4;

	if (!strcmp(kind, "ringbuf")) {
		fd = mkmap(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, "rb");
	} else if (!strcmp(kind, "bloom")) {
		q = mkmap(BPF_MAP_TYPE_QUEUE, 0, 4, 8, 0, "q");
		for (v4 = 1; v4 <= 3; v4++)
			upd(q, NULL, &v4);
		fd = mkmap(BPF_MAP_TYPE_BLOOM_FILTER, 0, 4, 16, 0, "bf");
		v4 = 5;
		upd(fd, NULL, &v4);
	} else if (!strcmp(kind, "bseed")) {
		fd = mkmap(BPF_MAP_TYPE_BLOOM_FILTER, 0, 1, 8, 0, "bs");
		v4 = 5;
		upd(fd, NULL, &v4);
	} else if (!strcmp(kind, "qfrozen")) {
		fd = mkmap(BPF_MAP_TYPE_QUEUE, 0, 4, 8, 0, "qf");
		v4 = 7;
		upd(fd, NULL, &v4);
		freeze(fd);
	} else if (!strcmp(kind, "prog") || !strcmp(kind, "outside") || !strcmp(kind, "qprog")) {
		/* r1 = the map (ld_imm64, BPF_PSEUDO_MAP_FD); r0 = 0; exit */
		struct bpf_insn insns[4] = {
			{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD },
			{ 0 },
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		union bpf_attr a;
		int prog = -1;
		pid_t c;

		if (!strcmp(kind, "qprog")) {
			fd = mkmap(BPF_MAP_TYPE_QUEUE, 0, 4, 8, 0, "usedq");
			v4 = 7;
			upd(fd, NULL, &v4);
		} else {
			fd = mkmap(BPF_MAP_TYPE_HASH, 4, 4, 8, 0, "used");
		}
		if (strcmp(kind, "outside")) {
			insns[0].imm = fd;
			memset(&a, 0, sizeof(a));
			a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
			a.insns = (unsigned long)insns;
			a.insn_cnt = 4;
			a.license = (unsigned long)"GPL";
			prog = sys_bpf(BPF_PROG_LOAD, &a);
			if (prog < 0) {
				say("BAD BPF_PROG_LOAD: %s\n", strerror(errno));
				return 1;
			}
		}
		/* the child is dumped; the parent holds the program (prog) or the map (outside) */
		c = fork();
		if (c) {
			if (prog >= 0)
				close(fd);
			for (;;)
				pause();
		}
		if (prog >= 0)
			close(prog);
		say("pid %d\n", getpid());
	} else {
		unsigned int k = 0;
		unsigned long long v = 5;
		void *p;

		fd = mkmap(BPF_MAP_TYPE_ARRAY, 4, 8, 512, BPF_F_MMAPABLE, "mm");
		upd(fd, &k, &v);
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			say("BAD mmap: %s\n", strerror(errno));
			return 1;
		}
	}
	say("fd %d\nready\n", fd);
	for (i = 0;; i++) {
		say("tick %d\n", i);
		usleep(100000);
		if (q >= 0 && !checked && !access("restored", F_OK)) {
			unsigned int got[4] = { 0 };
			int n = 0;

			while (n < 4 && !pop(q, &got[n]))
				n++;
			checked = 1;
			say(n == 3 && got[0] == 1 && got[1] == 2 && got[2] == 3 ? "queue ok\n" :
			    "BAD queue after the refused dump: %d elements %u %u %u\n", n, got[0], got[1], got[2]);
		}
	}
}

int main(int argc, char **argv)
{
	int arr, hash, ro, frozen, shared, pcpu, lru, queue, stack, sro, lpm, fq, bloom, bz, i, nc = ncpus();
	static unsigned char bset[8192], bset2[8192];
	int bn, bn2;
	struct { unsigned int plen; unsigned char ip[4]; } lk[4] = {
		{ 8, { 10 } }, { 16, { 10, 1 } }, { 24, { 10, 1, 2 } }, { 16, { 192, 168 } },
	}, probe;
	unsigned long long v8, pv[64];
	unsigned int k4, v4, e4;
	pid_t child;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 2)
		return refused(argv[1]);
	arr = mkmap(BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0, "arr");
	hash = mkmap(BPF_MAP_TYPE_HASH, 8, 16, 128, 0, "hash");
	frozen = mkmap(BPF_MAP_TYPE_ARRAY, 4, 4, 4, 0, "frozen");
	shared = mkmap(BPF_MAP_TYPE_HASH, 4, 4, 8, 0, "shared");
	pcpu = mkmap(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2, 0, "pcpu");
	lru = mkmap(BPF_MAP_TYPE_LRU_HASH, 4, 4, 64, 0, "lru");
	queue = mkmap(BPF_MAP_TYPE_QUEUE, 0, 4, 8, 0, "queue");
	sro = dup(0);		/* a lower fd than stack's: the dump meets the read-only fd first */
	stack = mkmap(BPF_MAP_TYPE_STACK, 0, 8, 4, 0, "stack");
	lpm = mkmap(BPF_MAP_TYPE_LPM_TRIE, 8, 4, 16, BPF_F_NO_PREALLOC, "lpm");
	fq = mkmap(BPF_MAP_TYPE_QUEUE, 0, 4, 4, 0, "fq");
	/* 0..5 pushed, 0 popped: its head is not at the start of its ring */
	for (v4 = 0; v4 <= 5; v4++)
		if (upd(queue, NULL, &v4))
			say("BAD queue push %u\n", v4);
	pop(queue, &v4);
	for (v8 = 10; v8 <= 30; v8 += 10)
		if (upd(stack, NULL, &v8))
			say("BAD stack push %llu\n", v8);
	for (i = 0; i < 4; i++) {
		v4 = i + 1;
		if (upd(lpm, &lk[i], &v4))
			say("BAD lpm update %d: %s\n", i, strerror(errno));
	}
	freeze(fq);
	bloom = mkmap(BPF_MAP_TYPE_BLOOM_FILTER, 0, 2, 16, BPF_F_ZERO_SEED, "bloom");
	bz = mkmap(BPF_MAP_TYPE_BLOOM_FILTER, 0, 1, 8, 0, "bz");
	for (i = 0; i < 3; i++) {
		unsigned short b = i < 2 ? i + 1 : 300;

		if (upd(bloom, NULL, &b))
			say("BAD bloom push %u: %s\n", b, strerror(errno));
	}
	bn = members(bloom, 2, bset);
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_id = fdinfo(stack, "map_id");
		a.open_flags = BPF_F_RDONLY;
		i = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (i < 0 || dup2(i, sro) < 0)
			say("BAD BPF_MAP_GET_FD_BY_ID: %s\n", strerror(errno));
		close(i);
	}
	for (k4 = 0; k4 < 16; k4++) {
		v8 = k4 * 1000 + 7;
		upd(arr, &k4, &v8);
	}
	for (i = 1; i <= 100; i++) {
		unsigned long long k = i * 7919ULL, v[2] = { i, ~(unsigned long long)i };

		if (upd(hash, &k, v))
			say("BAD hash update %d\n", i);
	}
	for (k4 = 0; k4 < 4; k4++) {
		v4 = 100 + k4;
		upd(frozen, &k4, &v4);
	}
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = frozen;
		if (sys_bpf(BPF_MAP_FREEZE, &a))
			say("BAD BPF_MAP_FREEZE: %s\n", strerror(errno));
		memset(&a, 0, sizeof(a));
		a.map_id = fdinfo(hash, "map_id");
		a.open_flags = BPF_F_RDONLY;
		ro = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (ro < 0)
			say("BAD BPF_MAP_GET_FD_BY_ID: %s\n", strerror(errno));
	}
	k4 = 0;
	v4 = 42;
	upd(shared, &k4, &v4);
	for (k4 = 0; k4 < 2; k4++) {
		for (i = 0; i < nc; i++)
			pv[i] = 10 * k4 + i;
		upd(pcpu, &k4, pv);
	}
	for (k4 = 1; k4 <= 10; k4++) {
		v4 = k4 * k4;
		upd(lru, &k4, &v4);
	}
	child = fork();
	if (child == 0) {
		/* the child: once key 1 appears (the parent's), write key 2 and its map id (key 3) */
		while (access("restored", F_OK))
			usleep(50000);
		k4 = 1;
		for (i = 0; i < 200 && get(shared, &k4, &v4); i++)
			usleep(50000);
		v4 = 0;
		get(shared, &k4, &v4);
		check(v4 == 111, "child sees the parent's update", "key 1 %u", v4);
		k4 = 3;
		v4 = fdinfo(shared, "map_id");
		upd(shared, &k4, &v4);
		k4 = 2;
		v4 = 222;
		upd(shared, &k4, &v4);
		say(bad ? "child BAD\n" : "child ok\n");
		return bad;
	}
	say("fd arr %d\nfd hash %d\nfd ro %d\nfd frozen %d\nfd shared %d\nfd pcpu %d\nfd lru %d\n"
	    "fd queue %d\nfd stack %d\nfd sro %d\nfd lpm %d\nfd fq %d\nfd bloom %d\nfd bz %d\nchild %d\n"
	    "bloom members %d\nready\n",
	    arr, hash, ro, frozen, shared, pcpu, lru, queue, stack, sro, lpm, fq, bloom, bz, child, bn);
	while (access("restored", F_OK))
		usleep(50000);

	/* every element */
	for (k4 = 0, i = 0; k4 < 16; k4++)
		i += !get(arr, &k4, &v8) && v8 == k4 * 1000 + 7;
	check(i == 16 && count(arr, 4) == 16, "arr", "%d of 16 elements right", i);
	for (i = 1, v4 = 0; i <= 100; i++) {
		unsigned long long k = i * 7919ULL, v[2];

		v4 += !get(hash, &k, v) && v[0] == (unsigned long long)i && v[1] == ~(unsigned long long)i;
	}
	check(v4 == 100 && count(hash, 8) == 100, "hash", "%u of 100 elements right, %d elements", v4,
	      count(hash, 8));
	for (k4 = 0, i = 0; k4 < 4; k4++)
		i += !get(frozen, &k4, &v4) && v4 == 100 + k4;
	check(i == 4, "frozen elements", "%d of 4 right", i);
	for (k4 = 0, i = 0; k4 < 2; k4++) {
		int c, good = !get(pcpu, &k4, pv);

		for (c = 0; c < nc; c++)
			good &= pv[c] == 10 * k4 + c;
		i += good;
	}
	check(i == 2, "pcpu", "%d of 2 elements right (%d CPUs)", i, nc);
	for (k4 = 1, i = 0; k4 <= 10; k4++)
		i += !get(lru, &k4, &v4) && v4 == k4 * k4;
	check(i == 10 && count(lru, 4) == 10, "lru", "%d of 10 elements right, %d elements", i, count(lru, 4));

	/* queue: 1..5 in order, then a push and pops; stack: 30, 20, 10, full at 4 */
	v4 = 0;
	i = get(queue, NULL, &v4);
	check(!i && v4 == 1, "queue head", "peek %u (%s)", v4, strerror(-i));
	{
		unsigned int got[8];
		int n = 0, e;

		while (n < 8 && !pop(queue, &got[n]))
			n++;
		for (i = 0, e = 0; i < n; i++)
			e += got[i] == (unsigned int)i + 1;
		check(n == 5 && e == 5, "queue order", "%d elements, %d in order (%u %u ...)", n, e, got[0], got[1]);
		v4 = 77;
		upd(queue, NULL, &v4);
		v4 = 78;
		upd(queue, NULL, &v4);
		i = pop(queue, &v4);
		check(!i && v4 == 77, "queue push+pop", "%u (%s)", v4, strerror(-i));
	}
	v8 = 0;
	i = get(stack, NULL, &v8);
	check(!i && v8 == 30, "stack top", "peek %llu (%s)", v8, strerror(-i));
	{
		unsigned long long got[4] = { 0 };
		int n = 0;

		while (n < 4 && !pop(stack, &got[n]))
			n++;
		check(n == 3 && got[0] == 30 && got[1] == 20 && got[2] == 10, "stack order",
		      "%d elements: %llu %llu %llu", n, got[0], got[1], got[2]);
		for (v8 = 1, i = 0; v8 <= 5; v8++)
			i = upd(stack, NULL, &v8);
		check(i == -E2BIG, "stack full at 4", "fifth push: %s", strerror(-i));
		v8 = 0;
		i = pop(stack, &v8);
		check(!i && v8 == 4, "stack push+pop", "%llu (%s)", v8, strerror(-i));
		v8 = 9;
		i = upd(sro, NULL, &v8);
		check(i == -EPERM, "stack's read-only fd", "push: %s", strerror(-i));
	}
	{
		static const struct { unsigned char ip[4]; unsigned int want; } pr[] = {
			{ { 10, 1, 2, 3 }, 3 }, { { 10, 1, 9, 9 }, 2 }, { { 10, 9, 9, 9 }, 1 },
			{ { 192, 168, 1, 1 }, 4 }, { { 11, 0, 0, 1 }, 0 },
		};

		for (i = 0, e4 = 0; i < 5; i++) {
			probe.plen = 32;
			memcpy(probe.ip, pr[i].ip, 4);
			v4 = 0;
			get(lpm, &probe, &v4);
			e4 += v4 == pr[i].want;
		}
		check(e4 == 5 && count(lpm, 8) == 4, "lpm", "%u of 5 lookups right, %d prefixes", e4, count(lpm, 8));
	}
	check(get(fq, NULL, &v4) == -ENOENT, "fq empty", "peek");
	v4 = 1;
	i = upd(fq, NULL, &v4);
	check(i == -EPERM, "fq frozen", "push: %s", strerror(-i));

	bn2 = members(bloom, 2, bset2);
	check(bn2 == bn && !memcmp(bset, bset2, sizeof(bset)) && bn >= 3 && (bset2[0] & 6) == 6 && (bset2[37] & 0x10),
	      "bloom", "%d members, %d before the dump%s", bn2, bn,
	      memcmp(bset, bset2, sizeof(bset)) ? ", not the same" : "");
	i = members(bz, 1, bset2);
	check(i == 0, "bz empty", "%d members", i);

	/* fdinfo */
	check_info(arr, "arr", BPF_MAP_TYPE_ARRAY, 4, 8, 16, 0, 0);
	check_info(hash, "hash", BPF_MAP_TYPE_HASH, 8, 16, 128, 0, 0);
	check_info(ro, "ro", BPF_MAP_TYPE_HASH, 8, 16, 128, 0, 0);
	check_info(frozen, "frozen", BPF_MAP_TYPE_ARRAY, 4, 4, 4, 0, 1);
	check_info(shared, "shared", BPF_MAP_TYPE_HASH, 4, 4, 8, 0, 0);
	check_info(pcpu, "pcpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2, 0, 0);
	check_info(lru, "lru", BPF_MAP_TYPE_LRU_HASH, 4, 4, 64, 0, 0);
	check_info(queue, "queue", BPF_MAP_TYPE_QUEUE, 0, 4, 8, 0, 0);
	check_info(stack, "stack", BPF_MAP_TYPE_STACK, 0, 8, 4, 0, 0);
	check_info(sro, "sro", BPF_MAP_TYPE_STACK, 0, 8, 4, 0, 0);
	check_info(lpm, "lpm", BPF_MAP_TYPE_LPM_TRIE, 8, 4, 16, BPF_F_NO_PREALLOC, 0);
	check_info(fq, "fq", BPF_MAP_TYPE_QUEUE, 0, 4, 4, 0, 1);
	check_info(bloom, "bloom", BPF_MAP_TYPE_BLOOM_FILTER, 0, 2, 16, BPF_F_ZERO_SEED, 0);
	check_info(bz, "bz", BPF_MAP_TYPE_BLOOM_FILTER, 0, 1, 8, 0, 0);
	check(fdinfo(ro, "map_id") == fdinfo(hash, "map_id") && fdinfo(ro, "map_id") > 0, "ro is hash",
	      "map ids %lld %lld", fdinfo(ro, "map_id"), fdinfo(hash, "map_id"));
	check((fdinfo(ro, "flags") & 3) == 0 && (fdinfo(hash, "flags") & 3) == 2, "access modes",
	      "ro flags 0%llo hash flags 0%llo", fdinfo(ro, "flags"), fdinfo(hash, "flags"));
	{
		unsigned long long k = 5, v[2] = { 1, 2 };

		i = upd(ro, &k, v);
		check(i == -EPERM, "read-only fd", "update: %s", strerror(-i));
	}
	k4 = 0;
	v4 = 1;
	i = upd(frozen, &k4, &v4);
	check(i == -EPERM, "frozen", "update: %s", strerror(-i));

	/* one map shared with the child */
	k4 = 1;
	v4 = 111;
	upd(shared, &k4, &v4);
	k4 = 2;
	for (i = 0; i < 200 && get(shared, &k4, &v4); i++)
		usleep(50000);
	v4 = 0;
	get(shared, &k4, &v4);
	check(v4 == 222, "parent sees the child's update", "key 2 %u", v4);
	k4 = 3;
	v4 = 0;
	get(shared, &k4, &v4);
	check(v4 == fdinfo(shared, "map_id"), "one shared map", "child's map id %u, parent's %lld", v4,
	      fdinfo(shared, "map_id"));
	waitpid(child, &i, 0);
	check(WIFEXITED(i) && WEXITSTATUS(i) == 0, "child", "status 0x%x", i);
	if (bad)
		return 1;
	say("done ok\n");
	return 0;
}
