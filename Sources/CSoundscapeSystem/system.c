#define _GNU_SOURCE
#include "CSoundscapeSystem.h"

#include <fcntl.h>
#include <link.h>
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
