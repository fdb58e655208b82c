#include "build_transitions_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "error.h"
#include "exit_codes.h"
#include "transition_matrix.h"

namespace cadenza::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// 1234567 -> "1,234,567"
std::string grouped(uint64_t value) {
    std::string digits = std::to_string(value), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

std::string mebibytes(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return text;
}

std::string file_size_text(uint64_t bytes) { return grouped(bytes) + " bytes (" + mebibytes(bytes) + ")"; }

std::string format_seconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f s", seconds);
    return text;
}

// Bigram counts keyed by from * V + to. Keys are buffered, then sorted and
// merged into the sorted distinct (key, count) list, so memory follows the
// number of distinct bigrams, not the corpus size.
class BigramCounter {
public:
    // `expected_keys`: a guess of the bigrams to come (at most one per two
    // corpus bytes), so that a small corpus does not reserve the whole buffer.
    BigramCounter(uint64_t vocab, uint64_t expected_keys) : vocab_(vocab) {
        buffer_.reserve(static_cast<size_t>(std::min<uint64_t>(buffer_capacity, expected_keys)));
    }

    void add(uint64_t from, uint64_t to) {
        buffer_.push_back(from * vocab_ + to);
        if (buffer_.size() == buffer_capacity) flush();
    }

    void flush() {
        if (buffer_.empty()) return;
        std::sort(buffer_.begin(), buffer_.end());
        std::vector<uint64_t> keys, counts;
        keys.reserve(keys_.size() + buffer_.size());
        counts.reserve(keys_.size() + buffer_.size());
        size_t old = 0, fresh = 0;
        while (old < keys_.size() || fresh < buffer_.size()) {
            uint64_t key, count = 0;
            if (fresh >= buffer_.size() || (old < keys_.size() && keys_[old] <= buffer_[fresh])) {
                key = keys_[old];
                count = counts_[old++];
            } else {
                key = buffer_[fresh];
            }
            while (fresh < buffer_.size() && buffer_[fresh] == key) {
                ++count;
                ++fresh;
            }
            keys.push_back(key);
            counts.push_back(count);
        }
        keys_.swap(keys);
        counts_.swap(counts);
        buffer_.clear();
    }

    const std::vector<uint64_t>& keys() const { return keys_; }      // after flush()
    const std::vector<uint64_t>& counts() const { return counts_; }

private:
    static constexpr size_t buffer_capacity = size_t{1} << 23;  // 64 MiB of keys
    uint64_t vocab_;
    std::vector<uint64_t> buffer_, keys_, counts_;
};

struct CorpusStats {
    uint64_t sequences = 0;  // non-blank lines
    uint64_t tokens = 0;
    uint64_t bigrams = 0;
    uint64_t lines = 0;
};

struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
};

// Progress on standard error for corpora that take more than a moment:
// rewritten in place on a terminal, one line per report otherwise.
class Progress {
public:
    explicit Progress(uint64_t total_bytes) : total_(total_bytes), start_(Clock::now()), last_(start_) {}

    void update(uint64_t bytes, uint64_t tokens) {
        const auto now = Clock::now();
        if (now - last_ < std::chrono::seconds(1)) return;
        last_ = now;
        shown_ = true;
        const double percent = total_ > 0 ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total_) : 100.0;
        char text[160];
        std::snprintf(text, sizeof(text), "build-transitions: %s of %s (%.0f%%), %s tokens, %.1f s",
                      mebibytes(bytes).c_str(), mebibytes(total_).c_str(), percent, grouped(tokens).c_str(),
                      std::chrono::duration<double>(now - start_).count());
        std::cerr << (terminal_ ? "\r" : "") << text << (terminal_ ? "" : "\n") << std::flush;
    }

    void finish() {
        if (shown_ && terminal_) std::cerr << '\n';
    }

private:
    uint64_t total_;
    Clock::time_point start_, last_;
    bool shown_ = false;
    bool terminal_ = isatty(STDERR_FILENO) != 0;
};

[[noreturn]] void corpus_error(const std::string& path, uint64_t line, const std::string& message) {
    throw Error(CDZ_STATUS_INVALID_ARGUMENT, path + ":" + std::to_string(line) + ": " + message);
}

