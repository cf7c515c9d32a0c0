"""The worker's seccomp filter, call by call: what it allows, refuses and kills, and other ABIs.

The filter's program is run here by an interpreter of classic BPF (the kernel's, for the
instructions libseccomp emits) on every system call number of this machine's table, and the
verdict of each is held against this file's own table, written apart from the filter's:
dropping any allowed or killed call, allowing one more, or changing a jump that moves a verdict
fails `test_every_call_gets_its_verdict`. Then the kernel is asked: a process with the filter
makes each call of `PROBES` for real (a keyring, System V IPC, a message queue, io_uring, another
process's memory, sockets, `socket()` through i386's `int 0x80` and through x32), each in a
child of its own, and must be refused (EPERM), told ENOSYS, or killed, as the table says.
`test_the_tests_fail_on_a_weaker_filter` builds the filters that once passed every test of the
network (i386 let through, io_uring and process_vm_* allowed) and checks that both tests see it.
"""

from __future__ import annotations

import errno
import json
import os
import struct
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from autograder.sandbox import seccomp

KIT = Path(__file__).resolve().parents[2]
libseccomp = pytest.importorskip("pyseccomp", reason="libseccomp's Python interface (the staff extra)")
pytestmark = pytest.mark.skipif(seccomp.program() is None, reason="no libseccomp here to build the filter")



def names(text: str) -> set[str]:
    return set(text.split())


ALLOW, KILL = 0x7FFF0000, 0x80000000
EPERM, ENOSYS = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "riscv64": 0xC00000F3}
OTHER_ABIS = {"x86_64": [0x40000003], "aarch64": [0x40000028], "riscv64": []}  # i386, arm (EABI)
X32_SYSCALL_BIT = 0x40000000

