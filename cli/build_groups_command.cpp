#include "build_groups_command.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "error.h"
#include "exit_codes.h"
#include "group_builder.h"
#include "safetensors.h"
#include "token_groups.h"

namespace cadenza::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string format_seconds(double seconds) {
    char text[64];
    if (seconds < 1.0)
        std::snprintf(text, sizeof(text), "%.1f ms", seconds * 1e3);
    else if (seconds < 120.0)
        std::snprintf(text, sizeof(text), "%.2f s", seconds);
    else
        std::snprintf(text, sizeof(text), "%.1f min (%.0f s)", seconds / 60.0, seconds);
    return text;
}

std::string format_bytes(uint64_t bytes) {
    char text[64];
    if (bytes < 10 * 1024)
        std::snprintf(text, sizeof(text), "%" PRIu64 " B", bytes);
    else if (bytes < 10 * 1024 * 1024)
        std::snprintf(text, sizeof(text), "%.1f KiB", bytes / 1024.0);
    else
        std::snprintf(text, sizeof(text), "%.1f MiB", bytes / (1024.0 * 1024.0));
    return text;
}

Error user_error(const std::string& message) { return Error(CDZ_STATUS_INVALID_ARGUMENT, message); }

// "START:END" with either side optional; END is exclusive.
std::pair<int64_t, int64_t> parse_rows(const std::string& text, int64_t row_count) {
    if (text.empty()) return {0, row_count};
    const size_t colon = text.find(':');
    if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
        throw user_error("--rows '" + text + "': expected START:END (END exclusive; either may be omitted)");
    auto parse = [&](const std::string& part, int64_t fallback) -> int64_t {
        if (part.empty()) return fallback;
        size_t used = 0;
        long long value = -1;
        try {
            value = std::stoll(part, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != part.size() || value < 0) throw user_error("--rows '" + text + "': '" + part + "' is not a row number");
        return value;
    };
    const int64_t begin = parse(text.substr(0, colon), 0);
    const int64_t end = parse(text.substr(colon + 1), row_count);
    if (begin >= end || end > row_count)
        throw user_error("--rows '" + text + "': need 0 <= START < END <= " + std::to_string(row_count) +
                         " (the tensor's row count)");
    return {begin, end};
}

struct SizeStatistics {
    uint64_t min = 0, max = 0, median = 0, singletons = 0;
    double mean = 0.0;
};

SizeStatistics statistics_of(std::vector<uint64_t> sizes) {
    SizeStatistics s;
    if (sizes.empty()) return s;
    std::sort(sizes.begin(), sizes.end());
    s.min = sizes.front();
    s.max = sizes.back();
    s.median = sizes[sizes.size() / 2];
    uint64_t total = 0;
    for (uint64_t size : sizes) {
        total += size;
        if (size == 1) ++s.singletons;
    }
    s.mean = static_cast<double>(total) / static_cast<double>(sizes.size());
    return s;
}

}  // namespace