// Reads the corpus in large blocks with a character-level state machine, so
// that lines of any length cost nothing extra.
CorpusStats count_corpus(const std::string& path, uint64_t vocab, BigramCounter& counter) {
    std::error_code error;
    const uint64_t total = std::filesystem::file_size(path, error);
    if (error) throw Error(CDZ_STATUS_INVALID_ARGUMENT, path + ": cannot read the corpus: " + error.message());
    std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
    if (!file) throw Error(CDZ_STATUS_INVALID_ARGUMENT, path + ": cannot open the corpus: " + std::strerror(errno));

    CorpusStats stats;
    Progress progress(total);
    std::vector<char> block(size_t{4} << 20);
    uint64_t line = 1, bytes = 0;
    bool line_has_tokens = false;
    bool have_previous = false;
    uint64_t previous = 0;
    // The token being read.
    bool in_token = false, malformed = false;
    uint64_t value = 0;
    std::string text;  // its first characters, for messages

    auto end_token = [&] {
        if (!in_token) return;
        in_token = false;
        if (malformed)
            corpus_error(path, line, "malformed token '" + text +
                                         "' (tokens are non-negative decimal integers separated by whitespace)");
        if (value >= vocab)
            corpus_error(path, line, "token " + text + " is out of range for --vocab " + std::to_string(vocab));
        ++stats.tokens;
        if (have_previous) {
            counter.add(previous, value);
            ++stats.bigrams;
        }
        previous = value;
        have_previous = true;
        line_has_tokens = true;
    };
    auto end_line = [&] {
        end_token();
        if (line_has_tokens) ++stats.sequences;
        line_has_tokens = false;
        have_previous = false;
    };

    for (;;) {
        const size_t got = std::fread(block.data(), 1, block.size(), file.get());
        if (got == 0) {
            if (std::ferror(file.get()))
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, path + ": cannot read the corpus: " + std::strerror(errno));
            break;
        }
        for (size_t i = 0; i < got; ++i) {
            const char c = block[i];
            if (c >= '0' && c <= '9') {
                if (!in_token) {
                    in_token = true;
                    malformed = false;
                    value = 0;
                    text.clear();
                }
                if (value <= vocab) value = value * 10 + static_cast<uint64_t>(c - '0');  // saturates above vocab
                if (text.size() < 40) text.push_back(c);
            } else if (c == '\n') {
                end_line();
                ++line;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
                end_token();
            } else {
                if (!in_token) {
                    in_token = true;
                    value = 0;
                    text.clear();
                }
                malformed = true;
                if (text.size() < 40) text.push_back(c);
            }
        }
        bytes += got;
        progress.update(bytes, stats.tokens);
    }
    end_line();
    progress.finish();
    stats.lines = line;
    counter.flush();
    return stats;
}

// Q(i, j) = (c(i, j) + alpha) / (n(i) + alpha V), n(i) = sum_j c(i, j), in
// double, rounded once to float32. A row never seen as a predecessor with
// alpha = 0 is uniform.
TransitionMatrix smooth(const BigramCounter& counter, const BuildTransitionsOptions& options,
                        const CorpusStats& stats, int64_t top_n) {
    const auto vocab = static_cast<uint64_t>(options.vocab);
    const double alpha = options.alpha;
    const double v = static_cast<double>(vocab);
    const auto& keys = counter.keys();
    const auto& counts = counter.counts();
    TransitionMatrix::Provenance provenance{alpha, stats.sequences, stats.bigrams};

    // Rows in key order: [row_begin, row_end) of keys belong to row `row`.
    auto for_each_row = [&](auto&& body) {
        size_t begin = 0;
        for (uint64_t row = 0; row < vocab; ++row) {
            size_t end = begin;
            uint64_t total = 0;
            while (end < keys.size() && keys[end] / vocab == row) total += counts[end++];
            body(row, begin, end, total);
            begin = end;
        }
    };

    if (top_n == 0) {
        std::vector<float> values(vocab * vocab);
        for_each_row([&](uint64_t row, size_t begin, size_t end, uint64_t total) {
            float* out = values.data() + row * vocab;
            if (total == 0 && alpha == 0.0) {
                std::fill(out, out + vocab, static_cast<float>(1.0 / v));
                return;
            }
            const double denominator = static_cast<double>(total) + alpha * v;
            std::fill(out, out + vocab, static_cast<float>((0.0 + alpha) / denominator));
            for (size_t e = begin; e < end; ++e)
                out[keys[e] % vocab] = static_cast<float>((static_cast<double>(counts[e]) + alpha) / denominator);
        });
        return TransitionMatrix::make_dense(options.vocab, std::move(values), provenance, options.output);
    }

    std::vector<uint64_t> row_offsets{0};
    row_offsets.reserve(vocab + 1);
    std::vector<int32_t> ids;
    std::vector<float> probabilities, floors;
    floors.reserve(vocab);
    std::vector<size_t> order;  // entries of the row, by count then id
    for_each_row([&](uint64_t, size_t begin, size_t end, uint64_t total) {
        order.resize(end - begin);
        for (size_t e = begin; e < end; ++e) order[e - begin] = e;
        if (order.size() > static_cast<size_t>(top_n)) {
            std::partial_sort(order.begin(), order.begin() + top_n, order.end(), [&](size_t a, size_t b) {
                return counts[a] != counts[b] ? counts[a] > counts[b] : keys[a] < keys[b];
            });
            order.resize(static_cast<size_t>(top_n));
            std::sort(order.begin(), order.end());  // back to ascending ids
        }
        const uint64_t stored = order.size();
        const uint64_t unstored = vocab - stored;
        if (total == 0 && alpha == 0.0) {
            floors.push_back(static_cast<float>(1.0 / v));
        } else {
            const double denominator = static_cast<double>(total) + alpha * v;
            uint64_t stored_count = 0;
            for (size_t e : order) {
                ids.push_back(static_cast<int32_t>(keys[e] % vocab));
                probabilities.push_back(static_cast<float>((static_cast<double>(counts[e]) + alpha) / denominator));
                stored_count += counts[e];
            }
            // Every other token shares what is left: its own alpha plus the
            // counts of the observed successors beyond the top N.
            const double rest = static_cast<double>(total - stored_count) + alpha * static_cast<double>(unstored);
            floors.push_back(unstored > 0 ? static_cast<float>(rest / (denominator * static_cast<double>(unstored)))
                                          : 0.0f);
        }
        row_offsets.push_back(ids.size());
    });
    return TransitionMatrix::make_sparse(options.vocab, static_cast<uint32_t>(top_n), std::move(row_offsets),
                                         std::move(ids), std::move(probabilities), std::move(floors), provenance,
                                         options.output);
}

}  // namespace

