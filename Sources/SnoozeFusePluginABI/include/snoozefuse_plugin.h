/*
 * snoozefuse plugin ABI, version 1.0
 *
 * The only thing a snoozefuse plugin and the host share. Plain C99, no other header of the host.
 * A plugin is a shared library (`*.so`) that exports ONE function:
 *
 *     const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void);
 *
 * A function, not a data symbol, so plugins written in Swift (`@_cdecl` / `@c` on a public
 * function) can export it too. The host calls it once, right after `dlopen`, on the main thread.
 *
 * ---------------------------------------------------------------------------------------------
 * STABILITY RULES
 *
 *  1. Every struct starts with `uint32_t struct_size`, set by whoever fills the struct to
 *     `sizeof` the struct as it was compiled. A reader never touches a field that lies at or
 *     beyond `struct_size`.
 *  2. A MINOR version bump only appends fields at the end of structs, adds status codes, kinds,
 *     feature bits, log levels and extension ids. Existing fields never move, change type or
 *     change meaning. A plugin built against 1.x loads in every host 1.y.
 *  3. A MAJOR version bump may change anything. The host refuses a plugin whose
 *     `abi_major` differs from its own and names both versions.
 *  4. Nothing unwinds across the boundary: no C++ exceptions, no longjmp, no Swift errors. Every
 *     call that can fail returns a `snoozefuse_status`; those that take `message` and
 *     `message_capacity` may write a NUL-terminated, human-readable reason there (at most
 *     `message_capacity` bytes including the NUL; truncate, never overflow).
 *  5. Strings handed across are UTF-8 and NUL-terminated. Strings in the descriptor live as long
 *     as the library (the host never unloads a plugin: it never calls dlclose). Strings passed
 *     as arguments are valid only for the duration of the call: copy what you keep.
 *  6. Memory is freed by the side that allocated it: instances are freed by their `destroy`.
 *  7. Ids are reverse-DNS, lower case: `^[a-z0-9]+(\.[a-z0-9-]+)+$`, at most 127 bytes, e.g.
 *     `org.example.rain`. An id never changes once published; `version` does.
 *  8. Unknown kind and feature bits are ignored by the host; unknown status codes are errors.
 *  9. The descriptor's first three fields (struct_size, abi_major, abi_minor) keep their place
 *     and type in every major version, so a host can always tell which version it was given.
 *
 * THREAD TAGS (every function pointer carries one)
 *
 *  [main-thread]   called from the host's control thread, never concurrently with any other
 *                  [main-thread] call of the same plugin.
 *  [audio-thread]  called from the single real-time audio thread. Must not allocate, lock, block,
 *                  sleep or do I/O, and must return quickly. Never concurrent with [main-thread]
 *                  calls on the same instance.
 *  [pulse-thread]  called from a worker thread the host dedicates to one emitter instance; calls
 *                  on one instance never overlap. May block briefly (the host never waits for it
 *                  on the alarm path, and drops pulses that arrive while it is busy), but should
 *                  return within `duration_ms` plus a few milliseconds.
 *  [thread-safe]   callable from any thread, concurrently.
 * ---------------------------------------------------------------------------------------------
 */
#ifndef SNOOZEFUSE_PLUGIN_H
#define SNOOZEFUSE_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SNOOZEFUSE_PLUGIN_ABI_MAJOR 1u
#define SNOOZEFUSE_PLUGIN_ABI_MINOR 0u

/* The name of the one exported function. */
#define SNOOZEFUSE_PLUGIN_ENTRY_SYMBOL "snoozefuse_plugin_entry"

#if defined(__GNUC__) || defined(__clang__)
#define SNOOZEFUSE_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SNOOZEFUSE_PLUGIN_EXPORT
#endif

/* ---- Status codes ------------------------------------------------------------------------- */

typedef int32_t snoozefuse_status;

enum {
    SNOOZEFUSE_STATUS_OK = 0,
    /* A bad argument or configuration string (`message` says which key). */
    SNOOZEFUSE_STATUS_INVALID_CONFIG = 1,
    /* The request is valid but this plugin cannot do it (e.g. an unsupported channel count). */
    SNOOZEFUSE_STATUS_UNSUPPORTED = 2,
    /* A device or resource is missing or refused (e.g. no such /dev/input device). */
    SNOOZEFUSE_STATUS_UNAVAILABLE = 3,
    /* Called in the wrong state (render before activate, ...). */
    SNOOZEFUSE_STATUS_WRONG_STATE = 4,
    /* Anything else; the instance should be considered broken. */
    SNOOZEFUSE_STATUS_FAILED = 5
};

