#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace cadenza::speech_corpus {

std::string ChildOutcome::describe() const {
    if (!started) return "could not be started";
    if (timed_out) return "timed out and was killed";
    if (signal != 0) return "killed by signal " + std::to_string(signal);
    return "exit code " + std::to_string(exit_code);
}

ChildOutcome run_child_process(const std::vector<std::string>& argv, const std::string& stderr_path,
                               double timeout_seconds) {
    ChildOutcome outcome;
    std::vector<char*> arguments;
    for (const auto& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
    arguments.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) return outcome;
    if (pid == 0) {
        const int input = open("/dev/null", O_RDONLY);
        const int output = open("/dev/null", O_WRONLY);
        const int error = stderr_path.empty() ? open("/dev/null", O_WRONLY)
                                              : open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (input < 0 || output < 0 || error < 0) _exit(127);
        dup2(input, STDIN_FILENO);
        dup2(output, STDOUT_FILENO);
        dup2(error, STDERR_FILENO);
        execvp(arguments[0], arguments.data());
        _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    int status = 0;
    for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(20))) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0) return outcome;
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            outcome.started = true;
            outcome.timed_out = true;
            return outcome;
        }
        std::this_thread::sleep_for(pause);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return outcome;  // exec failed
    outcome.started = true;
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
    return outcome;
}

bool program_on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    if (!path) return false;
    std::istringstream directories(path);
    for (std::string directory; std::getline(directories, directory, ':');) {
        if (directory.empty()) directory = ".";
        if (access((directory + "/" + program).c_str(), X_OK) == 0) return true;
    }
    return false;
}

}  // namespace cadenza::speech_corpus
