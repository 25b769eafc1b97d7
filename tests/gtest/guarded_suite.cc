/* SPDX-License-Identifier: MIT */
/*
 * guarded_suite.cc — a GoogleTest suite under mpfixture::gtest_main, the
 * way a project writes one, with the offences planted. Run by
 * check_gtest_run.py, which asserts gtest's verdict of each test and what
 * its output says.
 *   Leaks.*       clean; a live child; a /dev/shm object; a zombie; a
 *                 failed assertion; clean again
 *   DeathTests.*  death tests ending through exit(), abort() and a
 *                 message, in the style the command line chose, and one
 *                 that switches to "threadsafe" inside its body
 *   Budget.*      a test over its budget (MPF_GTEST_BUDGET), then one that
 *                 must still run
 *   Budgets.*     budgets by SetBudget() pattern (the last matching call
 *                 wins) and by MPF_BUDGETS (over SetBudget), each test
 *                 checking the budget the one before it had
 *   Outcomes.*    a skipped test; an offence the test declared
 *                 (mpf_expect); a /dev/shm object the keep list keeps (a
 *                 note on stderr), then removed
 *   Misuse.*      a test that ends the group itself: its case and the
 *                 next test's cannot be guarded, and the group's end fails
 *   Long/LongNames  a name longer than the adapter takes
 *   Kinds.*       an escaped fork (a child returning from the body) and a
 *                 descriptor left open
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <mpfixture/gtest.h>

namespace
{

/* The name of this run's planted object: the driver checks that it is
   gone after the run. */
std::string planted_shm_name()
{
    return "/mpf_gtest_leak." + std::to_string(getpid());
}

/* A child that lives until it is killed. */
pid_t fork_lingering_child()
{
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

} // namespace

TEST(Leaks, CleanFirst)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        _exit(0);
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status));
}

TEST(Leaks, LeavesLiveChild)
{
    ASSERT_GT(fork_lingering_child(), 0);
}

TEST(Leaks, LeavesShmObject)
{
    int fd = shm_open(planted_shm_name().c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
}

TEST(Leaks, LeavesZombie)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        _exit(0);
    /* Until it has exited, without reaping it. */
    siginfo_t info;
    ASSERT_EQ(0, waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT));
}

TEST(Leaks, FailsAnAssertion)
{
    SUCCEED() << "a part that did not fail, before the one that did";
    EXPECT_EQ(2, 1 + 2) << "the planted assertion";
}

TEST(Leaks, CleanAgain)
{
    int fd = shm_open(planted_shm_name().c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
    EXPECT_EQ(0, shm_unlink(planted_shm_name().c_str()));
}

TEST(DeathTests, ExitsThroughExit)
{
    EXPECT_EXIT(exit(3), ::testing::ExitedWithCode(3), "");
}

TEST(DeathTests, Aborts)
{
    EXPECT_DEATH(abort(), "");
}

TEST(DeathTests, SaysWhyItDies)
{
    EXPECT_EXIT(
        {
            fprintf(stderr, "dying on purpose\n");
            exit(5);
        },
        ::testing::ExitedWithCode(5), "dying on purpose");
}

/* "threadsafe": the statement runs in gtest's re-executed binary, where
   the guard must have installed nothing. "fast": in gtest's forked child
   of this process, which still sees the group's page. */
TEST(DeathTests, NoGroupInTheReexecutedBinary)
{
    bool threadsafe = GTEST_FLAG_GET(death_test_style) == "threadsafe";
    pid_t owner = getpid();
    EXPECT_EXIT(exit(threadsafe ? (mpf_owner_pid() == 0 ? 3 : 4)
                                : (mpf_owner_pid() == owner ? 3 : 4)),
                ::testing::ExitedWithCode(3), "");
}

TEST(DeathTests, SwitchesToThreadsafeInItsBody)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(exit(mpf_owner_pid() == 0 ? 3 : 4),
                ::testing::ExitedWithCode(3), "");
}

MPF_GTEST_BUDGET(Budget, OverBudget, 300);

TEST(Budget, OverBudget)
{
    pid_t pid = fork_lingering_child();
    ASSERT_GT(pid, 0);
    /* Returns when the budget signal interrupts it (EINTR) or once the
       guard has killed the child. */
    int status;
    (void)waitpid(pid, &status, 0);
}

TEST(Budget, NextRuns)
{
    EXPECT_EQ(0, mpf_budget_expired());
}

/* The budget a test of budget `ms` ran under (the report's, scaled). */
static unsigned scaled(unsigned ms)
{
    return (unsigned)(ms * mpf_time_scale());
}

/* The last call matching a name wins; a NULL pattern is ignored. The
   test named in GTEST_ADAPTER_SHORT_BUDGET's stead: MPF_BUDGETS. */
static const bool budgets_set __attribute__((unused)) = []() noexcept {
    mpf::gtest::SetBudget("Budgets.*", 4000);
    mpf::gtest::SetBudget("Budgets.Short*", 250);
    mpf::gtest::SetBudget(nullptr, 1);
    return true;
}();

TEST(Budgets, ShortOne)
{
}

TEST(Budgets, HadShortOnesBudget)
{
    const char *env = getenv("GTEST_ADAPTER_SHORT_BUDGET");
    unsigned want = env ? (unsigned)atoi(env) : 250;
    EXPECT_STREQ("Budgets.ShortOne", mpf::gtest::LastReport().case_name);
    EXPECT_EQ(scaled(want), mpf::gtest::LastReport().budget_ms);
}

TEST(Budgets, HadTheSuiteBudget)
{
    EXPECT_EQ(scaled(4000), mpf::gtest::LastReport().budget_ms);
}

TEST(Outcomes, Skipped)
{
    GTEST_SKIP() << "skipped on purpose";
}

TEST(Outcomes, DeclaredOffence)
{
    mpf_expect(MPF_SURVIVOR, nullptr);
    ASSERT_GT(fork_lingering_child(), 0);
}

static std::string kept_shm_name()
{
    return "/mpf_gtest_kept." + std::to_string(getpid());
}

TEST(Outcomes, KeepsAnObject)
{
    ASSERT_EQ(0, mpf_keep_shm("mpf_gtest_kept.*"));
    int fd = shm_open(kept_shm_name().c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
}

TEST(Outcomes, KeptObjectRemoved)
{
    mpf::gtest::Attach(); /* a second call does nothing */
    EXPECT_EQ(0, shm_unlink(kept_shm_name().c_str()));
}

TEST(Misuse, EndsTheGroup)
{
    EXPECT_EQ(0, mpf_group_end());
}

TEST(Misuse, NextCannotBegin)
{
}

class LongNames : public ::testing::TestWithParam<int>
{
};

TEST_P(LongNames, Fails)
{
}

INSTANTIATE_TEST_SUITE_P(Long, LongNames, ::testing::Values(1),
                         [](const ::testing::TestParamInfo<int> &) {
                             return std::string(520, 'x');
                         });

/* The other kinds, each inside gtest: a forked child that returns from
   the body into gtest's frames (an escaped fork, stopped where the case
   ends), and a descriptor left open. */
TEST(Kinds, ChildReturnsFromTheBody)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        return;
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(MPF_ESCAPED_EXIT_STATUS, WEXITSTATUS(status));
}

TEST(Kinds, LeavesAnOpenDescriptor)
{
    ASSERT_GE(open("/dev/null", O_RDONLY), 0);
}
