// The public header must compile as C++ (extern "C", no C-only syntax).
#include <topdown.h>

static_assert(TD_L1_COUNT == 4, "four level-1 categories");
static_assert(TD_L2_COUNT == 8, "eight level-2 categories");

int cxx_uses_header(void);
int cxx_uses_header(void)
{
	struct td_options o = {};
	o.size = sizeof(o);
	struct td *td = nullptr;
	return td_open(&td, &o);
}

// The harness API's initialiser must be warning-free in C++ too.
int cxx_uses_named(struct td *td);
int cxx_uses_named(struct td *td)
{
	static struct td_named n = TD_NAMED_INIT("cxx");
	struct td_result res;

	td_named_begin(td, &n);
	return td_named_end(td, &n, &res);
}

// topdown.h alone must not pull Google Benchmark in: only
// topdown_benchmark.hpp includes it, for benchmark code.
#ifdef BENCHMARK_BENCHMARK_H_
#error "topdown.h included benchmark/benchmark.h"
#endif
