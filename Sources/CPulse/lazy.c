/* libpulse, linked on first use instead of at start-up (snoozefuse_lazy_link.h).
 *
 * Linked the usual way, libpulse and what it needs (libpulsecommon, D-Bus, X11 and xcb, libsystemd,
 * libgcrypt, compression libraries: some twenty files) are loaded and relocated by every start of
 * the program, about 4.5 ms on the benchmark machine, though `status`, `stop` or `--version` never
 * speak to a sound server (issue 23). A connection to a sound server loads it first
 * (snoozefuse_pulse_load), so that a failure is told as the server's. */
#include "shim.h"

#define SNOOZEFUSE_LAZY_LIBRARY pulse
#define SNOOZEFUSE_LAZY_SONAME "libpulse.so.0"
#define SNOOZEFUSE_LAZY_PACKAGE "libpulse0"

/* Every libpulse function the program calls. */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(pa_context_connect) \
    X(pa_context_disconnect) \
    X(pa_context_errno) \
    X(pa_context_get_server_info) \
    X(pa_context_get_sink_info_by_name) \
    X(pa_context_get_sink_info_list) \
    X(pa_context_get_sink_input_info) \
    X(pa_context_get_state) \
    X(pa_context_new_with_proplist) \
    X(pa_context_set_sink_input_mute) \
    X(pa_context_set_sink_input_volume) \
    X(pa_context_set_sink_mute_by_name) \
    X(pa_context_set_sink_volume_by_name) \
    X(pa_context_set_subscribe_callback) \
    X(pa_context_subscribe) \
    X(pa_context_unref) \
    X(pa_cvolume_max) \
    X(pa_cvolume_set) \
    X(pa_mainloop_dispatch) \
    X(pa_mainloop_free) \
    X(pa_mainloop_get_api) \
    X(pa_mainloop_new) \
    X(pa_mainloop_poll) \
    X(pa_mainloop_prepare) \
    X(pa_operation_cancel) \
    X(pa_operation_get_state) \
    X(pa_operation_unref) \
    X(pa_proplist_free) \
    X(pa_proplist_gets) \
    X(pa_proplist_new) \
    X(pa_proplist_sets) \
    X(pa_stream_connect_playback) \
    X(pa_stream_connect_record) \
    X(pa_stream_cork) \
    X(pa_stream_disconnect) \
    X(pa_stream_drain) \
    X(pa_stream_drop) \
    X(pa_stream_flush) \
    X(pa_stream_get_index) \
    X(pa_stream_get_state) \
    X(pa_stream_new) \
    X(pa_stream_new_with_proplist) \
    X(pa_stream_peek) \
    X(pa_stream_readable_size) \
    X(pa_stream_unref) \
    X(pa_stream_writable_size) \
    X(pa_stream_write) \
    X(pa_strerror)

#include "snoozefuse_lazy_link.h"
