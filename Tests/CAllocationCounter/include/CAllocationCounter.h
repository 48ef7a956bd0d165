// Counts heap allocations made on the real-time data thread (the thread
// `scs_mark_real_time_thread` marked), for RealTimeAllocationTests. Linked into the
// test executable only: it defines malloc, calloc, realloc, free and the aligned
// allocators, which the dynamic linker then binds for the whole test process in
// place of glibc's, and forwards each to glibc's own (__libc_malloc & co).
#pragma once

#include <stdint.h>

/// Allocations (and frees) made so far on a thread marked real-time.
uint64_t cac_real_time_allocations(void);