int build_groups(const BuildGroupsOptions& options) {
    const auto start = Clock::now();
    namespace st = cadenza::safetensors;

    // Read the rows of the embedding matrix as float32.
    std::unique_ptr<st::Checkpoint> checkpoint;
    int64_t row_count = 0, dim = 0, begin = 0, end = 0;
    std::vector<float> embeddings;
    std::string dtype;
    try {
        checkpoint = std::make_unique<st::Checkpoint>(st::Checkpoint::open(options.embeddings));
        const st::TensorInfo& info = checkpoint->info(options.tensor);
        if (info.shape.size() != 2)
            throw user_error(checkpoint->file_of(options.tensor).where(options.tensor) + ": shape " +
                             st::shape_string(info.shape) + " is not a matrix [vocab, dim]");
        row_count = info.shape[0];
        dim = info.shape[1];
        dtype = st::dtype_name(info.dtype);
        if (row_count == 0 || dim == 0)
            throw user_error(checkpoint->file_of(options.tensor).where(options.tensor) + ": the matrix is empty");
        std::tie(begin, end) = parse_rows(options.rows, row_count);
        embeddings.resize(static_cast<size_t>((end - begin) * dim));
        checkpoint->read_f32_rows(options.tensor, begin, end, embeddings.data());
    } catch (const st::Error& error) {
        throw user_error(error.what());
    }
    const int64_t vocab = options.vocab_size >= 0 ? options.vocab_size : row_count;
    if (vocab < end)
        throw user_error("--vocab-size " + std::to_string(vocab) + " is smaller than the last row used (" +
                         std::to_string(end) + ")");
    if (vocab > (int64_t{1} << 32)) throw user_error("--vocab-size " + std::to_string(vocab) + " exceeds 2^32");
    const double read_seconds = seconds_since(start);
    std::cout << "embeddings: " << options.embeddings << ", tensor '" << options.tensor << "' (" << dtype << ", ["
              << row_count << ", " << dim << "]), rows " << begin << ":" << end << " (" << (end - begin)
              << " tokens), read in " << format_seconds(read_seconds) << '\n';
    std::cout << "theta: " << options.theta << " (a group holds the tokens whose cosine similarity exceeds it)\n"
              << std::flush;

    pcg::BuildOptions build;
    build.theta = options.theta;
    build.threads = options.threads;
    build.block_rows = static_cast<size_t>(options.block_rows);
    build.max_members = static_cast<uint64_t>(options.max_members);
    if (!options.quiet)
        build.progress = [](const pcg::BuildProgress& progress) {
            const double eta = progress.fraction > 0 ? progress.seconds * (1.0 - progress.fraction) / progress.fraction : 0;
            std::fprintf(stderr, "build-groups: block %zu/%zu, %5.1f%% of the similarities, %s elapsed, ~%s left\n",
                         progress.blocks_done, progress.blocks_total, 100.0 * progress.fraction,
                         format_seconds(progress.seconds).c_str(), format_seconds(eta).c_str());
        };
    const auto similarity_start = Clock::now();
    pcg::Neighborhoods neighborhoods;
    pcg::TokenGroups groups;
    try {
        neighborhoods = pcg::similarity_neighborhoods(embeddings.data(), static_cast<size_t>(end - begin),
                                                      static_cast<size_t>(dim), build);
        std::vector<float>().swap(embeddings);
        groups = pcg::distinct_groups(neighborhoods, static_cast<uint32_t>(begin), static_cast<uint64_t>(vocab),
                                      options.theta);
    } catch (const pcg::GroupsError& error) {
        throw user_error(error.what());
    }
    const double similarity_seconds = seconds_since(similarity_start);

    try {
        pcg::write_token_groups(options.output, groups);
    } catch (const pcg::GroupsError& error) {
        throw Error(CDZ_STATUS_IO_ERROR, error.what());
    }

    // Statistics: sizes of the distinct groups, and how many groups hold
    // each token of the range (N(t), the overlap).
    std::vector<uint64_t> sizes(groups.group_count());
    for (size_t k = 0; k < groups.group_count(); ++k) sizes[k] = groups.group_size(k);
    std::vector<uint64_t> overlap(static_cast<size_t>(end - begin), 0);
    for (uint32_t id : groups.members) ++overlap[id - static_cast<uint32_t>(begin)];
    const SizeStatistics group_sizes = statistics_of(sizes);
    const SizeStatistics memberships = statistics_of(overlap);
    const uint64_t shared = overlap.size() - memberships.singletons;
    const uint64_t file_bytes = pcg::groups_header_size + 8 * (groups.group_count() + 1) + 4 * groups.members.size();

    std::ostringstream report;
    report.setf(std::ios::fixed);
    report.precision(2);
    report << "groups: " << groups.group_count() << " distinct over " << (end - begin) << " tokens (vocabulary "
           << vocab << "; tokens outside the rows are singletons)\n";
    report << "group size: min " << group_sizes.min << ", mean " << group_sizes.mean << ", median "
           << group_sizes.median << ", max " << group_sizes.max << "; singleton groups: " << group_sizes.singletons
           << '\n';
    report << "groups per token: mean " << memberships.mean << ", max " << memberships.max
           << "; tokens in more than one group: " << shared << '\n';
    if (neighborhoods.zero_rows > 0)
        report << "zero-norm rows (similar to nothing): " << neighborhoods.zero_rows << '\n';
    report << "members: " << groups.members.size() << ", file " << format_bytes(file_bytes) << '\n';
    report << "time: similarities and groups " << format_seconds(similarity_seconds) << ", total "
           << format_seconds(seconds_since(start)) << '\n';
    report << "wrote " << options.output << '\n';
    std::cout << report.str() << std::flush;
    return exit_ok;
}

Command add_build_groups_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "build-groups", "acoustic similarity groups for acceptor.pcg from a token-embedding matrix (cosine > theta)");
    auto options = std::make_shared<BuildGroupsOptions>();
    command->add_option("--embeddings", options->embeddings,
                        "safetensors file, model.safetensors.index.json, or a checkpoint directory")
        ->required();
    command->add_option("--tensor", options->tensor, "name of the embedding matrix [vocab, dim]")->required();
    command->add_option("--rows", options->rows,
                        "START:END, the rows to group (END exclusive, e.g. the speech tokens); default all");
    command->add_option("--theta", options->theta, "cosine similarity threshold (the paper finds 0.38-0.45 best)")
        ->capture_default_str()
        ->check(CLI::Range(-1.0, 1.0));
    command->add_option("--output", options->output, "the groups file to write")->required();
    command->add_option("--vocab-size", options->vocab_size,
                        "vocabulary the acceptor sees (default: the tensor's row count); ids stay row numbers")
        ->check(CLI::PositiveNumber);
    command->add_option("--threads", options->threads, "worker threads (default: all cores)");
    command->add_option("--block", options->block_rows, "rows per block of work (one progress line each)")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    command->add_option("--max-members", options->max_members,
                        "refuse to build groups holding more entries than this (memory guard)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    command->add_flag("--quiet", options->quiet, "no progress lines");
    return {command, [options] { return build_groups(*options); }};
}

}  // namespace cadenza::cli