/* ---- Kinds and features ------------------------------------------------------------------- */

/* What a plugin can create (`kinds` is a bitmask of these). */
enum {
    SNOOZEFUSE_KIND_SOUND_SOURCE = 1u << 0,
    SNOOZEFUSE_KIND_PULSE_EMITTER = 1u << 1
};

/* Optional facts about a plugin (`features` is a bitmask of these). */
#define SNOOZEFUSE_FEATURE_STEREO        (UINT64_C(1) << 0) /* the source renders 2 channels natively */
#define SNOOZEFUSE_FEATURE_HARDWARE      (UINT64_C(1) << 1) /* touches a device (input, LED, ...) */
#define SNOOZEFUSE_FEATURE_RUNS_COMMANDS (UINT64_C(1) << 2) /* starts other programs */
#define SNOOZEFUSE_FEATURE_SLEEP_SOUND   (UINT64_C(1) << 3) /* meant for quiet background sound */

/* ---- Host interface ----------------------------------------------------------------------- */

typedef enum snoozefuse_log_level {
    SNOOZEFUSE_LOG_DEBUG = 0,
    SNOOZEFUSE_LOG_INFO = 1,
    SNOOZEFUSE_LOG_WARNING = 2,
    SNOOZEFUSE_LOG_ERROR = 3
} snoozefuse_log_level;

typedef struct snoozefuse_host snoozefuse_host;

struct snoozefuse_host {
    uint32_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t reserved0;
    const char *name;    /* "snoozefuse" */
    const char *version; /* e.g. "0.1.0" */
    void *host_data;     /* the host's own; plugins must not touch it */

    /* [thread-safe] Logs one message (no trailing newline needed). Not from [audio-thread]. */
    void (*log)(const snoozefuse_host *host, int32_t level, const char *message);

    /* [thread-safe] Returns the host extension named `id` (reverse-DNS plus a version), or NULL
     * when the host does not offer it; the pointer is valid as long as the host lives. This
     * release offers no extension and always returns NULL: the slot is here so that later minor
     * versions can add some without breaking this struct. Always handle NULL. */
    const void *(*get_extension)(const snoozefuse_host *host, const char *id);
};

/* ---- Sound source ------------------------------------------------------------------------- */

typedef struct snoozefuse_sound_source snoozefuse_sound_source;

struct snoozefuse_sound_source {
    uint32_t struct_size;
    uint32_t reserved0;
    void *plugin_data; /* the plugin's own */

    /* [main-thread] Prepares to render interleaved float frames at `sample_rate` Hz with
     * `channels` channels, never more than `max_frames` frames per render call. `config` is the
     * user's "key=value,key=value" string ("" when none). Allocate everything render needs here. */
    snoozefuse_status (*activate)(snoozefuse_sound_source *self, uint32_t sample_rate, uint32_t channels,
                                  uint32_t max_frames, const char *config, char *message,
                                  uint32_t message_capacity);

    /* [audio-thread] Writes exactly `frames` frames (frames * channels floats) in [-1, 1] to `out`.
     * Never allocates, locks, blocks or does I/O. A non-OK status, NaN or infinity makes the host
     * disable the instance and play its built-in alarm instead. */
    snoozefuse_status (*render)(snoozefuse_sound_source *self, float *out, uint32_t frames);

    /* [main-thread] Undoes activate. activate may be called again afterwards. */
    void (*deactivate)(snoozefuse_sound_source *self);

    /* [main-thread] Frees the instance (deactivated first by the host if it was active). */
    void (*destroy)(snoozefuse_sound_source *self);
};

/* ---- Pulse emitter ------------------------------------------------------------------------ */

typedef struct snoozefuse_pulse_emitter snoozefuse_pulse_emitter;

struct snoozefuse_pulse_emitter {
    uint32_t struct_size;
    uint32_t reserved0;
    void *plugin_data; /* the plugin's own */

    /* [pulse-thread] One pulse of `intensity` in [0, 1] lasting about `duration_ms`. Start it and
     * return; do not wait for it to end when the device can time it. */
    snoozefuse_status (*emit)(snoozefuse_pulse_emitter *self, float intensity, uint32_t duration_ms,
                              char *message, uint32_t message_capacity);

    /* [pulse-thread] Stops a pulse in progress, if any, and leaves the device as it was found. */
    void (*cancel)(snoozefuse_pulse_emitter *self);

