/* SPDX-License-Identifier: MIT */
/*
 * test_shm_races.c — the ledger's decisions under a racing process, run
 * in-process: interpose.c and shm_identity.c are compiled into this
 * program (they are internal), the ledger is a stub that keeps the last
 * record, and each try races one call against one call of a second
 * process, released together by a futex gate (no sleeps):
 *   - creation: the case opens a fixed /dev/shm name with O_CREAT and
 *     without O_EXCL (open, then shm_open) while the racer creates the
 *     same name with O_EXCL. Exactly one of them created the object: the
 *     ledger must record it exactly when the case did, with the identity
 *     of the case's object, and the cleanup must never remove the
 *     racer's. As root the racer runs as uid 65534 as well;
 *   - removal: the cleanup removes the case's object while the racer
 *     renames its own object over the name: the racer's object must
 *     survive, under the name or, if it was moved aside and the name was
 *     taken again, where the cleanup says.
 * TRIES tries each (argv[1] overrides). Prints "ok" and the counts when
 * every check holds; a failed check prints the counts and "FAILED".
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger/ledger.h"
#include "shm/shm.h"
#include "race_gate.h"

#define TRIES 10000

/* ---- what interpose.c needs of the rest of libmpfixture ------------- */

struct mpf__shared *mpf__page; /* NULL: no descriptor tracking */

uint32_t mpf__case_seq(void)
{
    return 1; /* a case is always open */
}

void mpf__fd_call_begin(void)
{
}
void mpf__fd_call_end(int fd1, int fd2, const void *pc)
{
    (void)fd1;
    (void)fd2;
    (void)pc;
}
/* A socket bound outside /dev/shm: not what the races here are about. */
void mpf__ipc_socket_bound(const char *path, const void *pc)
{
    (void)path;
    (void)pc;
}
void mpf__ledger_fork(pid_t pid, pid_t ppid, pid_t sid, const void *pc)
{
    (void)pc;
    (void)pid;
    (void)ppid;
    (void)sid;
}
void mpf__note_kill(pid_t pid, int sig)
{
    (void)pid;
    (void)sig;
}
#ifdef MPF_COVERAGE_BUILD
/* interpose.c's exec wrappers flush the counters first (shared_page.c);
   this program never execs, its counters are written at its exit. */
void mpf__coverage_flush(void)
{
}
#endif

/* The ledger: the last record of this process. */
static struct mpf__shm_slot last;
static unsigned records;

void mpf__ledger_shm(enum mpf__shm_how how, const char *name,
                     const struct stat *st, const void *pc)
{
    (void)pc;
    memset(&last, 0, sizeof last);
    last.how = how;
    last.pid = getpid();
    last.has_id = st != NULL;
    if (st) {
        last.uid = st->st_uid;
        last.dev = (uint64_t)st->st_dev;
        last.ino = (uint64_t)st->st_ino;
    }
    snprintf(last.name, sizeof last.name, "%s", name);
    records++;
}

/* A rename or link: recorded as the ledger would a move of an object
   this process made (the races here are about what the call decides). */
void mpf__ledger_shm_name(enum mpf__shm_how how, const char *name,
                          const char *from, const struct stat *st,
                          const void *pc)
{
    (void)from;
    mpf__ledger_shm(how, name, st, pc);
}

/* A chown: nothing to decide here. */
void mpf__ledger_shm_owner(const char *name, const struct stat *before,
                           const struct stat *after)
{
    (void)name;
    (void)before;
    (void)after;
}

static struct race_gate *g;

static int shm_dir = -1;
static char name_c[64], name_f[64];
static char name_s[64], entry_s[72]; /* a semaphore: "/x" is "sem.x" */
static const char *entry;            /* what the creation race is about */

/* ---- the racer ------------------------------------------------------ */

enum race { RACE_CREATE, RACE_RENAME };

