/* SPDX-License-Identifier: MIT */
/*
 * test_counter_cpp.cpp — the same guard from C++: cases with budgets in a
 * table, and a leak nobody declared, which fails by name.
 */
#include <cstdio>
#include <string>
#include <unistd.h>

#include <mpfixture/cmocka.h>

#include "counter.h"

namespace
{

std::string name_for(const char *what)
{
    return "/consumer-cpp-" + std::string(what) + "-" +
           std::to_string(getpid());
}

void workers_add_up(void **)
{
    const std::string name = name_for("clean");
    assert_int_equal(counter_run(name.c_str(), 3, 500), 1500);
    assert_int_equal(counter_remove(name.c_str()), 0);
}

/* Registered with EXPECT_OUTPUT: passes in ctest only when the guard
   fails it, naming the case, the kind and the object. */
void undeclared_leak_fails_by_name(void **)
{
    const std::string name = name_for("leak");
    assert_int_equal(counter_run(name.c_str(), 2, 10), 20);
}

} // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(workers_add_up, 2000),
        mpf_unit_test(undeclared_leak_fails_by_name, 2000),
    };
    return mpf_run_group_tests(tests, nullptr, nullptr);
}
