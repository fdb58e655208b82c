// `cadenza build-groups` as a user runs it: embeddings written with the
// safetensors writer, the binary run through the shell, the groups file and
// the printed statistics checked; plus a brute-force comparison on a random
// matrix spread over several blocks and threads, and the user errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "safetensors.h"
#include "token_groups.h"

namespace {

namespace fs = std::filesystem;
namespace st = cadenza::safetensors;

struct CliRun {
    int exit_code = -1;
    std::string out, err;
};

class BuildGroupsCli : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        directory_ = fs::temp_directory_path() /
                     ("cadenza_build_groups_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(directory_);
        fs::create_directories(directory_);
    }
    void TearDown() override { fs::remove_all(directory_); }

    CliRun run(const std::string& arguments) const {
        const fs::path out = directory_ / "stdout.txt", err = directory_ / "stderr.txt";
        const std::string command = std::string("'") + CADENZA_CLI + "' build-groups " + arguments + " > '" +
                                    out.string() + "' 2> '" + err.string() + "'";
        const int status = std::system(command.c_str());
        CliRun result;
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        auto slurp = [](const fs::path& path) {
            std::ifstream in(path);
            return std::string(std::istreambuf_iterator<char>(in), {});
        };
        result.out = slurp(out);
        result.err = slurp(err);
        return result;
    }

    fs::path directory_;
};

// Rows 2..8 of a 10-row matrix are the "speech tokens"; with theta 0.9:
// G(2) = {2,3}, G(3) = {2,3,4}, G(4) = {3,4}, G(5) = G(7) = {5,7}, G(6) = {6},
// and row 8 (zero norm) = {8}.
std::vector<float> small_matrix() {
    return {
        0.3f,  0.3f,   0.3f, 0.3f,    // row 0 (outside the range)
        -1.0f, 0.0f,   0.0f, 0.0f,    // row 1 (outside the range)
        1.0f,  0.0f,   0.0f, 0.0f,    // row 2
        0.95f, 0.312f, 0.0f, 0.0f,    // row 3: cos 0.95 with 2
        0.8f,  0.6f,   0.0f, 0.0f,    // row 4: cos 0.8 with 2, 0.947 with 3
        0.0f,  0.0f,   2.0f, 0.0f,    // row 5
        0.0f,  0.0f,   0.0f, 1.0f,    // row 6
        0.0f,  0.0f,   0.99f, 0.141f, // row 7: cos 0.99 with 5, 0.141 with 6
        0.0f,  0.0f,   0.0f, 0.0f,    // row 8: zero
        0.5f,  0.5f,   0.5f, 0.5f,    // row 9 (outside the range)
    };
}

