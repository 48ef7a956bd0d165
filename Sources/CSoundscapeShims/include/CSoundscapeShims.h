// Thin C shims for the parts of libpipewire that Swift cannot import:
// variadic functions and function-like macros. Every shim forwards to exactly
// one PipeWire call; no logic lives here, but for the one check said below.
#pragma once

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/pod/builder.h>

/// `pw_properties_new` is variadic; this creates an empty property set.
struct pw_properties *scs_properties_new(void);

/// `pw_core_add_listener` is a macro over the core's method table.
int scs_core_add_listener(struct pw_core *core, struct spa_hook *listener,
                          const struct pw_core_events *events, void *data);

/// `pw_registry_add_listener` is a macro over the registry's method table.
int scs_registry_add_listener(struct pw_registry *registry, struct spa_hook *listener,
                              const struct pw_registry_events *events, void *data);

/// `pw_metadata_add_listener` is a macro over the metadata proxy's method table.
int scs_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *listener,
                              const struct pw_metadata_events *events, void *data);

/// `pw_node_add_listener` is a macro over the node proxy's method table.
int scs_node_add_listener(struct pw_node *node, struct spa_hook *listener,
                          const struct pw_node_events *events, void *data);

/// `pw_metadata_set_property` is a macro; a NULL `value` deletes the key.
int scs_metadata_set_property(struct pw_metadata *metadata, uint32_t subject, const char *key,
                              const char *type, const char *value);

/// `pw_core_sync` is a macro; returns the sequence number the core's `done` event will echo.
int scs_core_sync(struct pw_core *core, uint32_t id, int seq);

/// `SPA_POD_BUILDER_INIT` and the format builder are macros/inlines over a
/// caller-owned buffer: builds an EnumFormat pod for planar F32 audio (a plane per
/// channel, the graph's own format). `channels` must be 2 (positions FL, FR): the
/// renderer writes exactly two planes, so any other count, mono included, is refused
/// with NULL. Returns NULL too if `size` is too small.
const struct spa_pod *scs_build_f32p_format(uint8_t *buffer, uint32_t size,
                                            uint32_t rate, uint32_t channels);

/// `pw_loop_add_event` is a macro over the loop's utils; the callback runs on the loop thread.
struct spa_source *scs_loop_add_event(struct pw_loop *loop,
                                      void (*func)(void *data, uint64_t count), void *data);

/// `pw_loop_add_io` is a macro; `func` runs on the loop thread when `fd` is readable
/// (SPA_IO_IN). The source does not close `fd`.
struct spa_source *scs_loop_add_io_in(struct pw_loop *loop, int fd,
                                      void (*func)(void *data, int fd, uint32_t mask), void *data);

/// `pw_loop_signal_event` is a macro; safe to call from any thread (writes an eventfd).
int scs_loop_signal_event(struct pw_loop *loop, struct spa_source *source);

/// `pw_loop_add_timer` is a macro over the loop's utils; the callback runs on the loop thread.
struct spa_source *scs_loop_add_timer(struct pw_loop *loop,
                                      void (*func)(void *data, uint64_t expirations), void *data);

/// `pw_loop_update_timer` is a macro. `value_ns` 0 disarms; `interval_ns` 0 is one-shot.
int scs_loop_update_timer(struct pw_loop *loop, struct spa_source *source,
                          uint64_t value_ns, uint64_t interval_ns);

/// `pw_loop_invoke` is a macro; runs `func` on the loop's thread, serialised with its
/// other work. With `block` the caller waits for it (inline when already on that thread).
int scs_loop_invoke(struct pw_loop *loop, spa_invoke_func_t func, uint32_t seq,
                    const void *data, size_t size, bool block, void *user_data);

/// `pw_loop_destroy_source` is a macro.
void scs_loop_destroy_source(struct pw_loop *loop, struct spa_source *source);

/// Marks the calling thread as the real-time data thread: `PlaybackStream.process`
/// calls it every cycle (a thread-local store, nothing more). Read by
/// `scs_on_real_time_thread`, which the tests' allocation counter asks from
/// inside malloc; the daemon itself never reads it.
void scs_mark_real_time_thread(void);

/// Whether the calling thread was marked by `scs_mark_real_time_thread`.
bool scs_on_real_time_thread(void);
