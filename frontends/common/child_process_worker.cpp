#include "child_process_worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::frontend {
namespace {

using Clock = std::chrono::steady_clock;

// Messages: an 8-byte length then the bytes; an answer first has one byte,
// 0 for the handler's answer, 1 for the message of what it threw.
enum class Transfer { done, closed, timed_out, failed };

Transfer send_all(int fd, const void* data, size_t size) {
    const char* at = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t sent = ::send(fd, at, size, MSG_NOSIGNAL);  // a dead child is an error, not SIGPIPE
        if (sent < 0 && errno == EINTR) continue;
        if (sent < 0) return errno == EPIPE || errno == ECONNRESET ? Transfer::closed : Transfer::failed;
        at += sent;
        size -= static_cast<size_t>(sent);
    }
    return Transfer::done;
}

// Reads exactly `size` bytes; with a deadline, waits no longer.
Transfer receive_all(int fd, void* data, size_t size, const Clock::time_point* deadline) {
    char* at = static_cast<char*>(data);
    while (size > 0) {
        if (deadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
            if (left <= 0) return Transfer::timed_out;
            pollfd ready{fd, POLLIN, 0};
            const int polled = ::poll(&ready, 1, static_cast<int>(left));
            if (polled < 0 && errno == EINTR) continue;
            if (polled < 0) return Transfer::failed;
            if (polled == 0) return Transfer::timed_out;
        }
        const ssize_t got = ::recv(fd, at, size, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return errno == ECONNRESET ? Transfer::closed : Transfer::failed;
        if (got == 0) return Transfer::closed;
        at += got;
        size -= static_cast<size_t>(got);
    }
    return Transfer::done;
}

Transfer send_message(int fd, const std::string& bytes) {
    const uint64_t size = bytes.size();
    const Transfer header = send_all(fd, &size, sizeof size);
    return header == Transfer::done ? send_all(fd, bytes.data(), bytes.size()) : header;
}

[[noreturn]] void serve(int fd, const std::function<std::string(const std::string&)>& handler) {
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // a crash here is an answer, not a core file of the caller's memory
    // Nor a report from the caller's crash handlers (a crash reporter, a
    // fuzzer's, a sanitizer's): the child dies from the signal itself.
    for (const int signal : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS}) ::signal(signal, SIG_DFL);
    for (;;) {
        uint64_t size = 0;
        if (receive_all(fd, &size, sizeof size, nullptr) != Transfer::done) ::_exit(0);  // the caller closed
        std::string request(size, '\0');
        if (receive_all(fd, request.data(), request.size(), nullptr) != Transfer::done) ::_exit(0);
        unsigned char status = 0;
        std::string answer;
        try {
            answer = handler(request);
        } catch (const std::exception& error) {
            status = 1;
            answer = error.what();
        } catch (...) {
            status = 1;
            answer = "an exception that is not a std::exception";
        }
        if (send_all(fd, &status, 1) != Transfer::done || send_message(fd, answer) != Transfer::done) ::_exit(2);
    }
}

std::string describe(int wait_status) {
    if (WIFSIGNALED(wait_status)) {
        const int signal = WTERMSIG(wait_status);
        const char* name = ::strsignal(signal);
        return "died from signal " + std::to_string(signal) + " (" + (name ? name : "?") + ")";
    }
    if (WIFEXITED(wait_status)) return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
    return "ended with wait status " + std::to_string(wait_status);
}

}  // namespace

ChildProcessWorker::ChildProcessWorker(std::function<std::string(const std::string&)> handler, std::string what,
                                       ChildProcessLimits limits)
    : handler_(std::move(handler)), what_(std::move(what)), limits_(limits) {}

ChildProcessWorker::~ChildProcessWorker() { stop(false); }

void ChildProcessWorker::start() {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
        throw sdk::Error(CDZ_STATUS_IO_ERROR, what_ + ": no socket to a child process (" + std::strerror(errno) + ")");
    const pid_t child = ::fork();
    if (child < 0) {
        const int error = errno;
        ::close(ends[0]);
        ::close(ends[1]);
        throw sdk::Error(CDZ_STATUS_IO_ERROR, what_ + ": could not fork a child process (" + std::strerror(error) + ")");
    }
    if (child == 0) {
        ::close(ends[0]);
        serve(ends[1], handler_);
    }
    ::close(ends[1]);
    child_ = child;
    socket_ = ends[0];
}

int ChildProcessWorker::stop(bool kill_first) {
    if (socket_ >= 0) ::close(socket_);  // a waiting child reads the end and exits
    socket_ = -1;
    if (child_ <= 0) return 0;
    if (kill_first) ::kill(child_, SIGKILL);
    int status = 0;
    while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    child_ = 0;
    return status;
}

std::string ChildProcessWorker::call(const std::string& request) {
    if (child_ == 0) start();
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(limits_.deadline_ms);
    auto fail = [&](Transfer transfer, const std::string& reading) -> sdk::Error {
        if (transfer == Transfer::timed_out) {
            stop(true);
            return sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what_ + ": the child process did not answer within " +
                                                               std::to_string(limits_.deadline_ms) + " ms and was killed");
        }
        if (transfer == Transfer::closed)
            return sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what_ + ": the child process " + describe(stop(false)));
        const int error = errno;
        stop(true);
        return sdk::Error(CDZ_STATUS_IO_ERROR,
                          what_ + ": " + reading + " the child process failed (" + std::strerror(error) + ")");
    };
    Transfer transfer = send_message(socket_, request);
    if (transfer != Transfer::done) throw fail(transfer, "writing to");
    unsigned char status = 0;
    uint64_t size = 0;
    if ((transfer = receive_all(socket_, &status, 1, &deadline)) != Transfer::done ||
        (transfer = receive_all(socket_, &size, sizeof size, &deadline)) != Transfer::done)
        throw fail(transfer, "reading from");
    if (size > limits_.max_answer_bytes) {
        stop(true);
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what_ + ": the child process answered " + std::to_string(size) +
                                                          " bytes, more than " +
                                                          std::to_string(limits_.max_answer_bytes));
    }
    std::string answer(size, '\0');
    if ((transfer = receive_all(socket_, answer.data(), answer.size(), &deadline)) != Transfer::done)
        throw fail(transfer, "reading from");
    if (status != 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what_ + ": " + answer);
    return answer;
}

}  // namespace cadenza::frontend
