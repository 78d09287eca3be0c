#ifndef SNOOZEFUSE_CSAMPLERATE_SHIM_H
#define SNOOZEFUSE_CSAMPLERATE_SHIM_H

/* libsamplerate (Secret Rabbit Code): plain functions Swift calls directly. */
#include <samplerate.h>

#endif
