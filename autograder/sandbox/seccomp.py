"""No network for a worker, wherever the kernel filters system calls: a seccomp filter.

`install` runs in the worker's own process (`confine.confine_worker`), after
PR_SET_NO_NEW_PRIVS and before any code of the submission's: the kernel then keeps the filter
on that process and on everything it starts, forks, clones or execs, for good. The filter
refuses, with EPERM:

- `socket()`, for every family, AF_UNIX too: no TCP, UDP, IPv6, raw packet, netlink or vsock
  socket, and no connection to a Unix socket of the host's (a name in the abstract namespace
  that a process outside listens on, or a daemon's socket such as systemd-resolved's, which
  would look names up on the network for it);
- `socketpair()` but for AF_UNIX (a connected pair, which reaches nothing outside);
- `io_uring_setup`, `io_uring_enter` and `io_uring_register`: io_uring makes sockets and
  connects them itself, unseen by a filter of system calls;
- `pidfd_getfd`, `ptrace`, `process_vm_readv` and `process_vm_writev`: taking a descriptor
  from, or running code in, a process of the same account that has a network (at the limits
  level, every process of the grader's account);

and it kills a process that makes a system call through another ABI than the worker's own
(i386's `int 0x80`, or x32, on x86_64), whose numbers it does not check. Everything else is
allowed. It is built for x86_64, aarch64 and riscv64 (`program()` is None elsewhere).

`works()` says, once per process, whether a filter can be installed here at all (a kernel
without seccomp, or a container whose own filter refuses it, cannot): it installs one in a
small program of its own, which then must fail to open an AF_INET socket (`begin()` starts
that program early, in the background).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
import threading
from functools import cache

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO, SECCOMP_RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
AF_UNIX = 1
X32_SYSCALL_BIT = 0x40000000
# classic BPF: load a word of seccomp_data; jump if equal / greater or equal; return
LD_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
NR, ARCH, ARG0 = 0, 4, 16  # offsets in struct seccomp_data (ARG0: the low word, little-endian)

# Per architecture: its AUDIT_ARCH value, and the numbers of the calls the filter refuses. The
# generic table (aarch64, riscv64) and x86_64's differ only in the older calls.
_COMMON = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "pidfd_getfd": 438}
ARCHES = {
    "x86_64": (0xC000003E, {"socket": 41, "socketpair": 53, "ptrace": 101, "process_vm_readv": 310,
                            "process_vm_writev": 311, **_COMMON}),
    "aarch64": (0xC00000B7, {"socket": 198, "socketpair": 199, "ptrace": 117, "process_vm_readv": 270,
                             "process_vm_writev": 271, **_COMMON}),
    "riscv64": (0xC00000F3, {"socket": 198, "socketpair": 199, "ptrace": 117, "process_vm_readv": 270,
                             "process_vm_writev": 271, **_COMMON}),
}
REFUSED = ("socket", "io_uring_setup", "io_uring_enter", "io_uring_register", "pidfd_getfd", "ptrace",
           "process_vm_readv", "process_vm_writev")
PROBE_SECONDS = 30.0
# The probe: this file loaded by its path (nothing else of the kit), a filter installed, and
# then an AF_INET socket must be refused (EPERM) while a Unix socket pair is still made.
PROBE = ("import ctypes, importlib.util as u, sys\n"
         "s = u.spec_from_file_location('seccomp', sys.argv[1])\n"
         "m = u.module_from_spec(s)\n"
         "s.loader.exec_module(m)\n"
         "m.install()\n"
         "c = ctypes.CDLL(None, use_errno=True)\n"
         "pair = (ctypes.c_int * 2)()\n"
         "paired = c.socketpair(1, 1, 0, pair) == 0\n"
         "refused = c.socket(2, 1, 0) == -1 and ctypes.get_errno() == 1\n"
         "sys.exit(0 if paired and refused else 1)\n")


def _op(code: int, k: int, true: int = 0, false: int = 0) -> tuple[int, int, int, int]:
    return (code, true, false, k)


@cache
def program() -> bytes | None:
    """The filter for this machine's architecture, as struct sock_filter entries; None where the
    kit has no table of its system calls (or a 32-bit Python, or a big-endian machine)."""
    arch = os.uname().machine
    if arch not in ARCHES or struct.calcsize("P") != 8 or sys.byteorder != "little":
        return None
    audit, numbers = ARCHES[arch]
    refused = [numbers[name] for name in REFUSED]
    # Laid out as: the ABI checks, one test per refused call, the socketpair test, then the
    # three ends (allow, refuse, kill), which every jump counts its way to.
    head = [_op(LD_ABS, ARCH), ("arch", audit), _op(LD_ABS, NR)]
    if arch == "x86_64":
        head.append(("x32", X32_SYSCALL_BIT))
    tests = [("refuse", nr) for nr in refused] + [("pair", numbers["socketpair"])]
    pair = [_op(LD_ABS, ARG0), ("unix", AF_UNIX)]
    ends = [_op(RET, SECCOMP_RET_ALLOW), _op(RET, SECCOMP_RET_ERRNO | errno.EPERM),
            _op(RET, SECCOMP_RET_KILL_PROCESS)]
    entries = head + tests + [_op(RET, SECCOMP_RET_ALLOW)] + pair + ends
    allow, refuse, kill = len(entries) - 3, len(entries) - 2, len(entries) - 1
    pair_at = len(head) + len(tests) + 1
    code = bytearray()
    for index, entry in enumerate(entries):
        kind, after = entry[0], index + 1  # a jump's offsets count from the next entry
        if kind == "arch":  # the worker's own ABI, or killed
            entry = _op(JEQ, entry[1], 0, kill - after)
        elif kind == "x32":  # x32 calls share x86_64's AUDIT_ARCH: killed
            entry = _op(JGE, entry[1], kill - after, 0)
        elif kind == "refuse":
            entry = _op(JEQ, entry[1], refuse - after, 0)
        elif kind == "pair":
            entry = _op(JEQ, entry[1], pair_at - after, 0)
        elif kind == "unix":  # socketpair(AF_UNIX, ...) only
            entry = _op(JEQ, entry[1], allow - after, refuse - after)
        code += struct.pack("=HBBI", *entry)
    return bytes(code)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> None:
    """Install the filter on this process (and everything it will start), for good: OSError when
    the kernel refuses, or when this machine's architecture has no filter."""
    code = program()
    if code is None:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {os.uname().machine} here")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"prctl(PR_SET_SECCOMP): {os.strerror(number)}")


_probe: dict[str, object] = {}  # the probe of this process, once started: its process, then its verdict
_probe_lock = threading.Lock()


def begin() -> None:
    """Start this process's probe (`works`) in the background, if it has not started."""
    import subprocess  # here: the keeper and the worker, which import this module, never need it

    with _probe_lock:
        if _probe or program() is None:
            return
        try:
            _probe["process"] = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", "-c", PROBE, os.path.abspath(__file__)], cwd="/", env={},
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            _probe["verdict"] = False


def works() -> bool:
    """Can a worker here have the filter? Tried once per process, in a program of its own (begun
    by `begin`, or now)."""
    import subprocess

    if program() is None:
        return False
    begin()
    with _probe_lock:
        if "verdict" not in _probe:
            process = _probe["process"]
            try:
                _probe["verdict"] = process.wait(PROBE_SECONDS) == 0
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                _probe["verdict"] = False
        return bool(_probe["verdict"])
