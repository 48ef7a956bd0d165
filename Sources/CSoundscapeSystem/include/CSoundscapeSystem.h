// Thin C shims for glibc functions that Swift's Glibc module does not import
// because they need _GNU_SOURCE. Each forwards to exactly one call (adapting a callback at most).
#pragma once

#include <elf.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/timerfd.h>
#include <sys/types.h>

/// `SCM_CREDENTIALS` (sys/socket.h defines it only with _GNU_SOURCE; checked in system.c).
#define SCS_SCM_CREDENTIALS 2

/// `pipe2` (close-on-exec set atomically, so no concurrent spawn can inherit the pipe).
int scs_pipe2_cloexec(int fds[2]);

/// `posix_spawn_file_actions_addclosefrom_np`: the child closes every descriptor from `from` up.
int scs_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/// `posix_spawn_file_actions_addchdir_np`: the child starts in `path`.
int scs_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

/// `pthread_setname_np` on a thread given as its `pthread_t` value (at most 15 characters).
int scs_set_thread_name(unsigned long thread, const char *name);

/// `malloc_trim` (malloc.h, not in Swift's Glibc module): gives the heap's free pages
/// back to the system. Returns 1 when memory was released.
int scs_malloc_trim(size_t pad);

/// `mallopt(M_MMAP_THRESHOLD, bytes)`: allocations of at least `bytes` get
/// their own mapping, returned to the system when freed. Setting it also ends
/// glibc's dynamic threshold. Returns 1 on success.
int scs_malloc_fix_mmap_threshold(int bytes);

/// `gettid`: the calling thread's id (for per-thread `setpriority`).
pid_t scs_gettid(void);

/// `preadv2` with `RWF_NOWAIT`: reads only what the page cache holds and never waits
/// for the disk (-1 with EAGAIN instead). What it can still cost is listed at its
/// one caller, `PCMLoopReader.readWithoutWaiting` (Sources/SoundscapeAudio/RealTime/PCMLoopReader.swift).
ssize_t scs_pread_nowait(int fd, void *buffer, size_t count, off_t offset);

/// `open(path, O_RDONLY | O_CLOEXEC | O_NOATIME)`: reads through it never update the
/// file's access time (so never dirty its inode). Only the file's owner may (else EPERM).
int scs_open_read_noatime(const char *path);

/// `dl_iterate_phdr` (its `struct dl_phdr_info` needs _GNU_SOURCE): calls `visit` with each
/// loaded object's load address and program headers, under the loader's lock; stops at the
/// first non-zero return.
int scs_each_loaded_object(int (*visit)(uintptr_t base, const Elf64_Phdr *headers, size_t count, void *context),
                           void *context);

struct msghdr;
struct cmsghdr;

/// `CMSG_FIRSTHDR`, `CMSG_NXTHDR`, `CMSG_DATA`, `CMSG_SPACE` (macros Swift cannot import):
/// walking the control messages `recvmsg` returned.
struct cmsghdr *scs_cmsg_firsthdr(struct msghdr *message);
struct cmsghdr *scs_cmsg_nxthdr(struct msghdr *message, struct cmsghdr *header);
unsigned char *scs_cmsg_data(struct cmsghdr *header);
size_t scs_cmsg_space(size_t length);

/// `pidfd_open(pid, 0)` (by syscall: glibc 2.36's wrapper needs _GNU_SOURCE): a descriptor
/// that polls readable once `pid` has exited, so a wait can have a deadline.
int scs_pidfd_open(pid_t pid);

/// `statfs(path)`'s `f_type` (sys/vfs.h, which Swift's Glibc module does not import): the
/// file system's magic number (TMPFS_MAGIC, RAMFS_MAGIC …), or -1 with errno set.
long scs_statfs_type(const char *path);
