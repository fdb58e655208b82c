#include "bench_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace cadenza::cli {
namespace {

double decode_seconds(const DecodingStats& stats) { return stats.loop_seconds; }

std::string fixed(double value, int digits) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(digits) << value;
    return out.str();
}

std::string percent(double part, double whole) { return whole > 0 ? fixed(100.0 * part / whole, 0) + "%" : "-"; }

// Weight bytes streamed per second by a one-token pass (GB/s); 0 when unknown.
double weight_bandwidth(const Engine::CostProfile& costs) {
    const double one = cost_at(costs, 1);
    return costs.weight_bytes > 0 && one > 0 ? costs.weight_bytes / one / 1e9 : 0.0;
}

}  // namespace

double step_alone_seconds(const Engine::CostProfile& costs) {
    if (costs.step_alone_in_turns_seconds > 0) return costs.step_alone_in_turns_seconds;
    return costs.step_size > 0 ? cost_at(costs, costs.step_size) : 0.0;
}

double cost_at(const Engine::CostProfile& costs, double size) {
    const auto& sizes = costs.sizes;
    const auto& seconds = costs.verify_seconds;
    if (sizes.empty()) return 0.0;
    if (size <= sizes.front()) return seconds.front();
    for (size_t i = 1; i < sizes.size(); ++i) {
        if (size <= sizes[i]) {
            const double t = (size - sizes[i - 1]) / static_cast<double>(sizes[i] - sizes[i - 1]);
            return seconds[i - 1] + t * (seconds[i] - seconds[i - 1]);
        }
    }
    return seconds.back() * size / sizes.back();
}

namespace {

// Seconds of the target's pass a step of `run` pays, from its measured costs.
// A verifying step evaluates its n drafted nodes and the pending token: the
// mean of cost(n + 1) over the steps, not the cost of the mean n. Otherwise
// cost(evaluated).
double step_pass_seconds(const PipelineRun& run, double evaluated) {
    const std::vector<int64_t>& steps = run.stats.steps_by_draft_nodes();
    if (!run.verifies || run.stats.steps() == 0 || steps.empty()) return cost_at(run.costs, evaluated);
    double seconds = 0.0;
    for (size_t n = 0; n < steps.size(); ++n)
        if (steps[n] > 0) seconds += static_cast<double>(steps[n]) * cost_at(run.costs, static_cast<double>(n) + 1.0);
    return seconds / static_cast<double>(run.stats.steps());
}

}  // namespace

