#define _GNU_SOURCE
#include "CSoundscapeImport.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>

int scs_import_confine(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!filter) return -ENOMEM;
    int result = seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1);
    static const char *const allowed[] = {
        // The descriptors it was given: the input, the output, the report pipe.
        "read", "readv", "pread64", "write", "writev", "pwrite64", "lseek", "close", "fstat", "newfstatat",
        "statx", "fcntl", "ftruncate", "fsync", "fdatasync", "dup", "dup3",
        // Memory (writable-and-executable refused below).
        "brk", "munmap", "mremap", "madvise", "mlock", "munlock",
        // Threads of its own (the Swift runtime's), time, and ending.
        "futex", "set_robust_list", "get_robust_list", "rseq", "gettid", "getpid", "tgkill", "sched_yield",
        "sched_getaffinity", "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday",
        "getrandom", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall",
        "exit", "exit_group", "prlimit64", "getrlimit", "uname", "membarrier",
        // The Swift runtime's dispatch manager waits in epoll: refused, it would spin.
        "epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl", "epoll_create1", "eventfd2", "poll", "ppoll",
        "timerfd_create", "timerfd_settime", "timerfd_gettime",
    };
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed && result == 0; i++) {
        int number = seccomp_syscall_resolve_name(allowed[i]);
        if (number == __NR_SCMP_ERROR) continue;
        result = seccomp_rule_add(filter, SCMP_ACT_ALLOW, number, 0);
    }
    // mmap and mprotect, never both writable and executable.
    if (result == 0)
        result = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                  SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, 0));
    if (result == 0)
        result = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                  SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE));
    if (result == 0)
        result = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                  SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_EXEC));
    if (result == 0)
        result = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                                  SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    // A thread, never a process: clone only with CLONE_THREAD; clone3 (whose flags a
    // filter cannot read) says ENOSYS, so the C library falls back to clone.
    if (result == 0)
        result = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (result == 0) result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (result != 0) {
        seccomp_release(filter);
        return result < 0 ? result : -EINVAL;
    }
    result = seccomp_load(filter);
    seccomp_release(filter);
    return result;
}
