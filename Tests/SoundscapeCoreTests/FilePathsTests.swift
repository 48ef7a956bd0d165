import Foundation
import SoundscapeCore
import Testing

@Suite struct FilePathsTests {
    @Test func pathsJoinAndSplitLikeURLsDid() {
        #expect(FilePaths.join("/a/b", "c.opus") == "/a/b/c.opus")
        #expect(FilePaths.join("/a/b/", "c.opus") == "/a/b/c.opus")
        #expect(FilePaths.join("/a/b//", "c.opus") == "/a/b/c.opus")
        #expect(FilePaths.join("/", "c.opus") == "/c.opus")
        #expect(FilePaths.parent("/a/b/c") == "/a/b")
        #expect(FilePaths.parent("/a/b/") == "/a")
        #expect(FilePaths.parent("/a") == "/")
        #expect(FilePaths.parent("/") == "/")
        #expect(FilePaths.parent("name") == ".")
        for path in ["/a/b", "/a/b/c.opus"] {
            #expect(FilePaths.parent(path) == URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        #expect(FilePaths.lastComponent("/a/b/c.opus") == "c.opus")
        #expect(FilePaths.lastComponent("/a/b/") == "b")
        #expect(FilePaths.lastComponent("c.opus") == "c.opus")
        #expect(FilePaths.lastComponent("/") == "")
    }

    /// A slash and the combining mark after it are one Swift `Character`, and no
    /// slash; the kernel sees a slash. Every answer here must be the kernel's.
    @Test func aSlashBeforeACombiningMarkIsStillASlash() {
        let mark = "\u{306}"
        #expect(!"a/\(mark)b".contains("/"), "the Swift behaviour this guards against")
        #expect(!FilePaths.isPlainName("../\(mark)x"))
        #expect(!FilePaths.isPlainName("a/\(mark)b"))
        #expect(FilePaths.isPlainName("\(mark).opus"))
        #expect(FilePaths.isAbsolute("/\(mark)x"))
        #expect(FilePaths.lastComponent("/a/\(mark)b") == "\(mark)b")
        #expect(FilePaths.parent("/a/\(mark)b") == "/a")
        #expect(FilePaths.parent("/\(mark)b") == "/")
        #expect(FilePaths.join("/a", "\(mark)b").utf8.elementsEqual("/a/\(mark)b".utf8))
    }

    @Test func aPlainNameIsOneEntry() {
        for name in ["ocean.opus", ".hidden", "...", "a b", "é"] { #expect(FilePaths.isPlainName(name), "\(name)") }
        for name in ["", ".", "..", "a/b", "/", "a\u{0}b"] { #expect(!FilePaths.isPlainName(name), "\(name)") }
    }
}