# What a worker may call: each is made by a worker's Python, NumPy or the scenarios (strace over
# the reference and the engines of tests/engines, every suite), or by the standard library for
# honest code (threads, sleeps, files, a subprocess). Calls this machine's table lacks are skipped.
ALLOWED = names("""
    read write readv writev pread64 pwrite64 preadv preadv2 pwritev pwritev2 lseek
    open openat openat2 creat close close_range dup dup2 dup3 fcntl ioctl flock
    stat lstat fstat newfstatat statx statfs fstatfs access faccessat faccessat2 readlink readlinkat
    getdents getdents64 getcwd chdir fchdir mkdir mkdirat rmdir unlink unlinkat rename renameat
    renameat2 link linkat symlink symlinkat mknod mknodat chmod fchmod fchmodat chown fchown fchownat
    lchown truncate ftruncate fallocate fadvise64 readahead fsync fdatasync sync syncfs
    sync_file_range umask utime utimes utimensat futimesat getxattr lgetxattr fgetxattr listxattr
    llistxattr flistxattr setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr
    sendfile copy_file_range splice tee vmsplice pipe pipe2 select pselect6 poll ppoll
    epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 eventfd eventfd2
    signalfd signalfd4 timerfd_create timerfd_settime timerfd_gettime
    brk mmap munmap mremap mprotect madvise mincore msync remap_file_pages mlock mlock2 munlock
    mlockall munlockall membarrier memfd_create
    execve execveat fork vfork exit exit_group wait4 waitid futex futex_waitv set_robust_list
    get_robust_list set_tid_address rseq arch_prctl set_thread_area get_thread_area prctl
    riscv_flush_icache getpid getppid gettid getpgid getpgrp setpgid getsid setsid kill tkill tgkill
    pidfd_open pidfd_send_signal
    getuid geteuid getgid getegid getresuid getresgid getgroups setuid setgid setreuid setregid
    setresuid setresgid setgroups setfsuid setfsgid capget capset getrlimit setrlimit prlimit64
    getrusage times sysinfo uname getcpu getrandom getpriority setpriority ioprio_get ioprio_set
    sched_yield sched_getaffinity sched_setaffinity sched_getparam sched_setparam sched_getscheduler
    sched_setscheduler sched_getattr sched_setattr sched_get_priority_max sched_get_priority_min
    sched_rr_get_interval
    rt_sigaction rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigpending rt_sigtimedwait
    rt_sigqueueinfo rt_tgsigqueueinfo sigaltstack restart_syscall pause alarm getitimer setitimer
    nanosleep clock_nanosleep clock_gettime clock_getres gettimeofday time
    timer_create timer_settime timer_gettime timer_getoverrun timer_delete
    getsockname getpeername getsockopt setsockopt sendto sendmsg recvfrom recvmsg shutdown
""")
# Killed: into another process, io_uring (sockets unseen by the filter), the kernel's own machinery.
KILLED = names("""
    ptrace process_vm_readv process_vm_writev pidfd_getfd kcmp process_madvise
    io_uring_setup io_uring_enter io_uring_register bpf perf_event_open userfaultfd
    init_module finit_module delete_module kexec_load kexec_file_load
""")
# Refused with EPERM, named so that no change of the default lets one through: the network, what
# processes share outside the file system, and what a namespace or a mount would change.
REFUSED = names("""
    socket connect bind listen accept accept4 recvmmsg sendmmsg socketcall
    add_key keyctl request_key
    shmget shmat shmdt shmctl msgget msgsnd msgrcv msgctl semget semop semtimedop semctl ipc
    mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
    inotify_init inotify_init1 inotify_add_watch inotify_rm_watch fanotify_init fanotify_mark
    io_setup io_submit io_getevents io_cancel io_destroy io_pgetevents
    unshare setns mount umount2 pivot_root chroot open_tree move_mount fsopen fsconfig fsmount fspick
    name_to_handle_at open_by_handle_at personality seccomp landlock_create_ruleset
    landlock_add_rule landlock_restrict_self memfd_secret pkey_alloc pkey_free pkey_mprotect
    modify_ldt swapon swapoff reboot sethostname setdomainname syslog acct quotactl
    settimeofday clock_settime clock_adjtime adjtimex iopl ioperm vhangup lookup_dcookie
    process_mrelease
""")
# What the workers called (strace -f over `pytest autograder` on solutions/ and `autograder bulk`
# on the 57 engines of tests/engines, each with solutions/ for its other files: every scenario of
# every suite at the public seed and at a secret one, forked and exec'd workers, failures and
# timeouts): each must be allowed.
TRACED = names("""
    access arch_prctl brk clock_nanosleep clone close close_range dup2 execve exit exit_group fcntl
    futex getcwd getdents64 getpid getrandom gettid ioctl kill lseek madvise mmap mprotect mremap
    munmap newfstatat openat prctl pread64 prlimit64 pselect6 read readlink rseq rt_sigaction
    rt_sigprocmask rt_sigreturn sched_getaffinity set_robust_list set_tid_address setitimer sysinfo
    wait4 write
""")
CLONE_NEWUSER = 0x10000000
SIGCHLD = 17


def decode(code: bytes) -> Program:
    """A filter's instructions: (op, jump if true, jump if false, k)."""
    return [struct.unpack_from("<HBBI", code, at) for at in range(0, len(code), 8)]


Program = list[tuple[int, int, int, int]]


