/*
 * libimgcrtest.so, the shared library of t_libreplace (not a program: the
 * harness builds it twice, -DIMGCR_LIB_VERSION=1 as libimgcrtest.so and
 * =2 as libimgcrtest-v2.so; version 2 also has a bigger data section, so the
 * two files differ in size, not only in content).
 */
#ifndef IMGCR_LIB_VERSION
#define IMGCR_LIB_VERSION 1
#endif

int imgcr_test_value(void);
int imgcr_test_value(void)
{
	return 1000 * IMGCR_LIB_VERSION + 7;
}

#if IMGCR_LIB_VERSION > 1
const char imgcr_test_pad[16384] = { 1 };
#endif
