// The native recorder of a Python program's ATen calls (libmps_audit_recorder): a RecordFunction observer that keeps
// each distinct call once, with its counts, phases, sites and tests, and writes the calls file `mps-audit model
// --calls` replays (Note [Recording at the dispatcher] in recorder.cc). python/mps_audit_record.py loads it with
// ctypes and falls back to its own recorder where the library does not match the Python's torch.
//
// The C interface below is all Python sees. Strings in are UTF-8; bytes out are the library's, freed with
// mpsa_free(). Every function returns 0 on success and -1 on failure, with mpsa_error() saying why.
#pragma once

#include <cstddef>
#include <cstdint>

#define MPSA_API __attribute__((visibility("default")))

extern "C" {

// The libtorch version the library was built against ("2.14.1").
MPSA_API const char* mpsa_torch_version();
// Why the last call failed.
MPSA_API const char* mpsa_error();

// `site` is called, with the GIL taken by ctypes, when a call needs its site: it answers through mpsa_answer() with
// the phase ("forward", "loss", "optimizer"; "" to keep the recorder's) the site ("train.py:42") and that line's code.
// `backward` is 1 when the call runs in autograd's backward pass.
typedef void (*mpsa_site_fn)(int backward);
MPSA_API int mpsa_answer(const char* phase, const char* site, const char* code);

// Starts observing every thread's ATen calls. `suite`: 1 records only inside a context (a test's phase), 0 records
// everything (a program). `max_numel`: tensors with more elements are described (shape, strides, dtype, range), not
// kept.
MPSA_API int mpsa_start(int suite, int64_t max_numel, mpsa_site_fn site);
// Stops observing; what was recorded stays until mpsa_reset().
MPSA_API int mpsa_stop();
MPSA_API int mpsa_reset();

// The context of the calls from now on: a test's node id and its phase (setup, call, teardown); null: none.
MPSA_API int mpsa_set_context(const char* test, const char* when);

// Calls seen (kept or not), and distinct calls kept.
MPSA_API int64_t mpsa_total();
MPSA_API int64_t mpsa_distinct();

// What changed since the last delta, for a suite's journal (Note [A suite's recording survives its process] in
// python/mps_audit_suite.py): torch.load-able bytes of {"new": [[index, call]], "updates": [[index, count, seconds,
// out_bytes, phases, sites, tests of `test`]], "sources": {site: code}, "total": n, "dropped": {reason: n}}.
MPSA_API int mpsa_delta(const char* test, char** out, size_t* size);

// Writes the calls file (format mps-audit-calls/1) to `path`. `program_json`: a JSON list of the program's words;
// `error`: why the recording is incomplete, or "" when it is complete; `seconds`: its time.
MPSA_API int mpsa_save(const char* path, const char* program_json, const char* error, double seconds);

MPSA_API void mpsa_free(char* bytes);
}
