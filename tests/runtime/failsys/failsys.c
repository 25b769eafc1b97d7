/* SPDX-License-Identifier: MIT */
/*
 * failsys.c — an LD_PRELOAD shim that makes the Nth call of one libc
 * function fail, for the runtime's syscall-failure paths.
 *
 *   FAILSYS=<function>:<n>:<errno name>[:parent|:child]
 *   FAILSYS_LOG=<file>   one line appended each time a failure is injected:
 *                        "<function> <n> <pid> parent|child"
 *
 * Only calls made from libmpfworker's own code are counted (the return
 * address lies in that object), so the test program, libc's internals and
 * the fixture are never failed and N means the same thing on every run.
 * Counting is per process: the process that was exec'ed ("parent") counts
 * from its start, every forked process ("child": a child of the tree, a
 * nested worker's children, a grandchild) counts from its fork. Without a
 * role the Nth call fails in every process; with one only in that role.
 * The function keeps failing only once per process: the Nth call, not the
 * ones after it.
 *
 * malloc, calloc and realloc are wrapped too (ENOMEM). They call
 * glibc's own allocator (__libc_malloc…), never dlsym, which allocates.
 *
 * In a coverage build the gcov runtime is linked into libmpfworker, so its
 * calls come from that object too; it does not survive a failed malloc.
 * Before it writes the counters (at exit, and in a child before _exit) it
 * reads GCOV_PREFIX: from that getenv on, the process counts nothing.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* The object whose calls count (a substring of its path). */
#define COUNTED_OBJECT "libmpfworker"

enum role { ROLE_ANY, ROLE_PARENT, ROLE_CHILD };

static struct {
    bool armed;
    char fn[32];
    unsigned long n;
    int err;
    enum role role;
    char log[512];
} spec;

static unsigned long calls; /* of spec.fn in this process */
static pid_t exec_pid;      /* the process that was exec'ed */
static uintptr_t lo, hi;    /* the counted object's mapped range */

static const struct {
    const char *name;
    int value;
} errnos[] = {
    { "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM }, { "EMFILE", EMFILE },
    { "ENFILE", ENFILE }, { "ENOSPC", ENOSPC }, { "EINVAL", EINVAL },
    { "EPERM", EPERM },   { "ENOSYS", ENOSYS }, { "EACCES", EACCES },
    { "EIO", EIO },       { "EINTR", EINTR },   { "ESRCH", ESRCH },
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, COUNTED_OBJECT))
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (!lo || a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    return 1;
}

__attribute__((noreturn)) static void bad_spec(const char *what)
{
    char m[256];
    int len = snprintf(m, sizeof(m), "failsys: bad FAILSYS (%s)\n", what);
    ssize_t r = write(2, m, (size_t)len < sizeof(m) ? (size_t)len : sizeof(m));
    (void)r;
    _exit(125);
}

static void reset_in_child(void)
{
    calls = 0;
}

__attribute__((constructor)) static void failsys_init(void)
{
    const char *s = getenv("FAILSYS"), *log = getenv("FAILSYS_LOG");
    char buf[128], *save = NULL, *fn, *n, *err, *role;

    exec_pid = getpid();
    if (!s || !*s)
        return;
    snprintf(buf, sizeof(buf), "%s", s);
    fn = strtok_r(buf, ":", &save);
    n = strtok_r(NULL, ":", &save);
    err = strtok_r(NULL, ":", &save);
    role = strtok_r(NULL, ":", &save);
    if (!fn || !n || !err)
        bad_spec(s);
    snprintf(spec.fn, sizeof(spec.fn), "%s", fn);
    spec.n = strtoul(n, NULL, 10);
    for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
        if (strcmp(errnos[i].name, err) == 0)
            spec.err = errnos[i].value;
    if (!spec.n || !spec.err)
        bad_spec(s);
    if (!role)
        spec.role = ROLE_ANY;
    else if (strcmp(role, "parent") == 0)
        spec.role = ROLE_PARENT;
    else if (strcmp(role, "child") == 0)
        spec.role = ROLE_CHILD;
    else
        bad_spec(s);
    snprintf(spec.log, sizeof(spec.log), "%s", log ? log : "");
    dl_iterate_phdr(find_object, NULL);
    if (!lo)
        bad_spec("no " COUNTED_OBJECT " in the process");
    pthread_atfork(NULL, NULL, reset_in_child);
    spec.armed = true;
}

/* True when this call (from `caller`) of `fn` is the one to fail; errno is
   then set. Async-signal-safe (fork may be called with signals blocked,
   in a child after fork). */
