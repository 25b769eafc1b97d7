// SPDX-License-Identifier: MIT
/*
 * guarded_gtest_test.cc — eight GoogleTest tests under mpfixture (the
 * installed mpfixture::gtest_main: gtest's main with the guard attached),
 * death tests in both styles among them, run by bazel test in 4 shards.
 * gtest shards, filters and writes test.xml itself; the adapter touches
 * TEST_SHARD_STATUS_FILE. With --test_env=EXAMPLE_LEAK=1 one test leaves
 * a /dev/shm object: the guard fails it, and its shard's test.xml has the
 * failure with the guard's report.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <mpfixture/gtest.h>

TEST(Example, Adds)
{
    EXPECT_EQ(2 + 2, 4);
}

TEST(Example, Compares)
{
    EXPECT_EQ(std::string("mpf"), "mpf");
}

TEST(Example, ForksAndWaits)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        _exit(0);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
}

TEST(Example, LeaksShmWhenAsked)
{
    std::string name = "/mpf-bazel-gtest-leak-" + std::to_string(getpid());
    int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
    if (!std::getenv("EXAMPLE_LEAK"))
        shm_unlink(name.c_str());
}

TEST(Example, Pipes)
{
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    EXPECT_EQ(write(p[1], "x", 1), 1);
    char c = 0;
    EXPECT_EQ(read(p[0], &c, 1), 1);
    close(p[0]);
    close(p[1]);
}

TEST(ExampleDeathTest, ExitsFast)
{
    GTEST_FLAG_SET(death_test_style, "fast");
    EXPECT_EXIT(std::exit(3), ::testing::ExitedWithCode(3), "");
}

TEST(ExampleDeathTest, ExitsThreadsafe)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(std::exit(4), ::testing::ExitedWithCode(4), "");
}

TEST(ExampleDeathTest, Aborts)
{
    EXPECT_DEATH(std::abort(), "");
}
