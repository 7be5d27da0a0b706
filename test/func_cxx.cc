// SPDX-License-Identifier: MIT
// test_functions: a C++ exception thrown across instrumented frames.
#include <stdexcept>

#include "func_work.h"
#include "truth.h"

static __attribute__((noinline)) void thrower(int depth)
{
	work(W_THROWER, 300000, &MIX_DRAM);
	if (depth > 1)
		thrower(depth - 1);
	else
		throw std::runtime_error("across instrumented frames");
}

void cxx_catcher(void)
{
	work(W_CATCHER, 200000, &MIX_STREAM);
	try {
		thrower(3);
	} catch (const std::exception &) {
	}
	after_jump();
	work(W_CATCHER, 200000, &MIX_STREAM);
}
