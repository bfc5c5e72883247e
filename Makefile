# imgcr top-level Makefile
#   make                  build the modules for the running kernel and the tools
#   make modules KVER=v   build the modules for kernel v (headers installed)
#   make dkms-install     register with DKMS and install for the running kernel
#   make check            the host unit tests (test/unit/: seconds, no guest)
#   make test             the test suite in QEMU guests (every kernel)
#   make demo             boot a guest and checkpoint/restore a counter
#   make deb              imgcr-dkms and imgcr Debian packages in ..
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
KVER ?= $(shell uname -r)

all: modules userspace

modules:
	$(MAKE) -C module KVER=$(KVER)

userspace:
	$(MAKE) -C userspace

dkms-install:
	dkms add .
	dkms install imgcr/$(VERSION) -k $(KVER)

check:
	@set -e; for t in test/unit/*.sh; do $$t; done

test:
	test/run.sh

demo:
	test/demo.sh

deb:
	dpkg-buildpackage -us -uc -b

clean:
	-$(MAKE) -C module clean
	-$(MAKE) -C userspace clean
	rm -rf build

.PHONY: all modules userspace dkms-install check test demo deb clean
