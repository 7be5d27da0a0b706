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
// its own handle and the shares are the threads' slot-weighted mean, put
// by the last thread to finish (so Google Benchmark divides nothing: a
// share prints as 34.1, never 34.100000000000001).  The loop's region
// includes anything the loop body excludes from timing with
// PauseTiming()/ResumeTiming().
//
// On the test emulator (td_info.flags TD_INFO_EMULATED) the benchmark's
// label is "EMULATED PMU": the counters are synthetic.  Where TopDown
// cannot be measured (td_open fails: no PMU, as on most CI VMs, or no
// permission) the benchmarks run and are timed as usual without the
// TopDown counters, and one line on stderr says why.
#ifndef TOPDOWN_BENCHMARK_HPP
#define TOPDOWN_BENCHMARK_HPP

#include <benchmark/benchmark.h>
#include <topdown.h>

#include <cmath>
#include <cstdio>
#include <mutex>
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

namespace detail {

// One line, once per process: why the benchmarks have no TopDown counters.
inline void say_unmeasured(int err)
{
	static std::once_flag once;

	std::call_once(once, [err] {
		std::fprintf(stderr, "topdown: no TopDown counters, timings "
			     "only: td_open: %s\n", td_strerror(err));
	});
}

// The threads of one run: each adds its region's slots and slot-weighted
// shares; the last to finish puts the whole run's counters.
struct run_sum {
	std::mutex lock;
	int threads = 0;
	bool failed = false;
	struct td_result sum = {};  // l1, l2, err: weighted by slots
	unsigned flags = ~0u;       // TD_RESULT_L2 when every thread had it
};

inline run_sum &the_run()
{
	static run_sum r;
	return r;
}

// The run's result when this thread is its last, else false.
inline bool add_to_run(benchmark::State &state, const struct td_result *res,
		       struct td_result *out)
{
	run_sum &r = the_run();
	std::lock_guard<std::mutex> hold(r.lock);
	double w = res ? static_cast<double>(res->slots) : 0;
	bool last;

	if (!res)
		r.failed = true;
	else
		r.flags &= res->flags;
	for (int i = 0; res && i < TD_L1_COUNT; i++)
		r.sum.l1[i] += w * res->l1[i];
	for (int i = 0; res && i < TD_L2_COUNT; i++)
		r.sum.l2[i] += w * res->l2[i];
	if (res) {
		r.sum.err += w * res->err;
		r.sum.slots += res->slots;
	}
	last = ++r.threads == state.threads();
	if (!last)
		return false;
	*out = r.sum;
	out->flags = r.flags;
	for (int i = 0; out->slots && i < TD_L1_COUNT; i++)
		out->l1[i] /= static_cast<double>(out->slots);
	for (int i = 0; out->slots && i < TD_L2_COUNT; i++)
		out->l2[i] /= static_cast<double>(out->slots);
	if (out->slots)
		out->err /= static_cast<double>(out->slots);
	last = !r.failed;
	r.threads = 0;
	r.failed = false;
	r.sum = td_result();
	r.flags = ~0u;
	return last;
}

inline bool emulated(struct td *td)
{
	struct td_info info = {};

	info.size = sizeof(info);
	return td_query(td, &info) == 0 && (info.flags & TD_INFO_EMULATED);
}

// The counters of a whole run, put by one thread: Google Benchmark adds
// the threads' counters, so no other thread puts any.
inline void put_run(benchmark::State &state, const struct td_result &run,
		    columns which)
{
	using benchmark::Counter;

	for (int i = 0; i < TD_L1_COUNT; i++)
		state.counters[std::string(td_l1_name(i)) + "%"] =
			Counter(percent(run.l1[i]));
	if (which == level2 && (run.flags & TD_RESULT_L2))
		for (int i = 0; i < TD_L2_COUNT; i++)
			state.counters[std::string(td_l2_name(i)) + "%"] =
				Counter(percent(run.l2[i]));
	state.counters["err%"] = Counter(percent(run.err));
	state.counters["slots/iter"] = Counter(static_cast<double>(run.slots),
					       Counter::kAvgIterations);
}

}  // namespace detail

// Put this thread's result into state.counters, when bracketing the loop
// yourself: call it from every thread of the run.  As measure() does, the
// last thread to call it puts the run's slot-weighted mean, at 0.1
// resolution (Google Benchmark adds the threads' counters, so no other
// thread puts any, and no average of its own adds float noise).
inline void set_counters(benchmark::State &state, const struct td_result &res,
			 columns which = level1)
{
	struct td_result run;

	if (detail::add_to_run(state, &res, &run))
		detail::put_run(state, run, which);
}

// Run the benchmark's timing loop, calling body() once per iteration, as
// one region on this thread's handle, and report its breakdown.  Without
// a handle (td_open failed) the loop runs and is timed without TopDown
// counters.  When a call fails or the counts cannot be trusted
// (TD_RESULT_UNRELIABLE) the benchmark is skipped with the reason.
template <class Body>
void measure(benchmark::State &state, Body body, columns which = level1)
{
	struct td_region r = {};
	struct td_result res, run;
	int err = 0;
	struct td *td = thread_handle(&err);

	if (!td) {
		detail::say_unmeasured(err);
		detail::add_to_run(state, nullptr, &run);
		for (auto _ : state)
			body();
		return;
	}
	err = td_region_begin(td, &r);
	if (err < 0) {
		detail::add_to_run(state, nullptr, &run);
		state.SkipWithError(td_strerror(err));
		return;
	}
	for (auto _ : state)
		body();
	err = td_region_end(td, &r, &res);
	if (err < 0 || (res.flags & TD_RESULT_UNRELIABLE)) {
		detail::add_to_run(state, nullptr, &run);
		state.SkipWithError(err < 0 ? td_strerror(err)
				    : "TopDown counts unreliable for this run");
		return;
	}
	if (detail::emulated(td))
		state.SetLabel("EMULATED PMU");
	if (detail::add_to_run(state, &res, &run))
		detail::put_run(state, run, which);
}

}  // namespace topdown

#endif  // TOPDOWN_BENCHMARK_HPP