TEST_F(BuildGroupsCli, WritesTheGroupsAndPrintsStatistics) {
    const std::vector<float> matrix = small_matrix();
    st::Writer writer;
    writer.add_bf16("model.embed_tokens.weight", {10, 4}, matrix.data());
    writer.write(directory_ / "model.safetensors");
    const fs::path output = directory_ / "groups.cdzgrp";
    const CliRun result = run("--embeddings '" + (directory_ / "model.safetensors").string() +
                           "' --tensor model.embed_tokens.weight --rows 2:9 --theta 0.9 --output '" +
                           output.string() + "'");
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;

    const cadenza::pcg::TokenGroups groups = cadenza::pcg::read_token_groups(output);
    EXPECT_EQ(groups.vocab_size, 10u);
    EXPECT_DOUBLE_EQ(groups.theta, 0.9);
    std::vector<std::vector<uint32_t>> sets;
    for (size_t k = 0; k < groups.group_count(); ++k)
        sets.emplace_back(groups.group_begin(k), groups.group_begin(k) + groups.group_size(k));
    const std::vector<std::vector<uint32_t>> expected = {{2, 3}, {2, 3, 4}, {3, 4}, {5, 7}, {6}, {8}};
    EXPECT_EQ(sets, expected);

    EXPECT_NE(result.out.find("BF16, [10, 4]"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("groups: 6 distinct over 7 tokens (vocabulary 10"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("group size: min 1, mean 1.83, median 2, max 3; singleton groups: 2"),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("groups per token: mean 1.57, max 3; tokens in more than one group: 3"),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("zero-norm rows (similar to nothing): 1"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("time: similarities and groups "), std::string::npos) << result.out;
    EXPECT_TRUE(result.out.find(" ms,") != std::string::npos || result.out.find(" s,") != std::string::npos)
        << result.out;
    // Progress on standard error, one line per block.
    EXPECT_NE(result.err.find("block 1/1, 100.0%"), std::string::npos) << result.err;
}

TEST_F(BuildGroupsCli, MatchesBruteForceAcrossBlocksAndThreads) {
    const int64_t rows = 1000, dim = 24;
    std::mt19937_64 generator(2024);
    std::normal_distribution<float> normal;
    std::vector<float> matrix(static_cast<size_t>(rows * dim));
    // Clustered rows, so that groups are large and overlap.
    std::vector<float> centers(20 * dim);
    for (float& x : centers) x = normal(generator);
    for (int64_t t = 0; t < rows; ++t)
        for (int64_t d = 0; d < dim; ++d)
            matrix[t * dim + d] = centers[(t % 20) * dim + d] + 0.9f * normal(generator);
    st::Writer writer;
    writer.add_f32("embed", {rows, dim}, matrix.data());
    writer.write(directory_ / "random.safetensors");

    // Brute force in double precision.
    std::vector<double> norms(rows);
    for (int64_t t = 0; t < rows; ++t) {
        double s = 0.0;
        for (int64_t d = 0; d < dim; ++d) s += double(matrix[t * dim + d]) * matrix[t * dim + d];
        norms[t] = std::sqrt(s);
    }
    std::vector<double> cosines(static_cast<size_t>(rows * rows));
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < rows; ++j) {
            double dot = 0.0;
            for (int64_t d = 0; d < dim; ++d) dot += double(matrix[i * dim + d]) * matrix[j * dim + d];
            cosines[i * rows + j] = dot / (norms[i] * norms[j]);
        }
    // Theta in the middle of a gap of the similarities near 0.55, so that
    // float rounding cannot move a pair across it.
    std::vector<double> sorted;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = i + 1; j < rows; ++j) sorted.push_back(cosines[i * rows + j]);
    std::sort(sorted.begin(), sorted.end());
    double theta = 0.0, best = 1e9;
    for (size_t k = 1; k < sorted.size(); ++k)
        if (sorted[k] - sorted[k - 1] > 2e-5 && std::fabs(sorted[k] - 0.55) < best) {
            best = std::fabs(sorted[k] - 0.55);
            theta = 0.5 * (sorted[k] + sorted[k - 1]);
        }
    ASSERT_LT(best, 0.05);
    char theta_text[32];
    std::snprintf(theta_text, sizeof(theta_text), "%.12g", theta);
    std::vector<std::vector<uint32_t>> neighborhoods(rows);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < rows; ++j)
            if (i == j || cosines[i * rows + j] > theta) neighborhoods[i].push_back(static_cast<uint32_t>(j));
    std::vector<std::vector<uint32_t>> expected;
    for (const auto& set : neighborhoods)
        if (std::find(expected.begin(), expected.end(), set) == expected.end()) expected.push_back(set);

    for (const std::string threads : {"1", "2"}) {
        const fs::path output = directory_ / ("random_" + threads + ".cdzgrp");
        const CliRun result = run("--embeddings '" + (directory_ / "random.safetensors").string() +
                               "' --tensor embed --theta " + theta_text + " --block 96 --threads " + threads + " --output '" +
                               output.string() + "'");
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        const cadenza::pcg::TokenGroups groups = cadenza::pcg::read_token_groups(output);
        std::vector<std::vector<uint32_t>> sets;
        for (size_t k = 0; k < groups.group_count(); ++k)
            sets.emplace_back(groups.group_begin(k), groups.group_begin(k) + groups.group_size(k));
        EXPECT_EQ(sets, expected) << "threads " << threads;
        EXPECT_NE(result.err.find("block 11/11"), std::string::npos) << result.err;
        EXPECT_GT(sets.size(), 100u);
    }
}

TEST_F(BuildGroupsCli, ReportsUserErrorsWithExitCodeOne) {
    const std::vector<float> matrix = small_matrix();
    const std::vector<int64_t> ids = {1, 2, 3};
    st::Writer writer;
    writer.add_f32("embed", {10, 4}, matrix.data());
    writer.add_f32("vector", {40}, matrix.data());
    writer.add_i64("ids", {3}, ids.data());
    writer.write(directory_ / "m.safetensors");
    const std::string model = "--embeddings '" + (directory_ / "m.safetensors").string() + "' ";
    const std::string output = " --output '" + (directory_ / "g.cdzgrp").string() + "'";
    struct Case {
        std::string arguments, fragment;
    } cases[] = {
        {model + "--tensor nope" + output, "no tensor named 'nope'"},
        {model + "--tensor vector" + output, "is not a matrix"},
        {model + "--tensor ids" + output, "is not a matrix"},
        {model + "--tensor embed --rows 5:20" + output, "--rows '5:20'"},
        {model + "--tensor embed --rows a:b" + output, "not a row number"},
        {model + "--tensor embed --vocab-size 4 --rows 0:8" + output, "--vocab-size 4"},
        {model + "--tensor embed --theta 2" + output, "theta"},
        {"--embeddings '" + (directory_ / "absent.safetensors").string() + "' --tensor embed" + output, "cannot open"},
        {model + "--tensor embed", "--output"},
    };
    for (const auto& c : cases) {
        const CliRun result = run(c.arguments);
        EXPECT_EQ(result.exit_code, 1) << c.arguments << '\n' << result.out << result.err;
        EXPECT_NE(result.err.find(c.fragment), std::string::npos) << c.arguments << '\n' << result.err;
    }
    EXPECT_FALSE(fs::exists(directory_ / "g.cdzgrp"));
}

}  // namespace
