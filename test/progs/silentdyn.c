/* silent.c linked dynamically (test/lib-host.sh): the main thread's TLS is
 * then ld.so's, a thread's at the top of its stack, with a DTV for each */
#include "silent.c"