int build_transitions(const BuildTransitionsOptions& options) {
    if (options.vocab < 1 || options.vocab > TransitionMatrix::max_vocab_size)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--vocab " + std::to_string(options.vocab) + " is out of range [1, " +
                                                     std::to_string(TransitionMatrix::max_vocab_size) + "]");
    if (!std::isfinite(options.alpha) || options.alpha < 0.0)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--alpha must be a finite number >= 0");
    int64_t top_n = options.sparse_top;
    if (top_n < 0) top_n = options.vocab <= dense_vocab_limit ? 0 : std::min(default_sparse_top, options.vocab);
    if (top_n > options.vocab)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--sparse-top " + std::to_string(top_n) +
                                                     " is larger than --vocab " + std::to_string(options.vocab));
    if (top_n == 0 && options.vocab > TransitionMatrix::max_dense_vocab_size)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "a dense matrix of vocabulary " + std::to_string(options.vocab) + " would take " +
                        mebibytes(static_cast<uint64_t>(options.vocab) * options.vocab * 4) +
                        "; use --sparse-top N");

    const auto start = Clock::now();
    std::error_code size_error;
    const uint64_t corpus_bytes = std::filesystem::file_size(options.corpus, size_error);
    BigramCounter counter(static_cast<uint64_t>(options.vocab), size_error ? 0 : corpus_bytes / 2 + 1);
    const CorpusStats stats = count_corpus(options.corpus, static_cast<uint64_t>(options.vocab), counter);
    if (stats.tokens == 0) throw Error(CDZ_STATUS_INVALID_ARGUMENT, options.corpus + ": the corpus holds no tokens");
    const double read_seconds = seconds_since(start);
    std::cout << "read " << options.corpus << ": " << grouped(stats.sequences) << " sequences, "
              << grouped(stats.tokens) << " tokens, " << grouped(stats.bigrams) << " bigrams ("
              << grouped(counter.keys().size()) << " distinct) in " << format_seconds(read_seconds) << '\n';

    const auto write_start = Clock::now();
    try {
        const TransitionMatrix matrix = smooth(counter, options, stats, top_n);
        matrix.save(options.output);
        std::cout << "wrote " << options.output << ": "
                  << (matrix.is_sparse() ? "sparse (top " + std::to_string(top_n) + " per row + floor)" : "dense")
                  << ", vocabulary " << options.vocab << ", alpha " << options.alpha << ", "
                  << grouped(matrix.stored_entries()) << " stored entries, " << file_size_text(matrix.file_size())
                  << " in " << format_seconds(seconds_since(write_start)) << '\n';
    } catch (const TransitionFileError& error) {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, error.what());
    }
    std::cout << "total " << format_seconds(seconds_since(start)) << '\n';
    return exit_ok;
}

Command add_build_transitions_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "build-transitions", "count token bigrams over a corpus into the transition matrix of acceptor.viterbi");
    auto options = std::make_shared<BuildTransitionsOptions>();
    command->add_option("--corpus", options->corpus,
                        "token corpus: one sequence per line, whitespace-separated non-negative integers")
        ->required()
        ->check(CLI::ExistingFile);
    command->add_option("--vocab", options->vocab, "vocabulary size V; every token must be < V")
        ->required()
        ->check(CLI::Range(int64_t{1}, TransitionMatrix::max_vocab_size));
    command->add_option("--alpha", options->alpha, "add-alpha smoothing of the bigram counts (default 0.1)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--output", options->output, "the transitions file to write")->required();
    command->add_option("--sparse-top", options->sparse_top,
                        "sparse rows keeping the N most frequent successors plus a floor; 0: dense; "
                        "default: dense up to V = 4096, else sparse with N = 64")
        ->check(CLI::NonNegativeNumber);
    return {command, [options] { return build_transitions(*options); }};
}

}  // namespace cadenza::cli
