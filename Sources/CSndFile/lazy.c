/* libsndfile (libsndfile.so.1), linked on first use instead of at start-up
 * (snoozefuse_lazy_link.h): the first sound file read, checked or written loads it. Linked the
 * usual way, it and the codecs it links (FLAC, Ogg, Vorbis, Opus, MPEG) were about 1.2 ms of
 * every start, though `status`, `stop` or `--version` never call it (issue 23). */
#include "shim.h"

#define SNOOZEFUSE_LAZY_LIBRARY sndfile
#define SNOOZEFUSE_LAZY_SONAME "libsndfile.so.1"
#define SNOOZEFUSE_LAZY_PACKAGE "libsndfile1"

/* Every function of it the program calls. */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(sf_close) \
    X(sf_command) \
    X(sf_error) \
    X(sf_error_number) \
    X(sf_format_check) \
    X(sf_open) \
    X(sf_open_fd) \
    X(sf_open_virtual) \
    X(sf_readf_double) \
    X(sf_readf_float) \
    X(sf_readf_int) \
    X(sf_readf_short) \
    X(sf_seek) \
    X(sf_strerror) \
    X(sf_version_string) \
    X(sf_writef_double) \
    X(sf_writef_float) \
    X(sf_writef_int) \
    X(sf_writef_short)

#include "snoozefuse_lazy_link.h"