static bool should_fail(const char *fn, const void *caller)
{
    uintptr_t a = (uintptr_t)caller;
    bool child;

    if (!spec.armed || a < lo || a >= hi || strcmp(fn, spec.fn) != 0)
        return false;
    if (__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) != spec.n)
        return false;
    child = getpid() != exec_pid;
    if ((spec.role == ROLE_PARENT && child) ||
        (spec.role == ROLE_CHILD && !child))
        return false;
    if (spec.log[0]) {
        char line[96];
        int len = snprintf(line, sizeof(line), "%s %lu %d %s\n", fn, spec.n,
                           (int)getpid(), child ? "child" : "parent");
        int fd = (int)syscall(SYS_openat, AT_FDCWD, spec.log,
                              O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) {
            ssize_t r = write(fd, line, (size_t)len);
            (void)r;
            close(fd);
        }
    }
    errno = spec.err;
    return true;
}

/* fn is a function name: taken the address of and stringized. */
/* NOLINTNEXTLINE(bugprone-macro-parentheses) */
#define REAL(fn) ((__typeof__(&fn))dlsym(RTLD_NEXT, #fn))
#define CALLER __builtin_return_address(0)

/* The gcov runtime's first step when it writes its counters. */
char *getenv(const char *name)
{
    extern char **environ;
    uintptr_t a = (uintptr_t)CALLER;
    size_t n = strlen(name);

    if (spec.armed && a >= lo && a < hi && strncmp(name, "GCOV_", 5) == 0)
        spec.armed = false;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (should_fail("mmap", CALLER))
        return MAP_FAILED;
    return REAL(mmap)(addr, len, prot, flags, fd, off);
}

int shm_open(const char *name, int oflag, mode_t mode)
{
    if (should_fail("shm_open", CALLER))
        return -1;
    return REAL(shm_open)(name, oflag, mode);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    if (should_fail("posix_fallocate", CALLER))
        return errno; /* returns the error, errno untouched by contract */
    return REAL(posix_fallocate)(fd, off, len);
}

pid_t fork(void)
{
    if (should_fail("fork", CALLER))
        return -1;
    return REAL(fork)();
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                   void *(*start)(void *), void *arg)
{
    if (should_fail("pthread_create", CALLER))
        return errno;
    return REAL(pthread_create)(th, attr, start, arg);
}

int eventfd(unsigned int initval, int flags)
{
    if (should_fail("eventfd", CALLER))
        return -1;
    return REAL(eventfd)(initval, flags);
}

int pipe2(int fds[2], int flags)
{
    if (should_fail("pipe2", CALLER))
        return -1;
    return REAL(pipe2)(fds, flags);
}

int prctl(int option, ...)
{
    va_list ap;
    unsigned long a[4];

    va_start(ap, option);
    for (int i = 0; i < 4; i++)
        a[i] = va_arg(ap, unsigned long);
    va_end(ap);
    if (should_fail("prctl", CALLER))
        return -1;
    return REAL(prctl)(option, a[0], a[1], a[2], a[3]);
}

int epoll_create1(int flags)
{
    if (should_fail("epoll_create1", CALLER))
        return -1;
    return REAL(epoll_create1)(flags);
}

/* Only an addition fails: a removal's failure is ignored by design (the
   descriptor leaves the set when it is closed). */
int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    if (op == EPOLL_CTL_ADD && should_fail("epoll_ctl", CALLER))
        return -1;
    return REAL(epoll_ctl)(epfd, op, fd, ev);
}

int pidfd_open(pid_t pid, unsigned int flags)
{
    if (should_fail("pidfd_open", CALLER))
        return -1;
    return REAL(pidfd_open)(pid, flags);
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    if (should_fail("getrandom", CALLER))
        return -1;
    return REAL(getrandom)(buf, len, flags);
}

/* glibc's allocator under its own exported names (no header declares
   them): the wrappers must not reach malloc through dlsym. */
/* NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
/* NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */

void *malloc(size_t size)
{
    if (should_fail("malloc", CALLER))
        return NULL;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    if (should_fail("calloc", CALLER))
        return NULL;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    if (should_fail("realloc", CALLER))
        return NULL;
    return __libc_realloc(p, size);
}

DIR *opendir(const char *name)
{
    if (should_fail("opendir", CALLER))
        return NULL;
    DIR *(*real)(const char *) = REAL(opendir);
    return real(name);
}

int sigaction(int sig, const struct sigaction *sa, struct sigaction *old)
{
    if (should_fail("sigaction", CALLER))
        return -1;
    return REAL(sigaction)(sig, sa, old);
}
