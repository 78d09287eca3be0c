#ifndef SNOOZEFUSE_CSNDFILE_SHIM_H
#define SNOOZEFUSE_CSNDFILE_SHIM_H

#include <sndfile.h>

/* libsndfile's API is plain functions Swift can call directly; this header only gathers it so the
 * module map has one entry point. Wrappers for anything Swift cannot call go here. */

#endif
