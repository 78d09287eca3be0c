#ifndef SNOOZEFUSE_CLINUX_SHIM_H
#define SNOOZEFUSE_CLINUX_SHIM_H

/* Linux interfaces that Swift's Glibc module does not export (as swift-nio's CNIOLinux does). */
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#endif
