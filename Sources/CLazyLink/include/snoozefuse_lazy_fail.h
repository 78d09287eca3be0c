#ifndef SNOOZEFUSE_LAZY_FAIL_H
#define SNOOZEFUSE_LAZY_FAIL_H

/* Says that `soname` cannot be loaded and why, on standard error, and exits 70: the last resort of
   a lazily linked library's first call (snoozefuse_lazy_link.h), where the dynamic loader would
   have refused to start the program. */
__attribute__((noreturn)) void snoozefuse_lazy_fail(const char *soname, const char *package, const char *why);

#endif
