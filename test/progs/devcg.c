/*
 * devcg CGROUP_DIR: attach to cgroup v2 CGROUP_DIR a device access
 * program (BPF_PROG_TYPE_CGROUP_DEVICE) that allows every device, as runc
 * and docker attach theirs (which allow only some), and print its id.
 * The attachment stays with the cgroup after devcg exits.  A dump of a
 * task in that cgroup must refuse, naming the pid and the cgroup.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	struct bpf_prog_info info;
	int cg, fd;

	if (argc != 2)
		return 2;
	cg = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (cg < 0) {
		say("devcg: cannot open %s\n", argv[1]);
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (unsigned long)prog;
	a.insn_cnt = 2;
	a.license = (unsigned long)"GPL";
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0) {
		say("devcg: cannot load the program\n");
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.target_fd = cg;
	a.attach_bpf_fd = fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	if (syscall(SYS_bpf, BPF_PROG_ATTACH, &a, sizeof(a))) {
		say("devcg: cannot attach the program to %s\n", argv[1]);
		return 1;
	}
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(info);
	a.info.info = (unsigned long)&info;
	if (syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)))
		return 1;
	say("attached %u\n", info.id);
	return 0;
}