PipelineFigures compute_figures(const PipelineRun& run, const PipelineRun& baseline) {
    PipelineFigures f;
    const DecodingStats& s = run.stats;
    const double seconds = decode_seconds(s);
    f.tokens_per_second = seconds > 0 ? s.tokens_generated() / seconds : 0.0;
    const double baseline_seconds = decode_seconds(baseline.stats);
    const double baseline_rate = baseline_seconds > 0 ? baseline.stats.tokens_generated() / baseline_seconds : 0.0;
    f.speedup = baseline_rate > 0 ? f.tokens_per_second / baseline_rate : 0.0;
    f.mean_accepted_length = s.mean_accepted_length();
    f.target_passes_per_token = s.tokens_generated() ? static_cast<double>(s.target_passes()) / s.tokens_generated() : 0.0;
    f.real_time_factor = s.wall_seconds > 0 ? s.audio_seconds / s.wall_seconds : 0.0;
    f.acceptance_by_position = s.acceptance_by_depth();

    f.target_wall_share = s.wall_seconds > 0 ? s.verify_seconds / s.wall_seconds : 0.0;
    auto step_pass_ms = [](const DecodingStats& stats) {
        return stats.steps() > 0 ? 1e3 * (stats.verify_seconds - stats.prefill_seconds) / stats.steps() : 0.0;
    };
    f.step_pass_ms = step_pass_ms(s);
    const double plain_step_ms = baseline.has_drafter ? 0.0 : step_pass_ms(baseline.stats);
    f.step_pass_relative = plain_step_ms > 0 ? f.step_pass_ms / plain_step_ms : 0.0;
    const int64_t later_proposals = s.draft_passes() - s.first_draft_passes();
    if (later_proposals > 0) f.proposal_ms = 1e3 * (s.draft_seconds - s.first_draft_seconds) / later_proposals;
    if (s.first_draft_passes() > 0) f.first_proposal_ms = 1e3 * s.first_draft_seconds / s.first_draft_passes();
    const double one = cost_at(run.costs, 1);
    if (one <= 0) return f;
    f.one_pass_rate_share = f.tokens_per_second * one;
    // What the loop drafted per step; a drafter with a dynamic length
    // drafts less than its maximum. Without steps, the maximum.
    const bool drafted = run.has_drafter && s.steps() > 0;
    f.draft_depth_per_step = drafted ? s.mean_draft_depth() : run.costs.draft_depth;
    f.draft_nodes_per_step = drafted ? s.mean_draft_nodes() : run.costs.draft_nodes;
    // A verifying step evaluates the pending token and every draft node; a
    // non-verifying one evaluates the tokens it emitted last time.
    const double evaluated = run.verifies ? f.draft_nodes_per_step + 1.0 : std::max(1.0, f.mean_accepted_length);
    const double step_alone = step_alone_seconds(run.costs);
    if (run.has_drafter && step_alone > 0 && run.costs.step_after_proposal_seconds > 0)
        f.pass_after_proposal_ratio = run.costs.step_after_proposal_seconds / step_alone;
    f.verify_relative_cost = step_pass_seconds(run, evaluated) * f.pass_after_proposal_ratio / one;
    const double level_seconds = run.costs.draft_level_seconds > 0 ? run.costs.draft_level_seconds
                                 : run.costs.draft_depth > 0      ? run.costs.draft_seconds / run.costs.draft_depth
                                                                  : 0.0;
    f.draft_relative_cost = level_seconds / one;
    double step_cost = f.verify_relative_cost + f.draft_depth_per_step * f.draft_relative_cost;
    // draft_ahead: a step that verifies a continuation drafted it during
    // the last step's pass, paying the longer of the two, not their sum.
    if (s.steps() > 0 && s.continued_steps() > 0)
        step_cost -= static_cast<double>(s.continued_steps()) / static_cast<double>(s.steps()) *
                     std::min(f.verify_relative_cost, f.draft_depth_per_step * f.draft_relative_cost);
    f.decode_ceiling = f.mean_accepted_length / step_cost;
    f.prefill_per_token = s.tokens_generated() > 0 ? s.prefill_seconds / s.tokens_generated() / one : 0.0;
    const double first_beyond_later =
        s.first_draft_seconds - static_cast<double>(s.first_draft_passes()) * f.proposal_ms * 1e-3;
    if (later_proposals > 0 && s.tokens_generated() > 0)
        f.draft_prompt_per_token = std::max(0.0, first_beyond_later) / s.tokens_generated() / one;
    f.ceiling = f.mean_accepted_length > 0
                    ? (f.prefill_per_token + 1.0) /
                          (f.prefill_per_token + f.draft_prompt_per_token + step_cost / f.mean_accepted_length)
                    : 0.0;
    f.realized = f.ceiling > 0 ? f.speedup / f.ceiling : 0.0;
    return f;
}

void print_bench_table(std::ostream& out, const std::vector<PipelineRun>& runs,
                       const std::vector<PipelineFigures>& figures, size_t texts) {
    out << "cadenza bench: " << runs.size() << " pipeline(s), " << texts
        << " text(s) each, same seeds; speedup is over the first pipeline in this run\n\n";
    print_bench_details(out, runs, figures);
}

