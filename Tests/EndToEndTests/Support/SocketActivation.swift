/// systemd's part of socket activation, done by python for the tests that run the daemon
/// without a user manager: bind and listen on a path, put the socket at descriptor 3,
/// name it `control`, set `LISTEN_PID` to the pid that then execs the daemon.
enum SocketActivationLauncher {
    static let script = """
        import os, socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sys.argv[1]); s.listen(16)
        os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
        os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), LISTEN_FDNAMES="control")
        os.execv(sys.argv[2], sys.argv[2:])
        """

    /// What to spawn (with `/usr/bin/env`) to run `executable arguments…` socket-activated on `socket`.
    static func arguments(socket: String, executable: String, _ arguments: [String]) -> [String] {
        ["python3", "-c", script, socket, executable] + arguments
    }
}
