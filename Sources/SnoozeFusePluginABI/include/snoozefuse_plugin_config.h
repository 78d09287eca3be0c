/* snoozefuse plugin author kit: the configuration parser the built-in plugins use.
 *
 * Not part of the plugin ABI (nothing here crosses between host and plugin): a header-only helper,
 * so a plugin that uses it still depends on nothing but snoozefuse_plugin.h and libc. Include it
 * after snoozefuse_plugin.h. Compiles with -std=c11 or -std=gnu11.
 *
 * The host passes a configuration string to a source's `activate` and to `create_pulse_emitter`:
 * `key=value,key=value`, keys and values without commas, as the user wrote them after the
 * plugin's id (`--source io.github.you.rain:volume=0.6,seed=3`), or "" when there is none. The
 * host never interprets it: your plugin defines its keys (list them in the descriptor's
 * `config_help`), and should refuse unknown ones so that a typo is reported, naming the key:
 *
 *   static const char *const rain_keys[] = {"volume", "seed", NULL};
 *
 *   static snoozefuse_status rain_activate(snoozefuse_sound_source *self, uint32_t rate,
 *                                          uint32_t channels, uint32_t max_frames,
 *                                          const char *config, char *message, uint32_t capacity) {
 *       if (plugin_config_unknown_key(config, rain_keys, "rain", message, capacity))
 *           return SNOOZEFUSE_STATUS_INVALID_CONFIG;
 *       char value[32];
 *       float volume = plugin_config_value(config, "volume", value, sizeof value) ? strtof(value, NULL) : 0.5f;
 *       ...
 *   }
 *
 * Both functions are safe to call from any thread; neither allocates. */
#ifndef SNOOZEFUSE_PLUGIN_CONFIG_H
#define SNOOZEFUSE_PLUGIN_CONFIG_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Copies the value of `key` into `out` (truncated to `capacity` - 1 bytes) and returns 1, or
 * returns 0 when the key is absent. */
static inline int plugin_config_value(const char *config, const char *key, char *out, size_t capacity) {
    size_t key_length = strlen(key);
    const char *p = config ? config : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t length = end ? (size_t)(end - p) : strlen(p);
        if (length > key_length && strncmp(p, key, key_length) == 0 && p[key_length] == '=') {
            size_t value_length = length - key_length - 1;
            if (value_length >= capacity) value_length = capacity - 1;
            memcpy(out, p + key_length + 1, value_length);
            out[value_length] = 0;
            return 1;
        }
        p += length + (end ? 1 : 0);
    }
    return 0;
}

/* Returns 1 and writes a message naming the key and the accepted ones when `config` holds a key
 * not in `allowed` (a NULL-terminated list), so typos are reported; 0 otherwise. */
static inline int plugin_config_unknown_key(const char *config, const char *const *allowed, const char *plugin,
                                            char *message, uint32_t capacity) {
    const char *p = config ? config : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t length = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', length);
        size_t key_length = eq ? (size_t)(eq - p) : length;
        int known = 0;
        for (const char *const *key = allowed; *key && !known; key++) {
            known = strlen(*key) == key_length && strncmp(p, *key, key_length) == 0;
        }
        if (!known) {
            char accepted[128] = "";
            for (const char *const *key = allowed; *key; key++) {
                if (key != allowed) strncat(accepted, ", ", sizeof accepted - strlen(accepted) - 1);
                strncat(accepted, *key, sizeof accepted - strlen(accepted) - 1);
            }
            snprintf(message, capacity, "unknown key \"%.*s\" (%s accepts %s)", (int)key_length, p, plugin, accepted);
            return 1;
        }
        p += length + (end ? 1 : 0);
    }
    return 0;
}

#endif
