#ifndef SNOOZEFUSE_CCRYPTO_SHIM_H
#define SNOOZEFUSE_CCRYPTO_SHIM_H

/* OpenSSL's libcrypto, for SHA-256 only (EVP digests: hardware SHA extensions where the CPU has
 * them, so hashing keeps up with decoding a long file). */
#include <openssl/evp.h>

#endif