void print_bench_details(std::ostream& out, const std::vector<PipelineRun>& runs,
                         const std::vector<PipelineFigures>& figures, const std::vector<ExtraColumn>& extra,
                         const std::string& rtf_header) {
    const int rtf_width = std::max(8, static_cast<int>(rtf_header.size()) + 1);
    auto extra_width = [](const ExtraColumn& column) { return std::max(8, static_cast<int>(column.header.size()) + 1); };
    out << std::left << std::setw(22) << "pipeline" << std::right << std::setw(10) << "tokens" << std::setw(10)
        << "tok/s" << std::setw(9) << "speedup" << std::setw(9) << "mean acc" << std::setw(11) << "passes/tok"
        << std::setw(rtf_width) << rtf_header << std::setw(9) << "ceiling" << std::setw(10) << "realized";
    for (const auto& column : extra) out << std::setw(extra_width(column)) << column.header;
    out << "  overhead   loop: draft/verify/accept/overhead   outside loop\n";
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& s = runs[i].stats;
        const auto& f = figures[i];
        const double overhead = s.loop_overhead_seconds();
        const double outside = std::max(0.0, s.wall_seconds - s.loop_seconds);
        out << std::left << std::setw(22) << runs[i].name.substr(0, 21) << std::right << std::setw(10)
            << s.tokens_generated() << std::setw(10) << fixed(f.tokens_per_second, 1) << std::setw(8)
            << fixed(f.speedup, 2) << "x" << std::setw(9) << fixed(f.mean_accepted_length, 2) << std::setw(11)
            << fixed(f.target_passes_per_token, 3) << std::setw(rtf_width) << fixed(f.real_time_factor, 1)
            << std::setw(8) << fixed(f.ceiling, 2) << "x" << std::setw(9) << fixed(100.0 * f.realized, 0) << "%";
        for (const auto& column : extra) out << std::setw(extra_width(column)) << column.cells.at(i);
        out << std::setw(10) << percent(overhead, s.loop_seconds) << "   " << percent(s.draft_seconds, s.loop_seconds)
            << " / " << percent(s.verify_seconds, s.loop_seconds) << " / " << percent(s.accept_seconds, s.loop_seconds)
            << " / " << percent(overhead, s.loop_seconds) << "   " << percent(outside, s.wall_seconds) << " of wall\n";
    }

    out << "\nacceptance rate by draft position\n";
    for (size_t i = 0; i < runs.size(); ++i) {
        out << "  " << std::left << std::setw(22) << runs[i].name.substr(0, 21);
        if (figures[i].acceptance_by_position.empty()) out << "(no drafts)";
        for (double rate : figures[i].acceptance_by_position) out << ' ' << fixed(rate, 3);
        out << '\n';
    }

    out << "\ncosts measured on each pipeline's own models (median), after the mean context its texts decoded at; one "
           "token and the pipeline's step size timed in turns between themselves, the other sizes apart\n";
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& c = runs[i].costs;
        out << "  " << std::left << std::setw(22) << runs[i].name.substr(0, 21) << "after " << c.context_length
            << " tokens: target m=";
        for (size_t k = 0; k < c.sizes.size(); ++k)
            out << (k ? "," : "") << c.sizes[k] << ":" << fixed(c.verify_seconds[k] * 1e3, 2) << "ms("
                << fixed(c.verify_seconds[k] / c.verify_seconds[0], 2) << ")";
        if (weight_bandwidth(c) > 0)
            out << "  weights " << fixed(c.weight_bytes / 1e6, 1) << " MB at " << fixed(weight_bandwidth(c), 1)
                << " GB/s (m=1)";
        if (c.passes_without_logits) out << "  (passes of 2+ tokens without logits, as the loop asks none)";
        if (runs[i].has_drafter && c.step_size > 0)
            out << "  m=" << c.step_size << " after a proposal:" << fixed(c.step_after_proposal_seconds * 1e3, 2)
                << "ms (x" << fixed(figures[i].pass_after_proposal_ratio, 2) << " of "
                << fixed(step_alone_seconds(c) * 1e3, 2) << "ms in turns)";
        if (runs[i].has_drafter)
            out << "  draft " << fixed(c.draft_seconds * 1e3, 2) << " ms per proposal of " << fixed(c.draft_levels, 0)
                << " of " << c.draft_depth << " level(s), " << fixed(c.draft_level_seconds * 1e3, 3)
                << " ms per level = " << fixed(figures[i].draft_relative_cost, 3)
                << " of a target token; in the loop " << fixed(figures[i].draft_depth_per_step, 2) << " level(s), "
                << fixed(figures[i].draft_nodes_per_step, 2) << " node(s) per step";
        out << '\n';
    }
    out << "\nthe target's passes per step in the loop, the prompts' prefill left out (against the first pipeline's "
           "one-token pass in its loop; modeled: what the ceiling reads, cost(nodes + 1) / cost(1) above times the step's "
           "pass after a proposal / settled)\n";
    for (size_t i = 0; i < runs.size(); ++i) {
        out << "  " << std::left << std::setw(22) << runs[i].name.substr(0, 21) << std::right
            << fixed(figures[i].step_pass_ms, 2) << " ms";
        if (figures[i].step_pass_relative > 0) out << " (" << fixed(figures[i].step_pass_relative, 2) << ")";
        out << "; modeled " << fixed(figures[i].verify_relative_cost, 2) << "\n";
    }
    bool proposal_heading = false;
    for (size_t i = 0; i < runs.size(); ++i) {
        if (!runs[i].has_drafter || runs[i].stats.draft_passes() == 0) continue;
        if (!proposal_heading)
            out << "\nthe drafter's proposals in the loop (the first of each synthesis apart: a drafter with its own "
                   "cache reads the prompt in it; modeled: the cost model's proposal above)\n";
        proposal_heading = true;
        out << "  " << std::left << std::setw(22) << runs[i].name.substr(0, 21) << std::right
            << fixed(figures[i].proposal_ms, 3) << " ms each; modeled " << fixed(runs[i].costs.draft_seconds * 1e3, 3)
            << " ms; the first of each synthesis " << fixed(figures[i].first_proposal_ms, 3) << " ms\n";
        const DecodingStats& s = runs[i].stats;
        if (s.draft_ahead_seconds > 0 && s.steps() > 0)
            out << "  " << std::string(22, ' ') << "drafted ahead (draft_ahead): "
                << fixed(1e3 * s.draft_ahead_seconds / static_cast<double>(s.steps()), 3)
                << " ms a step beside the pass; " << fixed(100.0 * static_cast<double>(s.continued_steps()) /
                                                                static_cast<double>(s.steps()), 1)
                << "% of steps verified a continuation (each ms above: the loop's wait for a proposal)\n";
    }
    bool plain_heading = false;
    for (size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].has_drafter || figures[i].one_pass_rate_share <= 0) continue;
        if (!plain_heading)
            out << "\nplain decoding: tok/s against one target pass per token, 1 / cost(1); the target's passes "
                   "(prefill included) against wall time\n";
        plain_heading = true;
        const auto& s = runs[i].stats;
        const double one = cost_at(runs[i].costs, 1);
        out << "  " << std::left << std::setw(22) << runs[i].name.substr(0, 21) << std::right
            << fixed(figures[i].tokens_per_second, 1) << " tok/s = " << fixed(figures[i].one_pass_rate_share, 2)
            << " of 1 / " << fixed(one * 1e3, 2) << " ms (" << fixed(1.0 / one, 1) << " tok/s); target passes "
            << fixed(s.verify_seconds, 1) << " s of " << fixed(s.wall_seconds, 1) << " s wall ("
            << fixed(100.0 * figures[i].target_wall_share, 0) << "%), outside them "
            << fixed(100.0 * (1.0 - figures[i].target_wall_share), 0) << "%\n";
        if (s.wall_seconds <= 0) continue;
        auto share = [&](double seconds) { return fixed(100.0 * seconds / s.wall_seconds, 1) + "%"; };
        const double rest = s.wall_seconds - s.loop_seconds - s.prompt_seconds - s.audio_wait_seconds -
                            s.audio_finish_seconds;
        out << "  " << std::string(22, ' ') << "outside them: the prompt " << share(s.prompt_seconds)
            << " (frontend, voice prompt), the loop between passes " << share(s.loop_seconds - s.verify_seconds)
            << ", handing audio to the codec in the loop " << share(s.audio_wait_seconds)
            << ", the audio after the loop " << share(s.audio_finish_seconds) << ", the rest " << share(rest) << "\n";
    }
    out << "\nceiling = (p + 1) / (p + q + D / E): E the mean accepted length, D = cost(nodes + 1) / cost(1) x (the "
           "step's pass after a proposal / settled) + depth * draft / target with nodes and depth as the loop drafted "
           "them (the pass's cost averaged over the steps, the levels per step), p the prompts' prefill per "
           "generated token in one-token passes (the same work in every pipeline, which no draft removes), q the "
           "drafter's reading of the prompts per generated token in one-token passes (each synthesis's first "
           "proposal beyond the loop's other proposals: a drafter with its own cache reads the prompt there); the "
           "steps alone, E / D, are decode_ceiling in the JSON and CSV\n";
    for (size_t i = 0; i < runs.size(); ++i)
        out << "  " << std::left << std::setw(22) << runs[i].name.substr(0, 21) << std::right
            << "p = " << fixed(figures[i].prefill_per_token, 3) << ", q = " << fixed(figures[i].draft_prompt_per_token, 3)
            << ", E / D = " << fixed(figures[i].decode_ceiling, 2) << "x\n";
    out << "realized = speedup / ceiling\n";
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string bench_csv(const std::vector<PipelineRun>& runs, const std::vector<PipelineFigures>& figures,
                      const std::vector<ExtraColumn>& extra) {
    auto number = [](double value) {
        std::ostringstream text;
        text << std::setprecision(6) << value;
        return text.str();
    };
    std::ostringstream csv;
    csv << "pipeline,file,tokens,steps,tokens_per_second,speedup,mean_accepted_length,target_passes_per_token,"
           "audio_seconds,wall_seconds,real_time_factor_audio_s_per_wall_s,ceiling,realized_fraction,"
           "draft_share,verify_share,accept_share,loop_seconds,loop_overhead_share,codec_seconds,decode_ceiling,"
           "prefill_passes_per_token,draft_levels_per_step,draft_relative_cost_per_level,draft_prompt_passes_per_token";
    for (const auto& column : extra) csv << ',' << csv_field(column.header);
    csv << '\n';
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& s = runs[i].stats;
        const auto& f = figures[i];
        auto share = [&](double seconds) { return number(s.loop_seconds > 0 ? seconds / s.loop_seconds : 0.0); };
        csv << csv_field(runs[i].name) << ',' << csv_field(runs[i].file) << ',' << s.tokens_generated() << ','
            << s.steps() << ',' << number(f.tokens_per_second) << ',' << number(f.speedup) << ','
            << number(f.mean_accepted_length) << ',' << number(f.target_passes_per_token) << ','
            << number(s.audio_seconds) << ',' << number(s.wall_seconds) << ',' << number(f.real_time_factor) << ','
            << number(f.ceiling) << ',' << number(f.realized) << ',' << share(s.draft_seconds) << ','
            << share(s.verify_seconds) << ',' << share(s.accept_seconds) << ',' << number(s.loop_seconds) << ','
            << share(s.loop_overhead_seconds()) << ',' << number(s.codec_seconds) << ',' << number(f.decode_ceiling)
            << ',' << number(f.prefill_per_token) << ',' << number(f.draft_depth_per_step) << ','
            << number(f.draft_relative_cost) << ',' << number(f.draft_prompt_per_token);
        for (const auto& column : extra) csv << ',' << csv_field(column.cells.at(i));
        csv << '\n';
    }
    return csv.str();
}

