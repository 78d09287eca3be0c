/* Shared by the built-in plugins (not part of the plugin ABI): parsing the `key=value,key=value`
 * configuration string the host passes to `create_*` and `activate`. Header-only, so each plugin
 * library still depends on nothing but the ABI header and libc. */
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
