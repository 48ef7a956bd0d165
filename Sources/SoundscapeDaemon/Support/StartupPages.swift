import CSoundscapeSystem
import Glibc
import Logging
import SoundscapeCore
import SoundscapeSystem

/// Unmaps the code and read-only data that starting up touched, so that a
/// daemon which then runs for days does not keep them in its resident set.
///
/// Parsing the command line (swift-argument-parser reflects over the options,
/// which reads Swift's field metadata), opening the store (SQLite's parser and
/// code generator), the dynamic loader and PipeWire's connection each touch code
/// that never runs again, and the kernel's fault-around maps 64 KB around every
/// page touched. `MADV_DONTNEED` on a private mapping of a file that was never
/// written only removes our page-table entries: the pages stay in the page cache,
/// shared and reclaimable, and whatever still runs faults them straight back in
/// (a minor fault, no I/O, like the first call of any function). The figures
/// are in docs/performance.md.
///
/// Only segments that are read-only in the ELF program headers are released,
/// and never those of an object with text relocations: those are the only
/// pages the loader could have written, and dropping a written private page
/// would bring back the file's bytes. The walk runs inside `dl_iterate_phdr`,
/// which holds the loader's lock, so no object can be unloaded under it.
enum StartupPages {
    /// Releases, and says at debug level what it changed. Never inlined, so a
    /// profiler can cut its profile at each call (startup before, the daemon's
    /// steady work after).
    @inline(never)
    static func release(logger: Logger) {
        // The two /proc reads only when someone will see them.
        guard logger.logLevel <= .debug else {
            release()
            return
        }
        let before = residentKilobytes()
        let released = release()
        logger.debug(
            "released the pages startup touched",
            metadata: [
                "segments_kB": "\(released / 1024)", "rss_kB_before": "\(before)", "rss_kB_after": "\(residentKilobytes())",
            ])
    }

    /// Bytes of read-only segments released (their size, resident or not).
    @discardableResult
    static func release() -> Int {
        var released = 0
        withUnsafeMutablePointer(to: &released) { total in
            _ = scs_each_loaded_object(
                { base, headers, count, context in
                    guard let headers, let context else { return 0 }
                    context.assumingMemoryBound(to: Int.self).pointee +=
                        StartupPages.release(base: base, headers: UnsafeBufferPointer(start: headers, count: count))
                    return 0
                }, total)
        }
        return released
    }

    /// The page size is a power of two; ranges are shrunk to whole pages inside
    /// the segment so a page shared with a writable neighbour is never touched.
    private static let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
    private static let vdso = UInt(getauxval(UInt(AT_SYSINFO_EHDR)))

    private static func release(base: UInt, headers: UnsafeBufferPointer<Elf64_Phdr>) -> Int {
        // The vDSO is the kernel's, not a file mapping.
        if headers.contains(where: { $0.p_type == PT_LOAD && base + UInt($0.p_vaddr) == vdso }) { return 0 }
        if headers.contains(where: { $0.p_type == PT_DYNAMIC && hasTextRelocations(at: base + UInt($0.p_vaddr)) }) {
            return 0
        }
        var released = 0
        for header in headers where header.p_type == PT_LOAD && header.p_flags & UInt32(PF_W) == 0 {
            let start = (base + UInt(header.p_vaddr) + pageSize - 1) & ~(pageSize - 1)
            let end = (base + UInt(header.p_vaddr) + UInt(header.p_memsz)) & ~(pageSize - 1)
            guard end > start, madvise(UnsafeMutableRawPointer(bitPattern: start), Int(end - start), MADV_DONTNEED) == 0
            else { continue }
            released += Int(end - start)
        }
        return released
    }

    /// Whether the loader patched this object's code (DT_TEXTREL or DF_TEXTREL).
    private static func hasTextRelocations(at address: UInt) -> Bool {
        guard var entry = UnsafePointer<Elf64_Dyn>(bitPattern: address) else { return false }
        while entry.pointee.d_tag != DT_NULL {
            if entry.pointee.d_tag == DT_TEXTREL { return true }
            if entry.pointee.d_tag == DT_FLAGS, entry.pointee.d_un.d_val & UInt64(DF_TEXTREL) != 0 { return true }
            entry += 1
        }
        return false
    }
}

extension StartupPages {
    /// This process's resident set (`/proc/self/statm`, second field, in pages), in KB.
    static func residentKilobytes() -> Int {
        guard let text = FileSystem.text(of: "/proc/self/statm") else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(pageSize) / 1024
    }
}
