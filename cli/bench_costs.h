// The costs `cadenza bench` measures on each pipeline after its texts: one
// target pass of 1 to 32 tokens and of the size its drafter's steps verify,
// and one drafter proposal (median of `repeats`). One token and the step's
// size, which the ceiling reads, are timed in turns between themselves; the
// other sizes apart, after them.
#pragma once

#include "engine.h"

namespace cadenza::cli {

Engine::CostProfile measure_bench_costs(Engine& engine, int repeats);

// One profile from a pipeline's profiles measured in several rounds (a
// machine whose speed drifts moves a few rounds, not the figure): the
// median one-token pass, every other cost the median of the rounds' ratios
// to their own one-token pass times it (the step's pass after a proposal:
// the median of its ratio to the same pass alone), the median levels per
// proposal, the mean context; sizes, depth and nodes are the first round's
// (every round measures the same).
Engine::CostProfile median_costs(const std::vector<Engine::CostProfile>& rounds);

}  // namespace cadenza::cli
