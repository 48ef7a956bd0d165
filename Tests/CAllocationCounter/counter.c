#include "CAllocationCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/// CSoundscapeShims: whether `PlaybackStream.process` marked this thread.
extern bool scs_on_real_time_thread(void);

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic uint64_t real_time_allocations;

static inline void note(void) {
    if (scs_on_real_time_thread()) {
        atomic_fetch_add_explicit(&real_time_allocations, 1, memory_order_relaxed);
    }
}

uint64_t cac_real_time_allocations(void) {
    return atomic_load_explicit(&real_time_allocations, memory_order_relaxed);
}

void *malloc(size_t size) {
    note();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    note();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    note();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer) note();
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    note();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return ENOMEM;
    *result = pointer;
    return 0;
}