static void racer(enum race what, unsigned tries, uid_t as)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
    if (getppid() == 1)
        _exit(3);
    race_gate_pin(0);
    if (as && setresgid(as, as, as) != 0)
        _exit(3);
    if (as && setresuid(as, as, as) != 0)
        _exit(3);
    for (unsigned t = 0; t < tries; t++) {
        if (!race_gate_racer_start(g, t))
            break;
        int rc = 0;
        uint64_t ino = 0;
        if (what == RACE_CREATE) {
            int fd = (int)syscall(SYS_openat, shm_dir, entry,
                                  O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
            struct stat st;
            if (fd >= 0 && fstat(fd, &st) == 0)
                ino = (uint64_t)st.st_ino;
            /* A semaphore's size: sem_open maps it (it never reads it
               here: nobody waits on it). */
            if (fd >= 0 && ftruncate(fd, sizeof(sem_t)) != 0)
                ino = 0;
            rc = fd >= 0 ? 0 : errno;
            if (fd >= 0)
                close(fd);
        } else {
            rc = (int)syscall(SYS_renameat2, shm_dir, name_f, shm_dir, name_c,
                              0) == 0
                     ? 0
                     : errno;
        }
        race_gate_racer_done(g, t, ino, rc);
    }
    _exit(0);
}

static pid_t start_racer(enum race what, unsigned tries, uid_t as)
{
    memset(g, 0, sizeof *g);
    pid_t pid = fork();
    if (pid == 0)
        racer(what, tries, as);
    return pid;
}

static int end_racer(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "the racer failed (status %d)\n", status);
        return 1;
    }
    return 0;
}

/* ---- creation ------------------------------------------------------- */

struct counts {
    unsigned tries, case_created, racer_created, foreign_recorded,
        foreign_removed, own_missed, wrong_errno;
};

enum via { VIA_OPEN, VIA_SHM_OPEN, VIA_SEM_OPEN };

/* The case's call, O_CREAT without O_EXCL, through the wrappers compiled
   in above: true if it opened (or created) the object, then what it is
   in *st; errno otherwise. */
static bool case_open(enum via via, struct stat *st)
{
    if (via == VIA_SEM_OPEN) {
        sem_t *sem = sem_open(name_s, O_CREAT | O_RDWR, 0600, 0);
        if (sem == SEM_FAILED)
            return false;
        /* Nothing renames or removes it before the try ends. */
        bool ok = fstatat(shm_dir, entry, st, AT_SYMLINK_NOFOLLOW) == 0;
        sem_close(sem);
        return ok;
    }
    int fd;
    if (via == VIA_SHM_OPEN) {
        fd = shm_open(name_c, O_CREAT | O_RDWR, 0600);
    } else {
        char path[96];
        snprintf(path, sizeof path, "/dev/shm/%s", name_c);
        fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    }
    if (fd < 0)
        return false;
    bool ok = fstat(fd, st) == 0;
    close(fd);
    return ok;
}

static int creation_race(enum via via, uid_t as, struct counts *c)
{
    entry = via == VIA_SEM_OPEN ? entry_s : name_c;
    pid_t pid = start_racer(RACE_CREATE, c->tries, as);
    if (pid < 0)
        return 1;
    for (unsigned t = 0; t < c->tries; t++) {
        unsigned before = records;
        race_gate_open(g, t);
        struct stat mine = { 0 };
        bool opened = case_open(via, &mine);
        int err = errno;
        race_gate_finish(g, t);
        uint64_t racer_ino = atomic_load(&g->ino);
        bool recorded = records != before;
        if (racer_ino)
            c->racer_created++;
        else if (opened)
            c->case_created++;
        /* Another owner's object opened with O_CREAT may be refused
           (fs.protected_regular): EACCES, never EEXIST. */
        if (!opened && !(err == EACCES && as))
            c->wrong_errno++;
        if (recorded && racer_ino && last.ino == racer_ino)
            c->foreign_recorded++;
        if (!racer_ino && opened &&
            (!recorded || !last.has_id || last.ino != (uint64_t)mine.st_ino))
            c->own_missed++;
        if (recorded) {
            struct mpf__shm_seen seen;
            enum mpf__shm_fate fate = mpf__shm_remove_if_same(shm_dir, &last,
                                                              &seen);
            if (racer_ino && fate == MPF__SHM_REMOVED)
                c->foreign_removed++;
        }
        unlinkat(shm_dir, entry, 0);
    }
    return end_racer(pid);
}

/* ---- removal -------------------------------------------------------- */

static int make(const char *name, struct stat *st)
{
    int fd = (int)syscall(SYS_openat, shm_dir, name,
                          O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 || fstat(fd, st) != 0)
        return -1;
    return close(fd);
}

struct rename_counts {
    unsigned tries, removed, replaced, set_aside, foreign_lost, own_left;
};

