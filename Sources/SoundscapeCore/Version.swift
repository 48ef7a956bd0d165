/// The one place the version is written. `soundscaped --version`,
/// `soundscapectl --version` and `status`, varlink `GetInfo` and the Debian
/// package (debian/changelog, checked against this by a test and by
/// scripts/package) all take it from here.
public enum SoundscapedVersion {
    public static let string = "0.3.0"
}
