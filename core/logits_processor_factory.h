// The logits processors a pipeline may list in [logits] processors, and the
// chain built from that list once the stages are created.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "logits_processor.h"
#include "pipeline_config.h"

namespace cadenza {

struct EngineStages;

struct LogitsProcessorKind {
    const char* name;                            // as the pipeline lists it
    std::vector<cdz_param_spec> (*parameters)();  // of its [logits.NAME] table
    std::unique_ptr<LogitsProcessor> (*create)(const EngineStages& stages, const cdz_params& params,
                                               const std::string& source);
};

const std::vector<LogitsProcessorKind>& logits_processor_kinds();
// Null for an unknown name.
const LogitsProcessorKind* find_logits_processor_kind(const std::string& name);

// The pipeline's processors in its order. Throws cadenza::Error when one
// does not fit the stages (guidance without a <pad>, markers without a
// backbone that places them).
LogitsProcessorChain build_logits_chain(const PipelineConfig& config, const EngineStages& stages);

}  // namespace cadenza
