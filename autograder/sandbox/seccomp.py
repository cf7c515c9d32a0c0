"""What a worker may ask of the kernel: an allow-list of system calls, as a seccomp filter.

`install` runs in the worker's own process (`confine.confine_worker`), after
PR_SET_NO_NEW_PRIVS and before any code of the submission's: the kernel then keeps the filter
on that process and on everything it starts, forks, clones or execs, for good. The filter
allows the calls of `ALLOWED` and nothing else:

- `ALLOWED` is Docker's default profile (moby's profiles/seccomp/default.json: what it allows a
  container with no capability) less every call that reaches past the worker: the network
  (`socket`, `connect`, `bind`, `listen`, `accept`: no socket of any family, AF_UNIX included,
  so no name in the abstract namespace and no daemon's socket of the host), kernel keyrings
  (Docker refuses them too), System V IPC and POSIX message queues, inotify and fanotify,
  Linux AIO, and the calls that change the filter or the process's personality. What is left
  is what Python and NumPy ask for (strace over the reference and the engines of
  tests/engines, every scenario of every suite) and what the standard library does for honest
  code that a correct engine may run (threads, sleeps, files, a subprocess);
- `socketpair()` is allowed for AF_UNIX only (a connected pair reaches nothing outside), and
  `clone()` without a flag that makes a namespace; `clone3()` says ENOSYS, as in Docker's
  profile, so that the C library falls back on `clone()`, whose flags the filter can read;
- the calls of `KILLED` kill the process: ways into another process's memory or descriptors
  (`ptrace`, `process_vm_*`, `pidfd_getfd`, `kcmp`), io_uring (which makes sockets unseen by a
  filter of system calls), `bpf`, `perf_event_open`, `userfaultfd` and the kernel's modules;
- every other call, known or added in a later kernel, is refused with EPERM;
- a call through another ABI than the worker's own (i386's `int 0x80`, x32) kills it.

The filter is compiled once per grading process by libseccomp (its Python interface,
`pyseccomp`, of the kit's `staff` extra, over the system's `libseccomp.so.2`), and its BPF travels to
the keeper in the worker's plan: the worker installs finished bytes. `program()` is None where
libseccomp is missing, and `works()` says, once per process, whether a filter can be installed
here at all (a kernel without seccomp, or a container whose own filter refuses it, cannot): it
installs one in a small program of its own, which then must fail to open an AF_INET socket
(`begin()` starts that program early, in the background).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import sys
import tempfile
import threading
from functools import cache

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
AF_UNIX = 1
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: Docker's mask for clone()
CLONE_NAMESPACES = 0x7E020000
OTHER_ABI_ACTION = 0x80000000  # SECCOMP_RET_KILL_PROCESS: what a call through another ABI meets
OPTIMIZE_TREE = 2  # libseccomp 2.5's binary tree of call numbers, in place of a linear list

# Docker's default profile, less what reaches past the worker (see above), by what it is for.
ALLOWED_BY_USE = {
    "files": """read write readv writev pread64 pwrite64 preadv preadv2 pwritev pwritev2 lseek _llseek
        open openat openat2 creat close close_range dup dup2 dup3 fcntl fcntl64 ioctl flock
        stat stat64 lstat lstat64 fstat fstat64 fstatat64 newfstatat statx statfs statfs64 fstatfs
        fstatfs64 access faccessat faccessat2 readlink readlinkat getdents getdents64 getcwd chdir
        fchdir mkdir mkdirat rmdir unlink unlinkat rename renameat renameat2 link linkat symlink
        symlinkat mknod mknodat chmod fchmod fchmodat chown chown32 fchown fchown32 fchownat lchown
        lchown32 truncate truncate64 ftruncate ftruncate64 fallocate fadvise64 fadvise64_64
        readahead fsync fdatasync sync syncfs sync_file_range umask utime utimes utimensat
        utimensat_time64 futimesat getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr
        setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr""",
    "pipes and waiting on descriptors": """sendfile sendfile64 copy_file_range splice tee vmsplice
        pipe pipe2 select _newselect pselect6 pselect6_time64 poll ppoll ppoll_time64 epoll_create
        epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 eventfd eventfd2 signalfd
        signalfd4 timerfd_create timerfd_settime timerfd_settime64 timerfd_gettime timerfd_gettime64""",
    "memory": """brk mmap mmap2 munmap mremap mprotect madvise mincore msync remap_file_pages
        mlock mlock2 munlock mlockall munlockall membarrier memfd_create""",
    "processes and threads": """execve execveat fork vfork exit exit_group wait4 waitid waitpid
        futex futex_time64 futex_waitv set_robust_list get_robust_list set_tid_address rseq
        arch_prctl set_thread_area get_thread_area prctl riscv_flush_icache getpid getppid gettid
        getpgid getpgrp setpgid getsid setsid kill tkill tgkill pidfd_open pidfd_send_signal""",
    "identity and limits": """getuid getuid32 geteuid geteuid32 getgid getgid32 getegid getegid32
        getresuid getresuid32 getresgid getresgid32 getgroups getgroups32 setuid setuid32 setgid
        setgid32 setreuid setreuid32 setregid setregid32 setresuid setresuid32 setresgid
        setresgid32 setgroups setgroups32 setfsuid setfsuid32 setfsgid setfsgid32 capget capset
        getrlimit ugetrlimit setrlimit prlimit64 getrusage times sysinfo uname getcpu getrandom
        getpriority setpriority ioprio_get ioprio_set""",
    "scheduling": """sched_yield sched_getaffinity sched_setaffinity sched_getparam sched_setparam
        sched_getscheduler sched_setscheduler sched_getattr sched_setattr sched_get_priority_max
        sched_get_priority_min sched_rr_get_interval sched_rr_get_interval_time64""",
    "signals and time": """rt_sigaction rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigpending
        rt_sigtimedwait rt_sigtimedwait_time64 rt_sigqueueinfo rt_tgsigqueueinfo sigaltstack
        sigreturn sigprocmask restart_syscall pause alarm getitimer setitimer nanosleep
        clock_nanosleep clock_nanosleep_time64 clock_gettime clock_gettime64 clock_getres
        clock_getres_time64 gettimeofday time timer_create timer_settime timer_settime64
        timer_gettime timer_gettime64 timer_getoverrun timer_delete""",
    "a socket pair's ends": """getsockname getpeername getsockopt setsockopt sendto sendmsg recvfrom
        recvmsg shutdown""",
}
ALLOWED = frozenset(" ".join(ALLOWED_BY_USE.values()).split())
KILLED = frozenset(" ".join((
    "ptrace process_vm_readv process_vm_writev pidfd_getfd kcmp process_madvise",  # another process
    "io_uring_setup io_uring_enter io_uring_register bpf perf_event_open userfaultfd",
    "init_module finit_module delete_module kexec_load kexec_file_load",
)).split())
PROBE_SECONDS = 30.0
# The probe: this file loaded by its path (nothing else of the kit), the filter (in hex on its
# standard input) installed, and then an AF_INET socket must be refused (EPERM) while a Unix
# socket pair is still made.
PROBE = ("import ctypes, importlib.util as u, sys\n"
         "s = u.spec_from_file_location('seccomp', sys.argv[1])\n"
         "m = u.module_from_spec(s)\n"
         "s.loader.exec_module(m)\n"
         "m.install(bytes.fromhex(sys.stdin.read()))\n"
         "c = ctypes.CDLL(None, use_errno=True)\n"
         "pair = (ctypes.c_int * 2)()\n"
         "paired = c.socketpair(1, 1, 0, pair) == 0\n"
         "refused = c.socket(2, 1, 0) == -1 and ctypes.get_errno() == 1\n"
         "sys.exit(0 if paired and refused else 1)\n")


@cache
def program() -> bytes | None:
    """The filter for this machine, as struct sock_filter entries compiled by libseccomp; None
    where libseccomp (or its Python interface) is missing."""
    try:
        import pyseccomp as libseccomp  # noqa: PLC0415 - the grader's alone: no worker imports it
    except (ImportError, OSError, RuntimeError):  # RuntimeError: no libseccomp.so.2 here
        return None
    with contextlib.suppress(OSError):
        return _compile(libseccomp)
    return None


def _compile(libseccomp) -> bytes:  # noqa: ANN001 - the pyseccomp module
    rules = libseccomp.SyscallFilter(libseccomp.ERRNO(errno.EPERM))
    rules.set_attr(libseccomp.Attr.ACT_BADARCH, OTHER_ABI_ACTION)
    with contextlib.suppress(OSError):  # a libseccomp older than 2.5 keeps a list
        rules.set_attr(libseccomp.Attr.CTL_OPTIMIZE, OPTIMIZE_TREE)

    def add(action: int, name: str, *args: object) -> None:
        if libseccomp.resolve_syscall(libseccomp.Arch.NATIVE, name) >= 0:  # a call of this arch
            rules.add_rule(action, name, *args)

    for name in sorted(ALLOWED):
        add(libseccomp.ALLOW, name)
    for name in sorted(KILLED):
        add(libseccomp.KILL_PROCESS, name)
    add(libseccomp.ALLOW, "socketpair", libseccomp.Arg(0, libseccomp.EQ, AF_UNIX))
    add(libseccomp.ALLOW, "clone", libseccomp.Arg(0, libseccomp.MASKED_EQ, CLONE_NAMESPACES, 0))
    add(libseccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as exported:
        rules.export_bpf(exported)
        exported.seek(0)
        return exported.read()


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(code: bytes) -> None:
    """Install the filter `code` (`program()`'s bytes) on this process (and everything it will
    start), for good: OSError when the kernel refuses."""
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
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", "-c", PROBE, os.path.abspath(__file__)], cwd="/", env={},
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            process.stdin.write(program().hex().encode())  # a few KB: far less than a pipe holds
            process.stdin.close()
            _probe["process"] = process
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


def plan_program() -> str:
    """The filter for a worker's plan, in hex: empty where no filter can be installed here."""
    return program().hex() if works() else ""
