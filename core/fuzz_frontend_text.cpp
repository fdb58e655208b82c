// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a synthesis request's text
// as the engine hands it on: the core's check of the text, then the encode
// entry point of a frontend plugin loaded through the core as a pipeline
// loads it (the input's first byte picks frontend.chars, frontend.espeak or
// frontend.flite with the shipped vocabularies). Every input is encoded or
// refused with cadenza::Error (an error status from the plugin); ids outside
// the frontend's vocabulary, a crash or a sanitizer report is a bug, also
// one inside espeak-ng or flite (docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cadenza/plugin.h"
#include "error.h"
#include "managed_tensor.h"
#include "pipeline_config.h"
#include "plugin_instance.h"
#include "status_object.h"
#include "text_to_speak.h"

namespace {

class LoadedFrontend {
public:
    explicit LoadedFrontend(const std::string& table)
        : config_(cadenza::load_pipeline_config_string("[frontend]\n" + table, "frontend.toml",
                                                       CADENZA_SOURCE_DIR "/pipelines")),
          instance_(*config_.stage("frontend"), "cpu", 0) {
        info_.struct_size = sizeof(info_);
        cadenza::throw_if_error(vtable().get_info(instance_.context(), &info_), "get_info");
    }

    void encode(const std::string& text) {
        cadenza::ManagedTensor ids;
        cadenza::throw_if_error(vtable().encode(instance_.context(), text.c_str(), ids.out()), "encode");
        const auto shape = ids.expect(kDLInt, 32, 1, "ids");
        for (int64_t i = 0; i < shape[0]; ++i) {
            const int32_t id = ids.data<int32_t>()[i];
            if (id < 0 || id >= info_.vocab_size) __builtin_trap();
        }
    }

private:
    const cdz_frontend_vtable& vtable() const { return instance_.vtable<cdz_frontend_vtable>(); }
    cadenza::PipelineConfig config_;
    cadenza::PluginInstance instance_;
    cdz_frontend_info info_{};
};

LoadedFrontend& frontend(uint8_t choice) {
    static LoadedFrontend chars("plugin = \"frontend.chars\"\nvocabulary = \"../models/frontend/english_chars.vocab\"\n");
    static LoadedFrontend espeak("plugin = \"frontend.espeak\"\nvocabulary = \"../models/frontend/ipa.vocab\"\n");
    static LoadedFrontend flite("plugin = \"frontend.flite\"\nvocabulary = \"../models/frontend/cmu_phones.vocab\"\n");
    switch (choice % 3) {
        case 0: return chars;
        case 1: return espeak;
        default: return flite;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    LoadedFrontend& chosen = frontend(data[0]);
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        cadenza::check_text_to_speak(text, 1024);  // en-small's positions
        chosen.encode(text);
    } catch (const cadenza::Error&) {
    }
    return 0;
}
