#ifndef SNOOZEFUSE_CSQLITE_SHIM_H
#define SNOOZEFUSE_CSQLITE_SHIM_H

#include <stddef.h>

/* SQLite (libsqlite3.so.0), which GRDB speaks to, is loaded on its first call, not when the program
   starts (lazy.c). This loads it ahead, where a failure can be told. Returns 0 once it is loaded;
   otherwise -1, with why in `why` (at most `size` bytes, NUL-terminated). Cheap after the first
   time; safe from any thread. */
int snoozefuse_sqlite_load(char *why, size_t size);

#endif