nlohmann::json bench_json(const std::vector<PipelineRun>& runs, const std::vector<PipelineFigures>& figures,
                          size_t texts) {
    nlohmann::json result;
    result["texts"] = texts;
    result["baseline"] = runs.empty() ? "" : runs.front().file;
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        const auto& s = r.stats;
        const auto& f = figures[i];
        nlohmann::json costs;
        costs["sizes"] = r.costs.sizes;
        std::vector<double> milliseconds;
        for (double seconds : r.costs.verify_seconds) milliseconds.push_back(seconds * 1e3);
        costs["target_forward_ms"] = milliseconds;
        costs["draft_proposal_ms"] = r.costs.draft_seconds * 1e3;
        costs["draft_level_ms"] = r.costs.draft_level_seconds * 1e3;
        costs["draft_levels_per_proposal"] = r.costs.draft_levels;
        costs["passes_without_logits"] = r.costs.passes_without_logits;
        costs["step_size"] = r.costs.step_size;
        costs["step_after_proposal_ms"] = r.costs.step_after_proposal_seconds * 1e3;
        costs["step_alone_in_turns_ms"] = r.costs.step_alone_in_turns_seconds * 1e3;
        costs["pass_after_proposal_ratio"] = f.pass_after_proposal_ratio;
        costs["draft_depth"] = r.costs.draft_depth;
        costs["draft_nodes"] = r.costs.draft_nodes;
        costs["draft_relative_cost_per_level"] = f.draft_relative_cost;
        costs["verify_relative_cost"] = f.verify_relative_cost;
        costs["weight_bytes"] = r.costs.weight_bytes;
        costs["context_tokens"] = r.costs.context_length;
        costs["weight_gb_per_second_m1"] = weight_bandwidth(r.costs);
        result["pipelines"].push_back({
            {"file", r.file},
            {"name", r.name},
            {"tokens", s.tokens_generated()},
            {"steps", s.steps()},
            {"tokens_per_second", f.tokens_per_second},
            {"speedup", f.speedup},
            {"mean_accepted_length", f.mean_accepted_length},
            {"acceptance_by_position", f.acceptance_by_position},
            {"target_passes_per_token", f.target_passes_per_token},
            {"audio_seconds", s.audio_seconds},
            {"real_time_factor", f.real_time_factor},
            {"seconds", {{"wall", s.wall_seconds}, {"draft", s.draft_seconds}, {"first_drafts", s.first_draft_seconds},
                         {"verify", s.verify_seconds},
                         {"prefill", s.prefill_seconds}, {"accept", s.accept_seconds}, {"loop", s.loop_seconds},
                         {"loop_overhead", s.loop_overhead_seconds()}, {"codec", s.codec_seconds},
                         {"prompt", s.prompt_seconds}, {"audio_wait", s.audio_wait_seconds},
                         {"audio_finish", s.audio_finish_seconds}}},
            {"ceiling", f.ceiling},
            {"decode_ceiling", f.decode_ceiling},
            {"prefill_passes_per_token", f.prefill_per_token},
            {"draft_prompt_passes_per_token", f.draft_prompt_per_token},
            {"draft_levels_per_step", f.draft_depth_per_step},
            {"draft_nodes_per_step", f.draft_nodes_per_step},
            {"realized", f.realized},
            {"step_pass_ms", f.step_pass_ms},
            {"step_pass_relative", f.step_pass_relative},
            {"proposal_ms", f.proposal_ms},
            {"first_proposal_ms", f.first_proposal_ms},
            {"one_pass_rate_share", f.one_pass_rate_share},
            {"target_wall_share", f.target_wall_share},
            {"costs", costs},
        });
    }
    return result;
}

}  // namespace cadenza::cli
