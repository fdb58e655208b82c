#include "medusa_tree.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <queue>
#include <sstream>

#include "cadenza/sdk/plugin_error.hpp"
#include "replacing_file.h"

namespace cadenza::medusa {
namespace {

[[noreturn]] void fail(const std::string& where, size_t line, const std::string& message) {
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ":" + std::to_string(line) + ": " + message);
}

std::string trim(const std::string& text) {
    const auto begin = text.find_first_not_of(" \t\r");
    if (begin == std::string::npos) return "";
    return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

bool tree_order(const Choice& a, const Choice& b) { return a.size() != b.size() ? a.size() < b.size() : a < b; }

}  // namespace

std::string format_choice(const Choice& choice) {
    std::string text;
    for (size_t i = 0; i < choice.size(); ++i) text += (i ? "," : "") + std::to_string(choice[i]);
    return text;
}

std::vector<Choice> parse_choices(const std::string& text, const std::string& where, int64_t top_k) {
    std::map<Choice, size_t> line_of;
    std::istringstream stream(text);
    std::string raw;
    size_t line = 0;
    while (std::getline(stream, raw)) {
        ++line;
        const std::string content = trim(raw.substr(0, raw.find('#')));
        if (content.empty()) continue;
        Choice choice;
        std::istringstream fields(content);
        std::string field;
        bool trailing_comma = content.back() == ',';
        while (std::getline(fields, field, ',')) {
            const std::string rank = trim(field);
            if (rank.empty() || rank.find_first_not_of("0123456789") != std::string::npos || rank.size() > 9)
                fail(where, line, "malformed rank '" + rank + "' in '" + content +
                                      "' (a choice is non-negative integer ranks separated by commas, e.g. 0,1,2)");
            const long value = std::stol(rank);
            if (value >= top_k)
                fail(where, line, "rank " + rank + " of choice " + content + " is not below top_k = " +
                                      std::to_string(top_k));
            choice.push_back(static_cast<int32_t>(value));
        }
        if (trailing_comma) fail(where, line, "malformed choice '" + content + "' (it ends with a comma)");
        const auto [found, inserted] = line_of.emplace(choice, line);
        if (!inserted)
            fail(where, line, "choice " + format_choice(choice) + " repeats line " + std::to_string(found->second));
    }
    if (line_of.empty())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": no choices (one per line, e.g. 0 then 0,0 then 1)");
    std::vector<Choice> choices;
    for (const auto& [choice, at] : line_of) {
        if (choice.size() > 1) {
            const Choice prefix(choice.begin(), choice.end() - 1);
            if (!line_of.count(prefix))
                fail(where, at, "choice " + format_choice(choice) + " needs its prefix " + format_choice(prefix) +
                                    ", which the file does not list");
        }
        choices.push_back(choice);
    }
    std::sort(choices.begin(), choices.end(), tree_order);
    return choices;
}

std::vector<Choice> read_choices(const std::filesystem::path& path, int64_t top_k) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": cannot read the choices file");
    std::ostringstream text;
    text << file.rdbuf();
    return parse_choices(text.str(), path.string(), top_k);
}

void write_choices(const std::filesystem::path& path, const std::vector<Choice>& choices,
                   const std::vector<std::string>& comments) {
    std::ostringstream text;
    for (const auto& comment : comments) text << "# " << comment << '\n';
    for (const auto& choice : choices) text << format_choice(choice) << '\n';
    try {
        file_output::ReplacingFile output(path);
        std::ofstream file(output.write_path(), std::ios::binary | std::ios::trunc);
        if (!file) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, path.string() + ": cannot write the choices file");
        file << text.str();
        if (!file.flush()) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, path.string() + ": cannot write the choices file");
        file.close();
        output.commit();
    } catch (const file_output::OutputFileError& error) {
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, error.what());
    }
}

