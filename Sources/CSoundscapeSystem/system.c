#define _GNU_SOURCE
#include "CSoundscapeSystem.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

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

ssize_t scs_pread_nowait(int fd, void *buffer, size_t count, off_t offset) {
    struct iovec vector = { .iov_base = buffer, .iov_len = count };
    return preadv2(fd, &vector, 1, offset, RWF_NOWAIT);
}
