// The figures `cadenza bench` reports for each pipeline, the ceiling speedup
// they imply, and the table and JSON they are printed as.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decoding_stats.h"
#include "engine.h"

namespace cadenza::cli {

struct PipelineRun {
    std::string file;
    std::string name;
    DecodingStats stats;           // summed over every text
    Engine::CostProfile costs;     // measured on this pipeline's backbone and drafter
    bool has_drafter = false;
    bool verifies = true;
};

struct PipelineFigures {
    double tokens_per_second = 0;   // generated tokens per second of decoding loop
    double speedup = 0;             // over the first pipeline, same run
    double mean_accepted_length = 0;
    double target_passes_per_token = 0;
    double real_time_factor = 0;    // audio seconds per wall second
    std::vector<double> acceptance_by_position;
    // The step's pass after a proposal against the same pass after passes
    // of its own: what the draft's weights cost the target's in the caches.
    double pass_after_proposal_ratio = 1;
    // cost(nodes + 1) / cost(1), nodes per step as in the loop, times that ratio
    double verify_relative_cost = 1;
    double draft_relative_cost = 0;   // one draft level / one target token
    double draft_depth_per_step = 0;  // levels the loop drafted per step
    double draft_nodes_per_step = 0;  // nodes the loop drafted per step
    // The steps' own ceiling, E[tokens per step] / (verify + depth * draft).
    double decode_ceiling = 1;
    // The prompt's prefill per generated token, in one-token passes: the
    // same work in every pipeline, which no draft removes.
    double prefill_per_token = 0;
    // What a drafter with its own cache pays to read each synthesis's prompt,
    // per generated token in one-token passes: its first proposals beyond
    // the loop's other proposals (0 for a drafter that reads nothing but the
    // target's hidden state: its first proposal costs what the others do).
    double draft_prompt_per_token = 0;
    // The speedup the measured costs allow, the prompts included:
    // (prefill + 1) / (prefill + draft_prompt + 1 / decode_ceiling).
    double ceiling = 1;
    double realized = 0;              // speedup / ceiling
    // The target's passes per step in the loop itself, the prompt's prefill
    // left out (ms), and that against the first pipeline's when the first
    // drafts nothing (plain decoding: its one-token pass in the loop). The
    // ceiling's costs are isolated passes; these are what the steps cost.
    double step_pass_ms = 0;
    double step_pass_relative = 0;
    // The drafter's proposals in the loop (ms each): every one but the first
    // of each synthesis, against the cost model's proposal; and those firsts,
    // in which a drafter with its own cache also reads the prompt.
    double proposal_ms = 0;
    double first_proposal_ms = 0;
    // Plain decoding's figures: tok/s * cost(1), the share of the fastest
    // rate (one target pass per token) reached; and the target's passes
    // (prefill included) as a share of wall time.
    double one_pass_rate_share = 0;
    double target_wall_share = 0;
};

// Linear interpolation of the measured costs at `size` tokens.
double cost_at(const Engine::CostProfile& costs, double size);
// What the step's pass after a proposal is set against: the same pass timed
// in turns with it, or (not measured so) the sizes' own cost of that size;
// 0 without a step size.
double step_alone_seconds(const Engine::CostProfile& costs);

PipelineFigures compute_figures(const PipelineRun& run, const PipelineRun& baseline);

// A column a suite adds: to the table (between `realized` and the time
// split, right-aligned) or to the CSV (after the common columns).
struct ExtraColumn {
    std::string header;
    std::vector<std::string> cells;  // one per pipeline
};

// The heading, then print_bench_details.
void print_bench_table(std::ostream& out, const std::vector<PipelineRun>& runs,
                       const std::vector<PipelineFigures>& figures, size_t texts);

// One row per pipeline, the acceptance by position, the measured costs and
// the ceiling's formula. `rtf_header` names the RTF column.
void print_bench_details(std::ostream& out, const std::vector<PipelineRun>& runs,
                         const std::vector<PipelineFigures>& figures, const std::vector<ExtraColumn>& extra = {},
                         const std::string& rtf_header = "RTF");

// One row per pipeline after a header line; units are in the column names.
std::string bench_csv(const std::vector<PipelineRun>& runs, const std::vector<PipelineFigures>& figures,
                      const std::vector<ExtraColumn>& extra = {});

// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text);

nlohmann::json bench_json(const std::vector<PipelineRun>& runs, const std::vector<PipelineFigures>& figures,
                          size_t texts);

}  // namespace cadenza::cli
