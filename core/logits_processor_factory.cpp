#include "logits_processor_factory.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "classifier_free_guidance.h"
#include "engine_stages.h"
#include "error.h"
#include "phone_marker_rule.h"

namespace cadenza {
namespace {

template <typename Processor>
std::unique_ptr<LogitsProcessor> create(const EngineStages& stages, const cdz_params& params,
                                        const std::string& source) {
    return std::make_unique<Processor>(stages, params, source);
}

}  // namespace

const std::vector<LogitsProcessorKind>& logits_processor_kinds() {
    static const std::vector<LogitsProcessorKind> kinds{
        {ClassifierFreeGuidance::kind, &ClassifierFreeGuidance::parameters, &create<ClassifierFreeGuidance>},
        {PhoneMarkerRule::kind, &PhoneMarkerRule::parameters, &create<PhoneMarkerRule>},
    };
    return kinds;
}

const LogitsProcessorKind* find_logits_processor_kind(const std::string& name) {
    for (const auto& kind : logits_processor_kinds())
        if (name == kind.name) return &kind;
    return nullptr;
}

LogitsProcessorChain build_logits_chain(const PipelineConfig& config, const EngineStages& stages) {
    LogitsProcessorChain chain;
    if (!stages.backbone) {
        if (!config.logits_processors.empty())
            throw Error(CDZ_STATUS_INVALID_CONFIG, config.source + ": [logits] processors need a [backbone]");
        return chain;
    }
    for (const auto& processor : config.logits_processors) {
        const LogitsProcessorKind* kind = find_logits_processor_kind(processor.name);
        if (!kind) throw Error(CDZ_STATUS_INVALID_CONFIG, config.source + ": unknown logits processor '" + processor.name + "'");
        chain.add(kind->create(stages, processor.params, config.source));
    }
    const bool has_rule = std::any_of(config.logits_processors.begin(), config.logits_processors.end(),
                                      [](const auto& processor) { return processor.name == PhoneMarkerRule::kind; });
    if (!chain.empty()) {
        std::string names;
        for (const auto& name : chain.names()) names += (names.empty() ? "" : ", ") + name;
        spdlog::debug("{}: logits processors: {}", config.source, names);
    }
    if (stages.backbone_info.phone_markers && !has_rule)
        spdlog::warn("{}: backbone '{}' places phone markers, but [logits] processors has no \"{}\": the markers "
                     "go wherever the target puts them, in any order",
                     config.source, stages.backbone->name(), PhoneMarkerRule::kind);
    return chain;
}

}  // namespace cadenza
