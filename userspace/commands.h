/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IMGCR_COMMANDS_H
#define IMGCR_COMMANDS_H

int cmd_show(int argc, char **argv);
int cmd_check(int argc, char **argv);
int usage_error(const char *why);

#endif
