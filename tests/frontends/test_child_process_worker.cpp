// ChildProcessWorker (frontends/common): a library's calls in a child
// process, and how their failures come back as errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"
#include "child_process_worker.h"

namespace cadenza::frontend {
namespace {

std::string failure_of(ChildProcessWorker& worker, const std::string& request) {
    try {
        worker.call(request);
    } catch (const sdk::Error& error) {
        return error.what();
    }
    return "";
}

// Answers "pid:N" with the child's process id, "count" with a counter kept
// in the child; "abort" aborts, "hang" waits forever, "throw" throws, "long"
// answers 5,000 bytes, anything else is echoed.
std::string test_handler(const std::string& request) {
    static int counter = 0;
    if (request == "pid") return std::to_string(::getpid());
    if (request == "count") return std::to_string(++counter);
    if (request == "abort") std::abort();
    if (request == "hang")
        for (;;) ::pause();
    if (request == "throw") throw std::runtime_error("the handler refused");
    if (request == "long") return std::string(5000, 'x');
    return request;
}

ChildProcessWorker make_worker() {
    ChildProcessLimits limits;
    limits.deadline_ms = 300;
    limits.max_answer_bytes = 1000;
    return ChildProcessWorker(test_handler, "the test's call", limits);
}

TEST(ChildProcessWorker, OneChildAnswersEveryCall) {
    ChildProcessWorker worker = make_worker();
    EXPECT_EQ(worker.child(), 0);
    EXPECT_EQ(worker.call("ipa"), "ipa");
    const pid_t child = worker.child();
    EXPECT_NE(child, 0);
    EXPECT_NE(child, ::getpid());
    EXPECT_EQ(worker.call("pid"), std::to_string(child));
    EXPECT_EQ(worker.call("count"), "1");
    EXPECT_EQ(worker.call("count"), "2");  // the child's state lasts between calls
    EXPECT_EQ(worker.call(""), "");
    const std::string with_nul("a\0b", 3);
    EXPECT_EQ(worker.call(with_nul), with_nul);
    const std::string large(300000, 'x');  // more than a socket buffer holds at once
    ChildProcessWorker roomy(test_handler, "echo");
    EXPECT_EQ(roomy.call(large), large);
}

TEST(ChildProcessWorker, AnAbortIsAnErrorNamingTheSignalAndTheNextCallStartsAFreshChild) {
    ChildProcessWorker worker = make_worker();
    worker.call("count");
    const std::string aborted = failure_of(worker, "abort");
    EXPECT_NE(aborted.find("the test's call: the child process died from signal 6"), std::string::npos) << aborted;
    EXPECT_EQ(worker.child(), 0);
    EXPECT_EQ(worker.call("count"), "1");
}

TEST(ChildProcessWorker, AHangIsKilledAtTheDeadline) {
    ChildProcessWorker worker = make_worker();
    const std::string hung = failure_of(worker, "hang");
    EXPECT_NE(hung.find("did not answer within 300 ms and was killed"), std::string::npos) << hung;
    EXPECT_EQ(worker.call("again"), "again");
}

TEST(ChildProcessWorker, WhatTheHandlerThrowsIsTheError) {
    ChildProcessWorker worker = make_worker();
    const pid_t child = (worker.call("start"), worker.child());
    EXPECT_EQ(failure_of(worker, "throw"), "the test's call: the handler refused");
    EXPECT_EQ(worker.child(), child);  // a refusal is an answer: the child goes on
}

TEST(ChildProcessWorker, AnAnswerOverTheLimitIsAnError) {
    ChildProcessWorker worker = make_worker();
    const std::string long_answer = failure_of(worker, "long");
    EXPECT_NE(long_answer.find("answered 5000 bytes, more than 1000"), std::string::npos) << long_answer;
    EXPECT_EQ(worker.call("short"), "short");
}

}  // namespace
}  // namespace cadenza::frontend
