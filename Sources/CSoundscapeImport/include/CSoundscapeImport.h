// The importer's C: what Swift cannot call itself (libopusenc's variadic ctl calls,
// libseccomp's variadic rule calls), for soundscapectl's import worker.
#pragma once

#include <stdint.h>

typedef struct OggOpusEnc OggOpusEnc;

/// An Ogg Opus encoder (48 kHz, stereo, VBR at `bitrate` bit/s, complexity 8, Ogg serial `serial`,
/// a TITLE comment when `title` is not NULL) that writes every page to `fd` (all of it,
/// retrying short writes; a failed write, such as a full disk, fails the encoder's next
/// call). NULL on failure, with libopusenc's error in `*error`.
OggOpusEnc *scs_opus_writer_open(int fd, int32_t bitrate, int32_t serial, const char *title, int *error);

/// The errno of the last write that failed an encoder of `scs_opus_writer_open` (0: none yet).
int scs_opus_writer_error(void);

/// Confines the whole process, every thread of it, to work on the descriptors it has:
/// a seccomp allow-list (TSYNC) of reading, writing, seeking and closing open files,
/// memory (no writable-and-executable pages), time, futexes, threads, signals and exit.
/// Anything else (open, socket, connect, execve, fork, ptrace, ...) fails with EPERM.
/// Sets no_new_privs first. 0, or a negative errno.
int scs_import_confine(void);
