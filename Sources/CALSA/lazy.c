/* alsa-lib (libasound.so.2), linked on first use instead of at start-up
 * (snoozefuse_lazy_link.h): the first PCM, mixer or device list loads it. Linked the usual way,
 * it was about 0.3 ms of every start, though `status`, `stop` or `--version` never call it
 * (issue 23). */
#include "shim.h"

#define SNOOZEFUSE_LAZY_LIBRARY alsa
#define SNOOZEFUSE_LAZY_SONAME "libasound.so.2"
#define SNOOZEFUSE_LAZY_PACKAGE "libasound2"

/* Every function of it the program calls. */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(snd_asoundlib_version) \
    X(snd_card_next) \
    X(snd_config_delete) \
    X(snd_config_search) \
    X(snd_config_search_definition) \
    X(snd_config_unref) \
    X(snd_config_update_ref) \
    X(snd_device_name_free_hint) \
    X(snd_device_name_get_hint) \
    X(snd_device_name_hint) \
    X(snd_lib_error_set_handler) \
    X(snd_mixer_attach) \
    X(snd_mixer_close) \
    X(snd_mixer_elem_next) \
    X(snd_mixer_first_elem) \
    X(snd_mixer_load) \
    X(snd_mixer_open) \
    X(snd_mixer_selem_get_name) \
    X(snd_mixer_selem_get_playback_switch) \
    X(snd_mixer_selem_get_playback_volume) \
    X(snd_mixer_selem_get_playback_volume_range) \
    X(snd_mixer_selem_has_playback_channel) \
    X(snd_mixer_selem_has_playback_switch) \
    X(snd_mixer_selem_has_playback_volume) \
    X(snd_mixer_selem_is_active) \
    X(snd_mixer_selem_register) \
    X(snd_mixer_selem_set_playback_switch) \
    X(snd_mixer_selem_set_playback_switch_all) \
    X(snd_mixer_selem_set_playback_volume) \
    X(snd_mixer_selem_set_playback_volume_all) \
    X(snd_pcm_avail) \
    X(snd_pcm_close) \
    X(snd_pcm_delay) \
    X(snd_pcm_drain) \
    X(snd_pcm_drop) \
    X(snd_pcm_hw_params) \
    X(snd_pcm_hw_params_any) \
    X(snd_pcm_hw_params_free) \
    X(snd_pcm_hw_params_get_buffer_size) \
    X(snd_pcm_hw_params_get_channels) \
    X(snd_pcm_hw_params_get_period_size) \
    X(snd_pcm_hw_params_get_rate) \
    X(snd_pcm_hw_params_malloc) \
    X(snd_pcm_hw_params_set_access) \
    X(snd_pcm_hw_params_set_buffer_time_near) \
    X(snd_pcm_hw_params_set_channels_near) \
    X(snd_pcm_hw_params_set_format) \
    X(snd_pcm_hw_params_set_period_time_near) \
    X(snd_pcm_hw_params_set_rate_near) \
    X(snd_pcm_hw_params_test_format) \
    X(snd_pcm_nonblock) \
    X(snd_pcm_open) \
    X(snd_pcm_prepare) \
    X(snd_pcm_recover) \
    X(snd_pcm_type) \
    X(snd_pcm_writei) \
    X(snd_strerror)

#include "snoozefuse_lazy_link.h"
