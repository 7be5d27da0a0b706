// SPDX-License-Identifier: MIT
//
// The Google Benchmark helper (include/topdown_benchmark.hpp) run for
// real, on the emulator linked in: a machine without a PMU keeps its
// timings, the emulator's counters say they are synthetic, and a run of
// several threads prints its shares at 0.1 resolution.
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>

#include <topdown_benchmark.hpp>

#include "gbench_emu.h"

namespace {

struct capture : benchmark::BenchmarkReporter {
	std::vector<Run> runs;

	bool ReportContext(const Context &) override { return true; }
	void ReportRuns(const std::vector<Run> &r) override
	{
		runs.insert(runs.end(), r.begin(), r.end());
	}
};

// Level-1 bytes per thread: shares 56/255 = 22.0% and 58/255 = 22.7%
// retiring, whose mean (22.35%) is not a one-decimal share.
const unsigned thread_bytes[2][4] = { { 56, 20, 30, 149 }, { 58, 20, 30, 147 } };

void bm_work(benchmark::State &state)
{
	const unsigned *bytes = thread_bytes[state.thread_index() % 2];

	topdown::measure(state, [bytes] { gbench_emu_work(1000000, bytes); });
}

// The loop bracketed by hand, its result put with set_counters().
void bm_work_by_hand(benchmark::State &state)
{
	const unsigned *bytes = thread_bytes[state.thread_index() % 2];
	struct td *td = topdown::thread_handle();
	struct td_region r = {};
	struct td_result res;

	td_region_begin(td, &r);
	for (auto _ : state)
		gbench_emu_work(1000000, bytes);
	td_region_end(td, &r, &res);
	topdown::set_counters(state, res);
}

// Each scenario in a new thread: the helper's handles are per thread.
std::vector<benchmark::BenchmarkReporter::Run>
run_benchmark(int threads, void (*fn)(benchmark::State &) = bm_work)
{
	capture rep;

	benchmark::ClearRegisteredBenchmarks();
	benchmark::RegisterBenchmark("work", fn)
		->Iterations(4)
		->Threads(threads);
	std::thread t([&rep] { benchmark::RunSpecifiedBenchmarks(&rep); });
	t.join();
	return rep.runs;
}

bool has_counter(const benchmark::BenchmarkReporter::Run &r,
		 const char *name)
{
	return r.counters.find(name) != r.counters.end();
}

// stderr into a file while a benchmark runs: the helper's line.
struct stderr_capture {
	FILE *file = tmpfile();
	int saved = dup(2);

	stderr_capture() { fflush(stderr); dup2(fileno(file), 2); }
	std::string done()
	{
		char buf[4096];
		size_t n;

		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		rewind(file);
		n = fread(buf, 1, sizeof(buf) - 1, file);
		buf[n] = '\0';
		fclose(file);
		return buf;
	}
};

// No PMU: timed as usual, no TopDown counter, one line saying why.
void no_pmu_keeps_timings(void **)
{
	gbench_emu_setup(false);
	stderr_capture err;
	auto runs = run_benchmark(2);
	std::string said = err.done();

	assert_int_equal(runs.size(), 1);
	assert_false(runs[0].error_occurred);
	assert_int_equal(runs[0].iterations, 8);
	assert_true(runs[0].real_accumulated_time > 0);
	assert_false(has_counter(runs[0], "retiring%"));
	assert_false(has_counter(runs[0], "slots/iter"));
	assert_non_null(strstr(said.c_str(), "no TopDown counters"));
	assert_non_null(strstr(said.c_str(), "no hardware PMU"));
	assert_ptr_equal(strchr(said.c_str(), '\n'), said.c_str() + said.size() - 1);
	gbench_emu_teardown();
}

// The emulator's counters are labelled; two threads' shares are their
// slot-weighted mean at 0.1 resolution, exactly as percent() rounds it.
void check_mean(std::vector<benchmark::BenchmarkReporter::Run> &runs)
{
	assert_int_equal(runs.size(), 1);
	assert_false(runs[0].error_occurred);
	assert_true(runs[0].counters["retiring%"].value ==
		    topdown::percent(57.0 / 255));
	for (const auto &c : runs[0].counters) {
		double v = c.second.value;

		if (c.first.back() != '%')
			continue;
		if (v != std::round(v * 10) / 10)
			fail_msg("%s = %.17g: not at 0.1 resolution",
				 c.first.c_str(), v);
	}
}

// set_counters() from each thread: the same mean, no float noise.
void set_counters_mean(void **)
{
	gbench_emu_setup(true);
	auto runs = run_benchmark(2, bm_work_by_hand);

	check_mean(runs);
	gbench_emu_teardown();
}

void emulated_labelled_mean(void **)
{
	gbench_emu_setup(true);
	auto runs = run_benchmark(2);

	// both threads ran 4 x 1e6 slots: the mean of 56 and 58 bytes
	check_mean(runs);
	assert_string_equal(runs[0].report_label.c_str(), "EMULATED PMU");
	assert_true(has_counter(runs[0], "retiring%"));
	assert_true(runs[0].counters["slots/iter"].value == 1e6);
	gbench_emu_teardown();
}

}  // namespace

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_pmu_keeps_timings),
		cmocka_unit_test(emulated_labelled_mean),
		cmocka_unit_test(set_counters_mean),
	};

	benchmark::Initialize(&argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
