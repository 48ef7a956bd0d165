/// The one place the version is written. `soundscaped --version`,
/// `soundscapectl --version` and `status`, varlink `GetInfo` and the Debian
/// package (debian/changelog, checked against this by a test and by
/// scripts/package) all take it from here.
///
/// A release's own commit carries `MAJOR.MINOR.PATCH`; every other commit of
/// main carries the release it works toward with `~dev` (`0.3.1~dev`, which dpkg
/// sorts after 0.3.0 and before 0.3.1). scripts/release writes both
/// (docs/releasing.md).
public enum SoundscapedVersion {
    public static let string = "0.3.1~dev"
}
