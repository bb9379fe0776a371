// A sweep's jobs log into their own directories, and the console shows one line per job: the
// warnings a job's run said (no validation, a search skipped under fast_dev_run, ...) reached only
// its trainer.log. As each job ends, the launcher says the warnings of its log that the sweep has
// not said yet, once each, naming the job (the same warning in later jobs is not repeated).
#pragma once

#include <string>

namespace trainer::launch {

// A warning the sweep said itself (at planning): a job's copy of it is not said again.
void note_sweep_warning(const std::string& text);

// Says, on stderr, the warnings in `run_dir`'s log file(s) not said before in this process, as
// "[sweep] #<number> warned: <text>" (at most 10 a job; the rest counted).
void say_job_warnings(int number, const std::string& run_dir);

}  // namespace trainer::launch
