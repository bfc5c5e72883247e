/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The release, dkms.conf's PACKAGE_VERSION, given by the build
 * (-DIMGCR_VERSION) as the modules' MODULE_VERSION is: imgcr check
 * compares the two.
 */
#ifndef IMGCR_VERSION_H
#define IMGCR_VERSION_H

#ifndef IMGCR_VERSION
#error "build with -DIMGCR_VERSION=\"X.Y\" (userspace/Makefile reads dkms.conf)"
#endif

#endif
