#include "CSoundscapeSandbox.h"

#include <errno.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>

static int load(scmp_filter_ctx filter) {
    // The default (no TSYNC): the calling thread, and the threads and processes it makes later.
    int result = seccomp_load(filter);
    seccomp_release(filter);
    return result;
}

int scs_seccomp_deny_write_execute(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter) return -ENOMEM;
    int result = 0;
    // mmap(…, prot, …): refused when prot has both PROT_WRITE and PROT_EXEC.
    result |= seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE | PROT_EXEC));
    // mprotect / pkey_mprotect(…, prot): refused when prot has PROT_EXEC (no page gains it later).
    result |= seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mprotect), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
    result |= seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pkey_mprotect), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
    // shmat(…, …, shmflg): refused with SHM_EXEC.
    result |= seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(shmat), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC));
    if (result != 0) {
        seccomp_release(filter);
        return result < 0 ? result : -EINVAL;
    }
    return load(filter);
}

int scs_seccomp_allow_address_families(const int *allowed, int count) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter) return -ENOMEM;
    int result = 0;
    for (int family = 0; family < AF_MAX && result == 0; family++) {
        int keep = 0;
        for (int i = 0; i < count; i++) keep |= allowed[i] == family;
        if (!keep) {
            result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)family));
        }
    }
    // Families newer than these headers: refused too.
    if (result == 0) {
        result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                  SCMP_A0(SCMP_CMP_GE, (scmp_datum_t)AF_MAX));
    }
    if (result != 0) {
        seccomp_release(filter);
        return result;
    }
    return load(filter);
}
