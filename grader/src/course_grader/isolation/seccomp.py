"""A seccomp filter for the students' kernels: the system calls a notebook never needs and an
escape would, refused by the Linux kernel before they run.

The sandbox (:mod:`.bubblewrap`) already takes the kernel's capabilities and network away;
what is left to an attacker is the Linux kernel's own surface. Like Docker's default profile,
this filter refuses (``EPERM``) the calls that open most of it: new namespaces (``unshare``,
``setns``, ``clone`` with a ``CLONE_NEW*`` flag: a user namespace would give the notebook
capabilities of its own), tracing and reading other processes (``ptrace``,
``process_vm_readv``/``writev``), the kernel keyring, BPF programs, performance counters,
``userfaultfd``, ``io_uring``, mounting, kernel modules, ``kexec``, swap, ``reboot``,
``acct`` and handles that bypass paths (``open_by_handle_at``). A call of another ABI (on
x86-64: the x32 ABI and 32-bit calls, which would take other numbers past the filter) is
refused too. ``clone3`` answers "not implemented" (``ENOSYS``), so that the C library falls
back to ``clone``, whose flags the filter can read (``clone3`` passes them in memory, out of a
filter's reach).

libseccomp compiles the rules, by system call name, for the processor it runs on (through
pyseccomp, its ctypes binding; the library itself, libseccomp2, comes with every Debian and
Ubuntu as a dependency of apt). :func:`program` exports the classic BPF program; bubblewrap
installs it (``--seccomp FD``) as the last step before the kernel starts.
"""

from __future__ import annotations

import atexit
import errno
import functools
import os
import platform
import tempfile

# By name: libseccomp knows each processor's numbers.
REFUSED = (
    "ptrace", "process_vm_readv", "process_vm_writev",
    "add_key", "request_key", "keyctl",
    "bpf", "perf_event_open", "userfaultfd",
    "unshare", "setns",
    "mount", "umount2", "pivot_root", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_by_handle_at", "name_to_handle_at",
    "swapon", "swapoff", "reboot", "acct",
)  # fmt: skip
# linux/sched.h: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NEW = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
# Where clone's flags are its second argument, not its first (linux/kernel/fork.c).
_CLONE_FLAGS_SECOND = ("s390", "s390x")


def _library():
    """pyseccomp, or why not: the binding missing, or libseccomp's library not on the system."""
    try:
        import pyseccomp
    except Exception as error:  # not installed; RuntimeError or OSError: no libseccomp.so.2
        return None, f"libseccomp is not available here ({type(error).__name__}: {error})"
    return pyseccomp, ""


@functools.cache
def program() -> bytes | None:
    """This processor's filter as the ``struct sock_filter`` records bwrap reads, or None where
    libseccomp is missing or cannot build it (:func:`unavailable` says why)."""
    seccomp, _ = _library()
    if seccomp is None or platform.machine().lower() in _CLONE_FLAGS_SECOND:
        return None
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.ERRNO(errno.EPERM))
    missing = set(unknown())
    for name in REFUSED:
        if name not in missing:  # a call this libseccomp cannot name (an older one) has no rule
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    if "clone3" not in missing:  # else clone3's flags go unchecked: the report names it
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for flag in CLONE_NEW:  # any one of them set: (flags & flag) == flag
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ,
                                                                       flag, flag))  # fmt: skip
    with tempfile.TemporaryFile() as f:
        rules.export_bpf(f)
        f.seek(0)
        return f.read()


@functools.cache
def filter_path() -> str | None:
    """A file holding this machine's filter (written once per grader process), or None."""
    code = program()
    if code is None:
        return None
    fd, path = tempfile.mkstemp(prefix="helpers-grade-seccomp-", suffix=".bpf")
    with os.fdopen(fd, "wb") as f:
        f.write(code)
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def unknown() -> list[str]:
    """The calls of :data:`REFUSED` (and clone3) this machine's libseccomp cannot name (it is
    older than the call), which its filter therefore leaves alone; the report says so."""
    seccomp, _ = _library()
    if seccomp is None:
        return []
    return [name for name in (*REFUSED, "clone3") if not _named(seccomp, name)]


def _named(seccomp, name: str) -> bool:
    """Whether this libseccomp knows the system call ``name`` on this processor."""
    try:
        return seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0  # -1: unknown
    except ValueError:
        return False


def unavailable() -> str:
    """Why the kernels get no seccomp filter here ("" if they do)."""
    seccomp, why = _library()
    if seccomp is None:
        return why
    try:
        code = program()
    except Exception as error:  # libseccomp refused a rule: no filter rather than no kernel
        return f"libseccomp could not build the filter ({type(error).__name__}: {error})"
    if code is None:
        return f"no seccomp filter for this processor ({platform.machine()})"
    return ""
