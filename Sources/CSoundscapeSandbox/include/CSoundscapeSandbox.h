// Thin C over libseccomp, whose rule calls are variadic (Swift cannot call them):
// the two filters the daemon applies itself, each to the calling thread only (no
// TSYNC), so that threads made before it stay as they were (see SignerSpawner).
#pragma once

/// Loads a filter on the calling thread that refuses (EPERM) writable-and-executable
/// memory, as systemd's MemoryDenyWriteExecute=: mmap with PROT_WRITE|PROT_EXEC,
/// mprotect and pkey_mprotect adding PROT_EXEC, shmat with SHM_EXEC. Sets
/// no_new_privs on the thread first (seccomp needs it without CAP_SYS_ADMIN).
/// 0, or a negative errno.
int scs_seccomp_deny_write_execute(void);

/// Loads a filter on the calling thread under which `socket` refuses (EAFNOSUPPORT)
/// every address family but the `count` in `allowed`, as systemd's
/// RestrictAddressFamilies=. 0, or a negative errno.
int scs_seccomp_allow_address_families(const int *allowed, int count);