def run(program: Program, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """The filter's verdict on one call (struct seccomp_data: nr, arch, ip, args)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    a = x = pc = 0
    memory = [0] * 16
    while True:
        op, jt, jf, k = program[pc]
        pc += 1
        if op == 0x20:  # ld [k]
            a = struct.unpack_from("<I", data, k)[0]
        elif op == 0x00:  # ld #k
            a = k
        elif op in (0x60, 0x61):  # ld M[k], ldx M[k]
            a, x = (memory[k], x) if op == 0x60 else (a, memory[k])
        elif op in (0x02, 0x03):  # st M[k], stx M[k]
            memory[k] = a if op == 0x02 else x
        elif op == 0x54:  # and #k
            a &= k
        elif op == 0x44:  # or #k
            a |= k
        elif op == 0x05:  # ja k
            pc += k
        elif op in (0x15, 0x25, 0x35, 0x45):  # jeq, jgt, jge, jset #k
            taken = {0x15: a == k, 0x25: a > k, 0x35: a >= k, 0x45: bool(a & k)}[op]
            pc += jt if taken else jf
        elif op == 0x06:  # ret #k
            return k
        else:
            raise AssertionError(f"an instruction this interpreter does not know: {op:#x}")


def expected(name: str) -> int:
    if name in ALLOWED:
        return ALLOW
    return KILL if name in KILLED else ENOSYS if name == "clone3" else EPERM


@cache
def numbers() -> dict[int, str]:
    """Every call of this machine's table: its number and name."""
    found = {}
    for number in range(1024):
        try:
            found[number] = libseccomp.resolve_syscall(libseccomp.Arch.NATIVE, number).decode()
        except ValueError:
            continue
    return found


def wrong_verdicts(code: bytes) -> dict[str, str]:
    """Every call (and ABI) whose verdict under `code` is not the table's, with both verdicts."""
    machine = os.uname().machine
    arch = AUDIT_ARCH[machine]
    program = decode(code)
    wrong = {}
    for number, name in numbers().items():
        if name in ("socketpair", "clone"):
            continue
        if (got := run(program, number, arch)) != expected(name):
            wrong[name] = f"{got:#x}, not {expected(name):#x}"
    nr = {name: number for number, name in numbers().items()}
    cases = {"socketpair AF_UNIX": (nr["socketpair"], (1, 1, 0, 0, 0, 0), ALLOW),
             "socketpair AF_INET": (nr["socketpair"], (2, 1, 0, 0, 0, 0), EPERM),
             "clone of a thread": (nr["clone"], (0x3D0F00, 0, 0, 0, 0, 0), ALLOW),
             "clone of a process": (nr["clone"], (SIGCHLD, 0, 0, 0, 0, 0), ALLOW),
             "clone into a user namespace": (nr["clone"], (CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0, 0), EPERM),
             "a number no kernel has": (1000, (0,) * 6, EPERM)}
    for what, (number, args, verdict) in cases.items():
        if (got := run(program, number, arch, args)) != verdict:
            wrong[what] = f"{got:#x}, not {verdict:#x}"
    for other in OTHER_ABIS[machine]:
        if (got := run(program, 41, other)) != KILL:
            wrong[f"the ABI {other:#x}"] = f"{got:#x}, not killed"
    if machine == "x86_64" and (got := run(program, X32_SYSCALL_BIT | 41, arch)) != KILL:
        wrong["x32"] = f"{got:#x}, not killed"
    return wrong


def test_every_call_gets_its_verdict():
    """Every call of this machine's table, allowed, killed, ENOSYS or EPERM as this file says;
    socketpair for AF_UNIX only, clone without a namespace only; other ABIs killed."""
    assert wrong_verdicts(seccomp.program()) == {}


def test_every_call_a_worker_was_seen_to_make_is_allowed():
    program = decode(seccomp.program())
    arch = AUDIT_ARCH[os.uname().machine]
    number = {name: nr for nr, name in numbers().items()}
    process = (SIGCHLD, 0, 0, 0, 0, 0)  # clone's flags: a process forked
    assert {name for name in TRACED if run(program, number[name], arch, process) != ALLOW} == set()


def test_the_table_names_only_real_calls_and_each_once():
    """A misspelt name would be allowed or killed nowhere; a name in two lists, in one only."""
    known = set(numbers().values()) | {name for name in ALLOWED | KILLED | REFUSED
                                        if libseccomp.resolve_syscall(libseccomp.Arch.NATIVE, name) < 0
                                        and libseccomp.resolve_syscall(libseccomp.Arch.X86, name) >= 0}
    for names in (ALLOWED, KILLED, REFUSED, seccomp.ALLOWED, seccomp.KILLED):
        assert not {name for name in names if libseccomp.resolve_syscall(libseccomp.Arch.NATIVE, name) >= 0
                    and name not in known}
    assert not (ALLOWED & KILLED) and not (ALLOWED & REFUSED) and not (KILLED & REFUSED)
    assert not (seccomp.ALLOWED & seccomp.KILLED)


# -- the kernel, asked -------------------------------------------------------------------------------

# Run with the filter's hex on its standard input: each call in a child of its own; prints
# {what: "allowed" | errno's name | "killed by <signal>"}.
PROBES = r"""
import ctypes, errno, json, mmap, os, signal, sys
import pyseccomp
sys.path.insert(0, sys.argv[1])
from autograder.sandbox import seccomp
libc = ctypes.CDLL(None, use_errno=True)
nr = lambda name: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
pair = (ctypes.c_int * 2)()
buffer = ctypes.create_string_buffer(4096)

def i386_socket():  # socket(AF_INET, SOCK_STREAM, 0) through int 0x80: i386's number 359
    code = bytes.fromhex("53b867010000bb02000000b90100000031d2cd805bc3")
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    result = ctypes.CFUNCTYPE(ctypes.c_int)(address)()
    return result if result >= 0 else (ctypes.set_errno(-result), -1)[1]

calls = {
    "socket AF_INET": lambda: libc.socket(2, 1, 0),
    "socket AF_UNIX": lambda: libc.socket(1, 1, 0),
    "socketpair AF_UNIX": lambda: libc.socketpair(1, 1, 0, pair),
    "socketpair AF_INET": lambda: libc.socketpair(2, 1, 0, pair),
    "add_key": lambda: libc.syscall(nr("add_key"), b"user", b"relay", b"answers", 7, -3),
    "keyctl": lambda: libc.syscall(nr("keyctl"), 0, -3, 1),
    "request_key": lambda: libc.syscall(nr("request_key"), b"user", b"relay", None, 0),
    "shmget": lambda: libc.syscall(nr("shmget"), 0, 4096, 0o1600),
    "msgget": lambda: libc.syscall(nr("msgget"), 0, 0o1600),
    "semget": lambda: libc.syscall(nr("semget"), 0, 1, 0o1600),
    "mq_open": lambda: libc.syscall(nr("mq_open"), b"relay", 0o102, 0o600, None),
    "unshare": lambda: libc.syscall(nr("unshare"), 0x10000000),
    "clone3": lambda: libc.syscall(nr("clone3"), buffer, 88),
    "userfaultfd": lambda: libc.syscall(nr("userfaultfd"), 0),
    "perf_event_open": lambda: libc.syscall(nr("perf_event_open"), buffer, 0, -1, -1, 0),
    "bpf": lambda: libc.syscall(nr("bpf"), 0, buffer, 48),
    "io_uring_setup": lambda: libc.syscall(nr("io_uring_setup"), 1, buffer),
    "io_uring_enter": lambda: libc.syscall(nr("io_uring_enter"), 0, 0, 0, 0, None, 0),
    "io_uring_register": lambda: libc.syscall(nr("io_uring_register"), 0, 0, None, 0),
    "process_vm_readv": lambda: libc.syscall(nr("process_vm_readv"), os.getppid(), None, 0, None, 0, 0),
    "process_vm_writev": lambda: libc.syscall(nr("process_vm_writev"), os.getppid(), None, 0, None, 0, 0),
    "ptrace": lambda: libc.syscall(nr("ptrace"), 16, os.getppid(), 0, 0),
    "pidfd_getfd": lambda: libc.syscall(nr("pidfd_getfd"), 0, 0, 0),
    "getpid": lambda: libc.syscall(nr("getpid")),
    "pipe2": lambda: libc.pipe2(pair, 0),
    "sched_yield": lambda: libc.sched_yield(),
}
if os.uname().machine == "x86_64":
    calls["socket through i386"] = i386_socket
    calls["socket through x32"] = lambda: libc.syscall(0x40000000 | 41, 2, 1, 0)
seccomp.install(bytes.fromhex(sys.stdin.read()))
said = {}
for what, call in calls.items():
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        result = call()
        os.write(write, b"allowed" if result >= 0 else errno.errorcode[ctypes.get_errno()].encode())
        os._exit(0)
    os.close(write)
    status = os.waitpid(child, 0)[1]
    told = os.read(read, 64).decode()
    os.close(read)
    said[what] = f"killed by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status) else told
print(json.dumps(said))
"""
KERNEL_SAYS = {
    "socket AF_INET": "EPERM", "socket AF_UNIX": "EPERM", "socketpair AF_UNIX": "allowed",
    "socketpair AF_INET": "EPERM", "add_key": "EPERM", "keyctl": "EPERM", "request_key": "EPERM",
    "shmget": "EPERM", "msgget": "EPERM", "semget": "EPERM", "mq_open": "EPERM", "unshare": "EPERM",
    "clone3": "ENOSYS", "getpid": "allowed", "pipe2": "allowed", "sched_yield": "allowed",
    **{name: "killed by SIGSYS" for name in ("userfaultfd", "perf_event_open", "bpf", "io_uring_setup",
                                               "io_uring_enter", "io_uring_register", "process_vm_readv",
                                               "process_vm_writev", "ptrace", "pidfd_getfd")},
    **({"socket through i386": "killed by SIGSYS", "socket through x32": "killed by SIGSYS"}
       if os.uname().machine == "x86_64" else {}),
}


def kernel_verdicts(code: bytes) -> dict[str, str]:
    run = subprocess.run([sys.executable, "-c", PROBES, str(KIT)], input=code.hex(), capture_output=True,
                         text=True, timeout=120, cwd="/")
    assert run.stdout.strip(), run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.skipif(not seccomp.works(), reason="this machine cannot install a seccomp filter")
def test_the_kernel_refuses_kills_and_allows_as_the_table_says():
    assert kernel_verdicts(seccomp.program()) == KERNEL_SAYS


# -- the tests above, against the filters that once passed every test --------------------------------

def weaker(monkeypatch, *, other_abis: int | None = None, allow: tuple[str, ...] = (),
           unkill: tuple[str, ...] = ()) -> bytes:
    """The filter compiled with another ABI's action, more calls allowed, or fewer killed."""
    if other_abis is not None:
        monkeypatch.setattr(seccomp, "OTHER_ABI_ACTION", other_abis)
    monkeypatch.setattr(seccomp, "ALLOWED", seccomp.ALLOWED | set(allow))
    monkeypatch.setattr(seccomp, "KILLED", seccomp.KILLED - set(unkill) - set(allow))
    return seccomp._compile(libseccomp)


@pytest.mark.skipif(not seccomp.works() or os.uname().machine != "x86_64", reason="i386 is x86_64's")
def test_the_tests_fail_on_a_weaker_filter(monkeypatch):
    """i386 let through, io_uring_enter and process_vm_readv allowed, keyctl allowed: each is
    seen by the table's test and by the kernel's."""
    through = weaker(monkeypatch, other_abis=ALLOW)
    assert "the ABI 0x40000003" in wrong_verdicts(through)
    assert kernel_verdicts(through)["socket through i386"] == "allowed"
    monkeypatch.undo()
    holes = weaker(monkeypatch, allow=("io_uring_enter", "process_vm_readv", "keyctl"))
    assert {"io_uring_enter", "process_vm_readv", "keyctl"} <= set(wrong_verdicts(holes))
    said = kernel_verdicts(holes)
    assert said["io_uring_enter"] != "killed by SIGSYS" and said["process_vm_readv"] != "killed by SIGSYS"
    assert said["keyctl"] != "EPERM"
    monkeypatch.undo()
    dropped = weaker(monkeypatch, unkill=("io_uring_register",))
    assert set(wrong_verdicts(dropped)) == {"io_uring_register"}


def test_every_jump_decides_a_verdict():
    """Each conditional jump of the program, its two ways swapped, moves some verdict of the table."""
    code = seccomp.program()
    kept = []
    for at in range(0, len(code), 8):
        op, jt, jf, k = struct.unpack_from("<HBBI", code, at)
        if op in (0x15, 0x25, 0x35, 0x45) and jt != jf:
            swapped = code[:at] + struct.pack("<HBBI", op, jf, jt, k) + code[at + 8:]
            if not wrong_verdicts(swapped):
                kept.append(at // 8)
    assert kept == []
