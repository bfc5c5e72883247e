/* SPDX-License-Identifier: GPL-2.0 */
/* The release, as in dkms.conf's PACKAGE_VERSION (t_cli checks they agree). */
#ifndef IMGCR_VERSION_H
#define IMGCR_VERSION_H

#define IMGCR_VERSION "0.1"

#endif
