// How the phone markers of a target with phone markers follow the text
// (ELLA-V's inference). The target decides where a phone ends (the mass of
// all text ids), the text which phone comes next, so a phone is never
// skipped or repeated; after the last one no marker is allowed. A phone
// that reaches max_phone_seconds of frames is ended by force: the next
// marker, or after the last phone the end token, is all that may come.
#pragma once

#include <string>
#include <vector>

#include "engine_stages.h"
#include "logits_processor.h"
#include "parameter_values.h"

namespace cadenza {

class PhoneMarkerRule final : public LogitsProcessor {
public:
    static constexpr const char* kind = "phone_markers";
    static std::vector<cdz_param_spec> parameters();

    // Throws cadenza::Error (naming `source`) for a backbone without phone
    // markers.
    PhoneMarkerRule(const EngineStages& stages, const cdz_params& params, const std::string& source);

    // The phones are the prompt's text ids but the frontend's <bos> and <eos>.
    const char* name() const override { return kind; }
    void start(const std::vector<int32_t>& prompt, int64_t capacity) override;
    void apply(float* logits, int64_t vocab, const cdz_token_tree* draft) override;
    void append(const int32_t* tokens, size_t count) override;
    // Unverified drafts (Viterbi over MTP heads): whether a phone ends at a
    // row is drawn from the row's text-id mass, less what it gives phones
    // the earlier rows began (the row becomes the next phone's marker, or
    // its codes and end renormalized); the chosen markers are then renamed
    // to the phones in order; a phone at max_phone_seconds ends.
    void apply_unverified(float* rows, int32_t count, int64_t vocab, cdz_rng& rng) override;
    size_t rewrite_unverified(int32_t* tokens, size_t count) override;

private:
    const cdz_backbone_info info_;
    const int32_t bos_id_, eos_id_;   // frontend ids; -1: none
    const int64_t max_phone_frames_;  // 0: no limit

    std::vector<int32_t> phones_;     // the text's phones as backbone ids, in order
    size_t markers_emitted_ = 0;
    int64_t frames_since_marker_ = 0;  // audio frames emitted since the last marker
    // Markers and frames since the last marker on the path to each row.
    std::vector<size_t> row_markers_;
    std::vector<int64_t> row_frames_;
};

}  // namespace cadenza
