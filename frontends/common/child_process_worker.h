// A child process that runs a library's calls which may corrupt memory on
// hostile input: a crash, an abort or a hang there becomes an error here,
// whatever the library scribbles over stays in the child, and the next call
// starts a fresh child. The child is forked from the caller on the first
// call (and after a failure), so it starts with the library's state as the
// caller left it (initialized, a voice selected) and needs no exec. It then
// serves requests over a socket until the caller closes it. Between fork
// and exit it calls nothing another thread of the caller may hold a lock on
// but malloc, which glibc keeps usable after fork.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace cadenza::frontend {

struct ChildProcessLimits {
    int deadline_ms = 10000;            // per call; then the child is killed
    size_t max_answer_bytes = 1 << 24;  // a longer answer is an error
};

class ChildProcessWorker {
public:
    // `handler` runs in the child, once per call, on the call's request.
    // `what` names the work in errors ("espeak-ng converting ...").
    ChildProcessWorker(std::function<std::string(const std::string&)> handler, std::string what,
                       ChildProcessLimits limits = {});
    ~ChildProcessWorker();  // the child sees the socket close and exits; it is then reaped
    ChildProcessWorker(const ChildProcessWorker&) = delete;
    ChildProcessWorker& operator=(const ChildProcessWorker&) = delete;

    // The handler's answer to `request`. Throws sdk::Error naming `what`:
    // CDZ_STATUS_IO_ERROR when no child can start, CDZ_STATUS_INVALID_ARGUMENT
    // when the child dies (naming the signal), overruns the deadline or the
    // answer limit, or the handler throws (its message). Not thread-safe:
    // callers serialize their calls.
    std::string call(const std::string& request);

    // The running child's process id, or 0 before the first call and after a failure.
    pid_t child() const { return child_; }

private:
    void start();
    // Kills (when `kill_first`) and reaps the child; returns its wait status.
    int stop(bool kill_first);

    std::function<std::string(const std::string&)> handler_;
    std::string what_;
    ChildProcessLimits limits_;
    pid_t child_ = 0;
    int socket_ = -1;  // the caller's end
};

}  // namespace cadenza::frontend
