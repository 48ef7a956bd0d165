import CSoundscapeSystem

/// glibc's allocator, set for a process that runs for weeks.
public enum MallocTuning {
    /// Keeps large allocations in mappings of their own for the whole life of
    /// the process, so memory freed by a large buffer goes back to the system.
    ///
    /// Why: glibc raises its mmap threshold each time a mapped block is freed
    /// (up to 32 MiB). PipeWire's audioconvert allocates two 2.1 MB buffers per
    /// stream; once the first stream went with a killed server, the threshold
    /// rose to their size, the next stream's buffers came from a thread's heap
    /// arena instead, and resident memory stayed 4.8 MB higher for good (14.0
    /// to 18.8 MB after the first PipeWire restart, then flat: scripts/soak
    /// showed it as the first daemon life's rise). Call before any thread starts.
    public static func fixMmapThreshold(bytes: Int32 = 128 * 1024) {
        _ = scs_malloc_fix_mmap_threshold(bytes)
    }
}
