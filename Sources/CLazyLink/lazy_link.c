/* What every lazily linked library shares (include/snoozefuse_lazy_link.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "snoozefuse_lazy_fail.h"

void snoozefuse_lazy_fail(const char *soname, const char *package, const char *why) {
    char message[768];
    int length = snprintf(message, sizeof message,
                          "snoozefuse: cannot load %s (%s): install Debian's package %s, then try again\n", soname, why, package);
    if (length > 0) {
        size_t size = (size_t)length < sizeof message ? (size_t)length : sizeof message - 1;
        ssize_t written = write(2, message, size);
        (void)written;
    }
    _exit(70);
}
