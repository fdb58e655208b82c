// The costs `cadenza bench` measures on each pipeline after its texts: one
// target pass of 1 to 32 tokens and of the size its drafter's steps verify,
// and one drafter proposal (median of `repeats`).
#pragma once

#include "engine.h"

namespace cadenza::cli {

Engine::CostProfile measure_bench_costs(Engine& engine, int repeats);

}  // namespace cadenza::cli
