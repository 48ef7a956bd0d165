#include "CSoundscapeShims.h"

#include <time.h>
#include <spa/param/audio/format-utils.h>

struct pw_properties *scs_properties_new(void) {
    return pw_properties_new(NULL, NULL);
}

int scs_core_add_listener(struct pw_core *core, struct spa_hook *listener,
                          const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, listener, events, data);
}

int scs_registry_add_listener(struct pw_registry *registry, struct spa_hook *listener,
                              const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, listener, events, data);
}

int scs_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *listener,
                              const struct pw_metadata_events *events, void *data) {
    return pw_metadata_add_listener(metadata, listener, events, data);
}

int scs_node_add_listener(struct pw_node *node, struct spa_hook *listener,
                          const struct pw_node_events *events, void *data) {
    return pw_node_add_listener(node, listener, events, data);
}

int scs_metadata_set_property(struct pw_metadata *metadata, uint32_t subject, const char *key,
                              const char *type, const char *value) {
    return pw_metadata_set_property(metadata, subject, key, type, value);
}

int scs_core_sync(struct pw_core *core, uint32_t id, int seq) {
    return pw_core_sync(core, id, seq);
}

const struct spa_pod *scs_build_f32p_format(uint8_t *buffer, uint32_t size,
                                            uint32_t rate, uint32_t channels) {
    if (channels != 2) {
        return NULL; // the renderer writes two planes, FL and FR: nothing else can be carried
    }
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_audio_info_raw info = {
        .format = SPA_AUDIO_FORMAT_F32P,
        .rate = rate,
        .channels = channels,
        .position = { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR },
    };
    return spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info);
}

struct spa_source *scs_loop_add_event(struct pw_loop *loop,
                                      void (*func)(void *data, uint64_t count), void *data) {
    return pw_loop_add_event(loop, func, data);
}

struct spa_source *scs_loop_add_io_in(struct pw_loop *loop, int fd,
                                      void (*func)(void *data, int fd, uint32_t mask), void *data) {
    return pw_loop_add_io(loop, fd, SPA_IO_IN, false, func, data);
}

int scs_loop_signal_event(struct pw_loop *loop, struct spa_source *source) {
    return pw_loop_signal_event(loop, source);
}

struct spa_source *scs_loop_add_timer(struct pw_loop *loop,
                                      void (*func)(void *data, uint64_t expirations), void *data) {
    return pw_loop_add_timer(loop, func, data);
}

int scs_loop_update_timer(struct pw_loop *loop, struct spa_source *source,
                          uint64_t value_ns, uint64_t interval_ns) {
    struct timespec value = { .tv_sec = value_ns / SPA_NSEC_PER_SEC, .tv_nsec = value_ns % SPA_NSEC_PER_SEC };
    struct timespec interval = { .tv_sec = interval_ns / SPA_NSEC_PER_SEC, .tv_nsec = interval_ns % SPA_NSEC_PER_SEC };
    return pw_loop_update_timer(loop, source, &value, &interval, false);
}

int scs_loop_invoke(struct pw_loop *loop, spa_invoke_func_t func, uint32_t seq,
                    const void *data, size_t size, bool block, void *user_data) {
    return pw_loop_invoke(loop, func, seq, data, size, block, user_data);
}

void scs_loop_destroy_source(struct pw_loop *loop, struct spa_source *source) {
    pw_loop_destroy_source(loop, source);
}

static __thread bool real_time_thread;

void scs_mark_real_time_thread(void) {
    real_time_thread = true;
}

bool scs_on_real_time_thread(void) {
    return real_time_thread;
}
