// The Google Benchmark helper must compile, templates instantiated, as
// C++11 (Google Benchmark's own minimum) and later, warning-free.
#include <topdown_benchmark.hpp>

void bm_level1(benchmark::State &state);
void bm_level1(benchmark::State &state)
{
	topdown::measure(state, [] { benchmark::ClobberMemory(); });
}

void bm_level2(benchmark::State &state);
void bm_level2(benchmark::State &state)
{
	int calls = 0;

	topdown::measure(state, [&calls] { calls++; }, topdown::level2);
	benchmark::DoNotOptimize(calls);
}

void counters_by_hand(benchmark::State &state, const struct td_result &res);
void counters_by_hand(benchmark::State &state, const struct td_result &res)
{
	topdown::set_counters(state, res);
}