static int rename_race(struct rename_counts *c)
{
    pid_t pid = start_racer(RACE_RENAME, c->tries, 0);
    if (pid < 0)
        return 1;
    for (unsigned t = 0; t < c->tries; t++) {
        struct stat own, foreign, now;
        if (make(name_c, &own) != 0 || make(name_f, &foreign) != 0) {
            perror("creating the objects");
            return 1;
        }
        struct mpf__shm_slot s = { .how = MPF__HOW_SHM_OPEN,
                                   .has_id = true,
                                   .uid = own.st_uid,
                                   .dev = (uint64_t)own.st_dev,
                                   .ino = (uint64_t)own.st_ino };
        snprintf(s.name, sizeof s.name, "%s", name_c);
        race_gate_open(g, t);
        struct mpf__shm_seen seen;
        enum mpf__shm_fate fate = mpf__shm_remove_if_same(shm_dir, &s, &seen);
        race_gate_finish(g, t);
        c->removed += fate == MPF__SHM_REMOVED;
        c->replaced += fate == MPF__SHM_REPLACED;
        bool kept = fstatat(shm_dir, name_c, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
                    now.st_ino == foreign.st_ino;
        if (fate == MPF__SHM_SET_ASIDE) {
            c->set_aside++;
            kept = kept || (fstatat(shm_dir, seen.aside, &now,
                                    AT_SYMLINK_NOFOLLOW) == 0 &&
                            now.st_ino == foreign.st_ino);
            unlinkat(shm_dir, seen.aside, 0);
        }
        /* The racer's rename always lands (its source is there), so the
           foreign object is under the name unless the cleanup took it. */
        if (!kept)
            c->foreign_lost++;
        if (fstatat(shm_dir, name_c, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            now.st_ino == own.st_ino)
            c->own_left++; /* the rename came after: never here */
        unlinkat(shm_dir, name_c, 0);
        unlinkat(shm_dir, name_f, 0);
    }
    return end_racer(pid);
}

int main(int argc, char **argv)
{
    unsigned tries = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : TRIES;
    g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    shm_dir = (int)syscall(SYS_openat, AT_FDCWD, "/dev/shm",
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (g == MAP_FAILED || shm_dir < 0) {
        perror("test_shm_races: setup");
        return 1;
    }
    snprintf(name_c, sizeof name_c, "mpf-race-%d-name", (int)getpid());
    snprintf(name_f, sizeof name_f, "mpf-race-%d-foreign", (int)getpid());
    snprintf(name_s, sizeof name_s, "/mpf-race-%d-sem", (int)getpid());
    snprintf(entry_s, sizeof entry_s, "sem.%s", name_s + 1);
    int bad = 0;
    race_gate_pin(1);

    struct {
        const char *what;
        enum via via;
        uid_t as;
    } runs[] = {
        { "open(O_CREAT)", VIA_OPEN, 0 },
        { "shm_open(O_CREAT)", VIA_SHM_OPEN, 0 },
        { "sem_open(O_CREAT)", VIA_SEM_OPEN, 0 },
        { "open(O_CREAT), racer uid 65534", VIA_OPEN, 65534 },
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        if (runs[i].as && geteuid() != 0) {
            printf("creation race, %s: skipped, a racer of another uid "
                   "needs root\n",
                   runs[i].what);
            continue;
        }
        struct counts c = { .tries = tries };
        bad += creation_race(runs[i].via, runs[i].as, &c);
        printf("creation race, %s: %u tries, case created %u, racer created "
               "%u; racer's recorded %u, racer's removed %u, case's missed "
               "%u, wrong errno %u\n",
               runs[i].what, c.tries, c.case_created, c.racer_created,
               c.foreign_recorded, c.foreign_removed, c.own_missed,
               c.wrong_errno);
        bad += c.foreign_recorded || c.foreign_removed || c.own_missed ||
               c.wrong_errno;
    }

    struct rename_counts r = { .tries = tries };
    bad += rename_race(&r);
    printf("rename race at removal: %u tries, removed %u, replaced %u, set "
           "aside %u; racer's lost %u, case's left %u\n",
           r.tries, r.removed, r.replaced, r.set_aside, r.foreign_lost,
           r.own_left);
    bad += r.foreign_lost || r.own_left;

    unlinkat(shm_dir, name_c, 0);
    unlinkat(shm_dir, name_f, 0);
    unlinkat(shm_dir, entry_s, 0);
    puts(bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}