    /* [pulse-thread] Cancels and frees the instance; called on the instance's pulse thread after
     * its last emit or cancel has returned (never while one is running). */
    void (*destroy)(snoozefuse_pulse_emitter *self);
};

/* ---- Descriptor --------------------------------------------------------------------------- */

typedef struct snoozefuse_plugin_descriptor snoozefuse_plugin_descriptor;

struct snoozefuse_plugin_descriptor {
    uint32_t struct_size;
    uint32_t abi_major; /* SNOOZEFUSE_PLUGIN_ABI_MAJOR the plugin was built against */
    uint32_t abi_minor; /* SNOOZEFUSE_PLUGIN_ABI_MINOR the plugin was built against */
    uint32_t kinds;     /* SNOOZEFUSE_KIND_* bits */
    uint64_t features;  /* SNOOZEFUSE_FEATURE_* bits */

    const char *id;          /* reverse-DNS, see rule 7; required */
    const char *name;        /* for people, e.g. "Tone"; required */
    const char *version;     /* the plugin's own version, e.g. "1.2.0"; required */
    const char *vendor;      /* required, may be "" */
    const char *description; /* one line; may be NULL */
    const char *config_help; /* the keys `config` accepts, one "key=values: meaning" per line; may be NULL */

    /* [main-thread] Creates a sound source. Required when kinds has SOUND_SOURCE, else NULL.
     * On success stores the instance in *out (all of its function pointers non-NULL). */
    snoozefuse_status (*create_sound_source)(const snoozefuse_host *host, snoozefuse_sound_source **out,
                                             char *message, uint32_t message_capacity);

    /* [main-thread] Creates a pulse emitter configured by `config` ("key=value,..." or "").
     * Required when kinds has PULSE_EMITTER, else NULL. */
    snoozefuse_status (*create_pulse_emitter)(const snoozefuse_host *host, const char *config,
                                              snoozefuse_pulse_emitter **out, char *message,
                                              uint32_t message_capacity);

    /* [thread-safe] Returns the plugin extension named `id`, or NULL. May itself be NULL. */
    const void *(*get_extension)(const char *id);
};

/* [main-thread] The entry point every plugin exports. Returns a descriptor that lives as long as
 * the library, or NULL when the plugin cannot run at all here. */
typedef const snoozefuse_plugin_descriptor *(*snoozefuse_plugin_entry_fn)(void);

SNOOZEFUSE_PLUGIN_EXPORT const snoozefuse_plugin_descriptor *snoozefuse_plugin_entry(void);

/* ---- Layout checks (ABI 1.0, for LP64 and ILP32) ------------------------------------------ */

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#include <stddef.h>
#define SNOOZEFUSE_ABI_CHECK(expr, what) _Static_assert(expr, what)
#define SNOOZEFUSE_PTR ((size_t)sizeof(void *))
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_host, struct_size) == 0, "struct_size first");
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_host, name) == 16, "host: name");
SNOOZEFUSE_ABI_CHECK(sizeof(snoozefuse_host) == 16 + 5 * SNOOZEFUSE_PTR, "host size, ABI 1.0");
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_sound_source, struct_size) == 0, "struct_size first");
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_sound_source, plugin_data) == 8, "source: plugin_data");
SNOOZEFUSE_ABI_CHECK(sizeof(snoozefuse_sound_source) == 8 + 5 * SNOOZEFUSE_PTR, "source size, ABI 1.0");
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_pulse_emitter, struct_size) == 0, "struct_size first");
SNOOZEFUSE_ABI_CHECK(sizeof(snoozefuse_pulse_emitter) == 8 + 4 * SNOOZEFUSE_PTR, "emitter size, ABI 1.0");
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_plugin_descriptor, struct_size) == 0, "struct_size first");
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_plugin_descriptor, features) == 16, "descriptor: features");
SNOOZEFUSE_ABI_CHECK(offsetof(snoozefuse_plugin_descriptor, id) == 24, "descriptor: id");
SNOOZEFUSE_ABI_CHECK(sizeof(snoozefuse_plugin_descriptor) == 24 + 9 * SNOOZEFUSE_PTR, "descriptor size, ABI 1.0");
SNOOZEFUSE_ABI_CHECK(sizeof(float) == 4, "render writes 32-bit floats");
#undef SNOOZEFUSE_PTR
#undef SNOOZEFUSE_ABI_CHECK
#endif

#ifdef __cplusplus
}
#endif

#endif /* SNOOZEFUSE_PLUGIN_H */
