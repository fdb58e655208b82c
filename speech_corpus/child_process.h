#pragma once
// Runs a program and waits for it, with a time limit.
#include <string>
#include <vector>

namespace cadenza::speech_corpus {

struct ChildOutcome {
    bool started = false;    // false: the program could not be executed
    bool timed_out = false;  // killed after the time limit
    int exit_code = -1;      // when it exited normally
    int signal = 0;          // when a signal ended it
    bool succeeded() const { return started && !timed_out && signal == 0 && exit_code == 0; }
    std::string describe() const;  // "exit code 3", "killed by signal 11", ...
};

// Runs argv[0] (searched on PATH) with standard input from /dev/null,
// standard output discarded and standard error appended to `stderr_path`
// (discarded when empty).
ChildOutcome run_child_process(const std::vector<std::string>& argv, const std::string& stderr_path,
                               double timeout_seconds);

// True when `program` is an executable file on PATH.
bool program_on_path(const std::string& program);

}  // namespace cadenza::speech_corpus