SparseTree make_tree(std::vector<Choice> choices) {
    std::sort(choices.begin(), choices.end(), tree_order);
    SparseTree tree;
    std::map<Choice, int32_t> index;
    for (size_t i = 0; i < choices.size(); ++i) {
        const Choice& choice = choices[i];
        if (choice.empty()) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "an empty choice");
        int32_t parent = -1;
        if (choice.size() > 1) {
            const auto found = index.find(Choice(choice.begin(), choice.end() - 1));
            if (found == index.end())
                throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "choice " + format_choice(choice) + " has no parent");
            parent = found->second;
        }
        if (!index.emplace(choice, static_cast<int32_t>(i)).second)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "choice " + format_choice(choice) + " appears twice");
        tree.parents.push_back(parent);
        tree.depth = std::max(tree.depth, static_cast<int32_t>(choice.size()));
    }
    tree.choices = std::move(choices);
    return tree;
}

double acceptance_probability(const Choice& choice, const RankAccuracy& accuracy) {
    double p = 1.0;
    for (size_t j = 0; j < choice.size(); ++j) {
        if (j >= accuracy.size() || choice[j] < 0 || static_cast<size_t>(choice[j]) >= accuracy[j].size()) return 0.0;
        p *= accuracy[j][static_cast<size_t>(choice[j])];
    }
    return p;
}

double expected_accepted_drafts(const std::vector<Choice>& choices, const RankAccuracy& accuracy) {
    double total = 0.0;
    for (const auto& choice : choices) total += acceptance_probability(choice, accuracy);
    return total;
}

std::vector<Choice> greedy_tree(const RankAccuracy& accuracy, int64_t budget, int64_t max_depth) {
    std::vector<Choice> chosen = greedy_order(accuracy, budget, max_depth);
    std::sort(chosen.begin(), chosen.end(), tree_order);
    return chosen;
}

CostedTree greedy_tree_per_cost(const RankAccuracy& accuracy, int64_t budget, int64_t max_depth, const StepCost& cost) {
    const std::vector<Choice> order = greedy_order(accuracy, budget, max_depth);
    CostedTree best;
    double expected = 1.0;
    int64_t depth = 0;
    for (size_t n = 1; n <= order.size(); ++n) {
        expected += acceptance_probability(order[n - 1], accuracy);
        depth = std::max<int64_t>(depth, static_cast<int64_t>(order[n - 1].size()));
        const double step_cost = cost(static_cast<int64_t>(n), depth);
        if (best.choices.empty() || (step_cost > 0 && expected / step_cost > best.speedup())) {
            best.choices.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n));
            best.expected_tokens = expected;
            best.step_cost = step_cost;
        }
    }
    std::sort(best.choices.begin(), best.choices.end(), tree_order);
    return best;
}

std::vector<Choice> greedy_order(const RankAccuracy& accuracy, int64_t budget, int64_t max_depth) {
    max_depth = std::min<int64_t>(max_depth, static_cast<int64_t>(accuracy.size()));
    struct Candidate {
        double value;
        Choice choice;
    };
    // The best candidate on top: higher value, then shorter, then smaller.
    auto worse = [](const Candidate& a, const Candidate& b) {
        if (a.value != b.value) return a.value < b.value;
        return tree_order(b.choice, a.choice);
    };
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> frontier(worse);
    auto push_children = [&](const Choice& parent, double value) {
        if (static_cast<int64_t>(parent.size()) >= max_depth) return;
        const auto& row = accuracy[parent.size()];
        for (size_t r = 0; r < row.size(); ++r) {
            Choice child = parent;
            child.push_back(static_cast<int32_t>(r));
            frontier.push({value * row[r], std::move(child)});
        }
    };
    std::vector<Choice> chosen;
    push_children({}, 1.0);
    while (static_cast<int64_t>(chosen.size()) < budget && !frontier.empty() && frontier.top().value > 0.0) {
        Candidate best = frontier.top();
        frontier.pop();
        push_children(best.choice, best.value);
        chosen.push_back(std::move(best.choice));
    }
    return chosen;
}

}  // namespace cadenza::medusa
