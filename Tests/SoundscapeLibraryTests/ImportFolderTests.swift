import Foundation
import Glibc
import Testing
@testable import SoundscapeLibrary

/// What a crashed import leaves: removed by the next import or the daemon's start, never listed.
@Suite struct ImportFolderTests {
    /// A temporary file nobody holds is a leftover, whatever process id its name has (this
    /// one's too: the daemon may see another PID namespace); one an import holds is not.
    @Test func leftoversGoHeldTemporariesAndOtherFilesStay() throws {
        let tree = try TemporaryTree()
        let ours = ImportFolder.temporaryName(tag: "1234")
        let folder = try tree.directory(
            "user",
            files: [
                "kept.opus": "k", "manifest.json": #"{"soundscapes": []}"#, ".import-99999-5.tmp": "half",
                ours: "half", ".import-notes.txt": "mine",
            ])
        let heldFolder = try tree.directory("held")
        let held = heldFolder + "/" + ImportFolder.temporaryName(tag: "running")
        let running = open(held, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        try #require(running >= 0)
        ImportFolder.hold(running)

        let removed = ImportFolder.cleanUp(folder)
        #expect(Set(removed ?? []) == [".import-99999-5.tmp", ours])
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["kept.opus", "manifest.json", ".import-notes.txt"])
        #expect(ImportFolder.cleanUp(heldFolder) == [], "an import that runs keeps its file")
        #expect(FileManager.default.fileExists(atPath: held))
        close(running)  // the import ends (a SIGKILL closes it as well)
        let again = ImportFolder.cleanUp(heldFolder)
        #expect(again == [ImportFolder.temporaryName(tag: "running")], "once its import is gone, it is a leftover")
        #expect(ImportFolder.cleanUp(tree.root + "/missing") == nil)
    }

    /// The catalog lists no temporary file, even one an import is writing.
    @Test func theCatalogNeverListsATemporaryFile() throws {
        let tree = try TemporaryTree()
        let user = try tree.directory(
            "user", files: ["a.opus": "a", ImportFolder.temporaryName(tag: "7"): "x", ".import-1-manifest.tmp": "{}"])
        let catalog = SoundscapeCatalog.scan(.init(builtin: nil, extra: [], user: user))
        #expect(catalog.entries.map(\.id.rawValue) == ["a"])
        #expect(catalog.problems.isEmpty, "\(catalog.problems)")
    }
}
