/* The render probe linked into a program built with a sanitizer (as the test binary and the
 * plugin host program are by `make test-asan` and `make test-tsan`): it must start, and still
 * count what is allocated and freed between enter and leave. Prints "ALLOCATIONS FREES". */
#include <stdio.h>
#include <stdlib.h>
#include "plugin_probe.h"

int main(void) {
    void *volatile before = malloc(10);
    free(before);
    snoozefuse_probe_enter();
    void *volatile during = malloc(100);
    free(during);
    snoozefuse_probe_leave();
    printf("%lu %lu\n", snoozefuse_probe_allocations(), snoozefuse_probe_frees());
    return 0;
}
