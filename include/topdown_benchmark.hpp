// SPDX-License-Identifier: MIT
//
// topdown_benchmark.hpp: libtopdown in Google Benchmark, header only.
//
// Include it in benchmark code only: it includes <benchmark/benchmark.h>
// (topdown.h never does).  Link as for any libtopdown program, plus
// -lbenchmark:
//
//   #include <topdown_benchmark.hpp>
//
//   static void BM_parse(benchmark::State &state)
//   {
//           topdown::measure(state, [] { parse(input); });
//   }
//   BENCHMARK(BM_parse);
//
// measure() runs the benchmark's timing loop as one TopDown region and
// reports it as state.counters, which Google Benchmark prints as extra
// columns and writes to --benchmark_format=json|csv:
//
//   retiring%  bad_speculation%  frontend_bound%  backend_bound%
//               level-1 shares of the loop's pipeline slots, in percent
//               (0.1 resolution), so 34.1 reads as 34.1% (a fraction
//               would print as 341m);
//   err%        the bound on the error of each of them, in percentage
//               points (td_result.err);
//   slots/iter  pipeline slots per iteration;
//   with topdown::level2, the eight level-2 shares too, where measured.
//
// In a multi-threaded benchmark (->Threads(n)) each thread measures with
// its own handle and the shares are averaged over the threads.  The loop's
// region includes anything the loop body excludes from timing with
// PauseTiming()/ResumeTiming().
#ifndef TOPDOWN_BENCHMARK_HPP
#define TOPDOWN_BENCHMARK_HPP

#include <benchmark/benchmark.h>
#include <topdown.h>

#include <cmath>
#include <string>

namespace topdown {

// The calling thread's handle: opened at its first use, closed when the
// thread ends.  nullptr when td_open failed; *err (if given) gets its
// return value, td_strerror(*err) the reason.
inline struct td *thread_handle(int *err = nullptr)
{
	struct holder {
		struct td *td;
		int err;

		holder() : td(nullptr), err(0) { err = td_open(&td, nullptr); }
		~holder() { td_close(td); }
		holder(const holder &) = delete;
		holder &operator=(const holder &) = delete;
	};
	thread_local holder h;

	if (err)
		*err = h.err;
	return h.td;
}

// A fraction of slots as a percentage, to 0.1: finer than any TopDown
// breakdown is worth reading, and short enough to read at a glance.
inline double percent(double fraction)
{
	return std::round(fraction * 1000.0) / 10.0;
}

// Which categories measure() reports.
enum columns { level1, level2 };

// Put one result into state.counters (measure() does this; call it when
// bracketing the loop yourself).
inline void set_counters(benchmark::State &state, const struct td_result &res,
			 columns which = level1)
{
	using benchmark::Counter;

	for (int i = 0; i < TD_L1_COUNT; i++)
		state.counters[std::string(td_l1_name(i)) + "%"] =
			Counter(percent(res.l1[i]), Counter::kAvgThreads);
	if (which == level2 && (res.flags & TD_RESULT_L2))
		for (int i = 0; i < TD_L2_COUNT; i++)
			state.counters[std::string(td_l2_name(i)) + "%"] =
				Counter(percent(res.l2[i]), Counter::kAvgThreads);
	state.counters["err%"] = Counter(percent(res.err), Counter::kAvgThreads);
	state.counters["slots/iter"] = Counter(static_cast<double>(res.slots),
					       Counter::kAvgIterations);
}

// Run the benchmark's timing loop, calling body() once per iteration, as
// one region on this thread's handle, and report its breakdown.  When
// there is no handle (no PMU, ...), a call fails or the counts cannot be
// trusted (TD_RESULT_UNRELIABLE), the benchmark is skipped with the
// reason instead.
template <class Body>
void measure(benchmark::State &state, Body body, columns which = level1)
{
	struct td_region r = {};
	struct td_result res;
	int err = 0;
	struct td *td = thread_handle(&err);

	if (td)
		err = td_region_begin(td, &r);
	if (err < 0) {
		state.SkipWithError(td_strerror(err));
		return;
	}
	for (auto _ : state)
		body();
	err = td_region_end(td, &r, &res);
	if (err < 0) {
		state.SkipWithError(td_strerror(err));
		return;
	}
	if (res.flags & TD_RESULT_UNRELIABLE) {
		state.SkipWithError("TopDown counts unreliable for this run");
		return;
	}
	set_counters(state, res, which);
}

}  // namespace topdown

#endif  // TOPDOWN_BENCHMARK_HPP
