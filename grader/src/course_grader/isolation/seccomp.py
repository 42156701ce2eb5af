"""A seccomp filter for the students' kernels: the system calls a notebook never needs and an
escape would, refused by the Linux kernel before they run.

The sandbox (:mod:`._bubblewrap`) already takes the kernel's capabilities and network away;
what is left to an attacker is the Linux kernel's own surface. Like Docker's default profile,
this filter refuses (``EPERM``) the calls that open most of it: new namespaces (``unshare``,
``setns``, ``clone`` with a ``CLONE_NEW*`` flag: a user namespace would give the notebook
capabilities of its own), tracing and reading other processes (``ptrace``,
``process_vm_readv``/``writev``), the kernel keyring, BPF programs, performance counters,
``userfaultfd``, ``io_uring``, mounting, kernel modules, ``kexec``, swap, ``reboot``,
``acct``, handles that bypass paths (``open_by_handle_at``), and on x86-64 the x32 ABI and
32-bit calls (which would take other numbers past the filter). ``clone3`` answers "not
implemented" (``ENOSYS``), so that the C library falls back to ``clone``, whose flags the
filter can read (``clone3`` passes them in memory, out of a filter's reach).

:func:`program` builds the classic BPF program by hand (no libseccomp needed) for x86-64 and
AArch64; elsewhere there is none, and :func:`unavailable` says so. bubblewrap installs it
(``--seccomp FD``) as the last step before the kernel starts.
"""

from __future__ import annotations

import atexit
import functools
import os
import platform
import struct
import tempfile

# seccomp's return values and BPF's instructions (linux/seccomp.h, linux/filter.h).
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM, _ENOSYS = 1, 38
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg 0: its low 32 bits)
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
_CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000
_CLONE_NEW |= 0x40000000

# name: (x86-64 number, AArch64 number)
_REFUSED = {
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "keyctl": (250, 219),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "unshare": (272, 97),
    "setns": (308, 268),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "acct": (163, 89),
}
_CLONE = (56, 220)
_CLONE3 = (435, 435)
_ARCHES = {"x86_64": (0xC000003E, 0), "amd64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1),
           "arm64": (0xC00000B7, 1)}  # fmt: skip
_X32 = 0x40000000  # x86-64: numbers from here are the x32 ABI


def _instruction(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one) as ``struct sock_filter`` records, or
    None where this module does not know the system call numbers."""
    machine = (machine or platform.machine()).lower()
    if machine not in _ARCHES:
        return None
    audit_arch, column = _ARCHES[machine]
    refused = sorted({numbers[column] for numbers in _REFUSED.values()})
    clone, clone3 = _CLONE[column], _CLONE3[column]
    # The checks first; then, in this order: ALLOW, EPERM, ENOSYS, and the test of clone's
    # flags. Every jump goes forward to one of them.
    body: list[tuple] = [(_LD_W_ABS, 0, 0, _ARCH), ("jeq_arch", audit_arch),
                         (_LD_W_ABS, 0, 0, _NR)]  # fmt: skip
    if column == 0:
        body.append(("jge_deny", _X32))
    body += [("jeq_deny", number) for number in refused]
    body += [("jeq_enosys", clone3), ("jeq_clone", clone)]
    size = len(body)
    where = {"allow": size, "deny": size + 1, "enosys": size + 2, "clone": size + 3}
    code = b""
    for index, item in enumerate(body):
        if isinstance(item[0], int):
            code += _instruction(*item)
            continue
        kind, value = item

        def jump(target: str, index: int = index) -> int:
            offset = where[target] - index - 1
            if not 0 <= offset < 256:
                raise ValueError("seccomp filter too long for a jump")
            return offset

        if kind == "jeq_arch":
            code += _instruction(_JEQ, 0, jump("deny"), value)
        elif kind == "jge_deny":
            code += _instruction(_JGE, jump("deny"), 0, value)
        elif kind == "jeq_deny":
            code += _instruction(_JEQ, jump("deny"), 0, value)
        elif kind == "jeq_enosys":
            code += _instruction(_JEQ, jump("enosys"), 0, value)
        elif kind == "jeq_clone":
            code += _instruction(_JEQ, jump("clone"), 0, value)
    code += _instruction(_RET, 0, 0, _ALLOW)
    code += _instruction(_RET, 0, 0, _ERRNO | _EPERM)
    code += _instruction(_RET, 0, 0, _ERRNO | _ENOSYS)
    code += _instruction(_LD_W_ABS, 0, 0, _ARG0)  # clone's flags
    code += _instruction(_JSET, 0, 1, _CLONE_NEW)  # a new namespace: the next line refuses
    code += _instruction(_RET, 0, 0, _ERRNO | _EPERM)
    code += _instruction(_RET, 0, 0, _ALLOW)
    return code


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


def unavailable() -> str:
    """Why the kernels get no seccomp filter here ("" if they do)."""
    if program() is None:
        return f"no seccomp filter for this processor ({platform.machine()})"
    return ""
