#include "festival_voice.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "child_process.h"

namespace cadenza::speech_corpus {
namespace {

namespace fs = std::filesystem;

std::string scheme_string(const std::string& text) {
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') quoted += '\\';
        quoted += c == '\n' || c == '\t' ? ' ' : c;
    }
    return quoted + "\"";
}

std::string read_file(const std::string& path) {
    std::ifstream input(path);
    std::ostringstream content;
    content << input.rdbuf();
    return content.str();
}

// The script speaks each request inside unwind-protect, so that an error in
// one utterance is reported and the next one still runs. HTS voices take
// their speaking rate from hts_engine's "-r" option (a speed, the inverse of
// a stretch) and ignore Duration_Stretch; every other voice uses Duration_Stretch.
// `Utterance` does not evaluate its arguments, hence the eval.
std::string festival_script(const std::string& voice, const std::vector<FestivalRequest>& requests,
                            const std::vector<size_t>& order) {
    std::ostringstream script;
    script << "(voice_" << voice << ")\n"
           << "(set! cadenza_hts_params (if (boundp 'hts_engine_params) hts_engine_params nil))\n"
           << "(define (cadenza_speak index text stretch path segments)\n"
           << "  (format stderr \"cadenza-utterance %d\\n\" index)\n"
           << "  (if (equal? (Parameter.get 'Synth_Method) 'HTS)\n"
           << "      (set! hts_engine_params (cons (list \"-r\" (/ 1.0 stretch)) cadenza_hts_params))\n"
           << "      (Parameter.set 'Duration_Stretch stretch))\n"
           << "  (unwind-protect\n"
           << "    (let ((u (utt.synth (eval (list 'Utterance 'Text text)))))\n"
           << "      (if (not (equal? segments \"\")) (utt.save.segs u segments))\n"
           << "      (utt.save.wave u path 'riff))\n"
           << "    (format stderr \"cadenza-failed %d\\n\" index)))\n";
    char stretch[32];
    for (const size_t index : order) {
        const auto& request = requests[index];
        std::snprintf(stretch, sizeof(stretch), "%.4f", request.duration_stretch);
        script << "(cadenza_speak " << index << " " << scheme_string(request.text) << " " << stretch << " "
               << scheme_string(request.output_path) << " " << scheme_string(request.segments_path) << ")\n";
    }
    return script.str();
}

// festival's messages about one utterance: the lines after its marker.
std::string messages_of(const std::string& log, size_t index) {
    const std::string marker = "cadenza-utterance " + std::to_string(index) + "\n";
    const size_t start = log.find(marker);
    if (start == std::string::npos) return "";
    const size_t from = start + marker.size();
    const size_t end = log.find("cadenza-utterance ", from);
    std::string text;
    std::istringstream lines(log.substr(from, end == std::string::npos ? std::string::npos : end - from));
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line.rfind("cadenza-failed", 0) == 0) continue;
        if (!text.empty()) text += "; ";
        text += line;
    }
    return text;
}

// The line of festival's messages that says what went wrong.
std::string error_line(const std::string& messages) {
    std::string last, error;
    std::istringstream lines(messages);
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line.rfind("closing a file", 0) == 0) continue;
        last = line;
        if (line.find("ERROR") != std::string::npos) error = line;
    }
    return error.empty() ? last : error;
}

// The index of the last utterance festival started, or -1.
long last_started(const std::string& log) {
    const size_t at = log.rfind("cadenza-utterance ");
    if (at == std::string::npos) return -1;
    return std::strtol(log.c_str() + at + 18, nullptr, 10);
}

}  // namespace

std::vector<std::string> detect_festival_voices(const std::vector<std::string>& candidates) {
    if (!program_on_path("festival")) return {};
    const fs::path directory = fs::temp_directory_path() / ("cadenza-festival-" + std::to_string(::getpid()));
    fs::create_directories(directory);
    const std::string script = (directory / "voices.scm").string(), log = (directory / "voices.log").string();
    std::ofstream(script) << "(format stderr \"cadenza-voices %l\\n\" (voice.list))\n";
    const ChildOutcome outcome = run_child_process({"festival", "-b", script}, log, 60.0);
    const std::string output = read_file(log);
    fs::remove_all(directory);
    std::vector<std::string> found;
    if (!outcome.succeeded()) return found;
    const size_t at = output.find("cadenza-voices ");
    if (at == std::string::npos) return found;
    std::string listed = output.substr(at + 15, output.find('\n', at) - at - 15);
    for (char& c : listed)
        if (c == '(' || c == ')') c = ' ';
    std::istringstream names(listed);
    std::vector<std::string> installed;
    for (std::string name; names >> name;) installed.push_back(name);
    for (const auto& candidate : candidates)
        for (const auto& name : installed)
            if (name == candidate) found.push_back(candidate);
    return found;
}

std::vector<std::string> synthesize_with_festival(const std::string& voice, const std::vector<FestivalRequest>& requests,
                                                  const std::string& work_directory) {
    std::vector<std::string> errors(requests.size(), "festival did not speak it");
    std::vector<size_t> pending(requests.size());
    for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
    fs::create_directories(work_directory);
    const std::string script = (fs::path(work_directory) / "batch.scm").string();
    const std::string log = (fs::path(work_directory) / "batch.log").string();

    while (!pending.empty()) {
        for (const size_t index : pending) fs::remove(requests[index].output_path);
        {
            std::ofstream output(script);
            output << festival_script(voice, requests, pending);
            if (!output.flush()) throw std::runtime_error(script + ": cannot write the festival script");
        }
        fs::remove(log);
        // Generous: the slowest voice speaks a sentence in well under a second.
        const double timeout = 60.0 + 10.0 * static_cast<double>(pending.size());
        const ChildOutcome outcome = run_child_process({"festival", "-b", script}, log, timeout);
        if (!outcome.started) {
            for (const size_t index : pending) errors[index] = "cannot run festival";
            break;
        }
        const std::string messages = read_file(log);
        for (const size_t index : pending) {
            std::error_code error;
            if (fs::file_size(requests[index].output_path, error) > 44 && !error) {
                errors[index].clear();
            } else {
                const std::string said = messages_of(messages, index);
                errors[index] = "festival wrote no audio" + (said.empty() ? "" : ": " + said);
            }
        }
        if (outcome.succeeded()) break;
        // The process died: the utterance it was speaking is the culprit; the
        // ones after it never ran and get another process.
        const long culprit = last_started(messages);
        std::vector<size_t> rerun;
        bool after_culprit = false;
        for (const size_t index : pending) {
            if (static_cast<long>(index) == culprit) {
                after_culprit = true;
                errors[index] = "festival " + outcome.describe() + " on this sentence";
                continue;
            }
            if (after_culprit && !errors[index].empty()) rerun.push_back(index);
        }
        if (culprit < 0) {
            // It died before speaking anything (the voice did not load): the
            // same script would fail again.
            const std::string reason = error_line(messages);
            for (const size_t index : pending)
                errors[index] = "festival " + outcome.describe() + (reason.empty() ? "" : ": " + reason);
            break;
        }
        pending = rerun;
    }
    fs::remove(script);
    fs::remove(log);
    return errors;
}

}  // namespace cadenza::speech_corpus
