#define _GNU_SOURCE
#include "CSoundscapeSystem.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

// Layouts the Swift side relies on, checked where the shims are compiled (as
// swift-nio's CNIOLinux does): Swift imports off_t as Int64 and a pthread_t as
// UInt, and StartupPages reads the program headers as Elf64_Phdr.
_Static_assert(sizeof(off_t) == 8, "scs_pread_nowait: off_t must be 64 bits (Swift passes Int64)");
_Static_assert(sizeof(pthread_t) == sizeof(unsigned long), "scs_set_thread_name: pthread_t must fit an unsigned long");
_Static_assert(sizeof(ElfW(Phdr)) == sizeof(Elf64_Phdr), "scs_each_loaded_object: only 64-bit ELF is supported");
_Static_assert(sizeof(ElfW(Addr)) == sizeof(uintptr_t), "scs_each_loaded_object: load addresses must fit a uintptr_t");
// Varlink's PeerCredentials reads SO_PEERCRED as three 32-bit fields: pid, uid, gid.
_Static_assert(sizeof(struct ucred) == 12 && offsetof(struct ucred, uid) == 4 && offsetof(struct ucred, gid) == 8,
               "PeerCredentials (Sources/Varlink/PeerCheck.swift) mirrors struct ucred");

_Static_assert(SCS_SCM_CREDENTIALS == SCM_CREDENTIALS, "SCS_SCM_CREDENTIALS mirrors SCM_CREDENTIALS");

int scs_pipe2_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int scs_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int scs_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int scs_set_thread_name(unsigned long thread, const char *name) {
    return pthread_setname_np((pthread_t)thread, name);
}

int scs_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}

int scs_malloc_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

pid_t scs_gettid(void) {
    return gettid();
}

ssize_t scs_pread_nowait(int fd, void *buffer, size_t count, off_t offset) {
    struct iovec vector = { .iov_base = buffer, .iov_len = count };
    return preadv2(fd, &vector, 1, offset, RWF_NOWAIT);
}

int scs_open_read_noatime(const char *path) {
    return open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
}

struct scs_object_visit {
    int (*visit)(uintptr_t, const Elf64_Phdr *, size_t, void *);
    void *context;
};

static int scs_visit_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct scs_object_visit *visit = data;
    return visit->visit(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, visit->context);
}

int scs_each_loaded_object(int (*visit)(uintptr_t, const Elf64_Phdr *, size_t, void *), void *context) {
    struct scs_object_visit state = { visit, context };
    return dl_iterate_phdr(scs_visit_object, &state);
}

struct cmsghdr *scs_cmsg_firsthdr(struct msghdr *message) {
    return CMSG_FIRSTHDR(message);
}

struct cmsghdr *scs_cmsg_nxthdr(struct msghdr *message, struct cmsghdr *header) {
    return CMSG_NXTHDR(message, header);
}

unsigned char *scs_cmsg_data(struct cmsghdr *header) {
    return CMSG_DATA(header);
}

size_t scs_cmsg_space(size_t length) {
    return CMSG_SPACE(length);
}

int scs_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

long scs_statfs_type(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (long)info.f_type : -1;
}
