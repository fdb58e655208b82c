#include "espeak_engine.h"

#include <espeak-ng/speak_lib.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

#include "cadenza/sdk/plugin_error.hpp"
#include "child_process_worker.h"
#include "utf8.h"

namespace cadenza::frontend::espeak {
namespace {

std::mutex g_mutex;                      // guards every espeak-ng call and the state below
std::optional<std::string> g_data_path;  // set once espeak-ng is initialized
// The voice this library selected last, and espeak-ng's identifier of it
// then. Each espeak-ng voice change copies the voice into the synthesis
// queue, which only audio synthesis frees (espeak-ng 1.51, DoVoiceChange):
// selecting the voice before every encode would leak 1.3 KB per encode, so
// it is selected again only when it changed, here or elsewhere.
std::string g_selected_voice;
std::string g_selected_identifier;

bool same_text_ignoring_case(const char* a, const std::string& b) {
    if (std::strlen(a) != b.size()) return false;
    for (size_t i = 0; i < b.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// espeak_VOICE::languages: a priority byte then a NUL-terminated language,
// repeated, ending with a zero priority byte.
bool voice_declares_language(const espeak_VOICE* voice, const std::string& language) {
    if (!voice || !voice->languages) return false;
    for (const char* entry = voice->languages; *entry; entry += std::strlen(entry + 1) + 2)
        if (same_text_ignoring_case(entry + 1, language)) return true;
    return false;
}

// espeak_Initialize accepts any existing directory and then fails while
// reading it, so check for the phoneme table first.
void check_data_path(const std::string& data_path) {
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path path(data_path);
    if (fs::is_regular_file(path / "phontab", error) || fs::is_regular_file(path / "espeak-ng-data" / "phontab", error))
        return;
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                        "data_path '" + data_path +
                            "' is not an espeak-ng data directory (no phontab in it or in its espeak-ng-data subdirectory)");
}

std::string current_voice_identifier() {
    const espeak_VOICE* current = espeak_GetCurrentVoice();
    return current && current->identifier ? current->identifier : "";
}

// Requires g_mutex.
bool try_select_voice(const std::string& voice) {
    if (voice.empty()) return false;
    if (espeak_SetVoiceByName(voice.c_str()) == EE_OK) return true;
    // Like the espeak-ng program, take a language too ("en-gb"), but only one
    // some voice declares exactly, not the nearest match espeak-ng falls back to.
    espeak_VOICE wanted;
    std::memset(&wanted, 0, sizeof wanted);
    wanted.languages = voice.c_str();
    return espeak_SetVoiceByProperties(&wanted) == EE_OK &&
           voice_declares_language(espeak_GetCurrentVoice(), voice);
}

// Requires g_mutex.
void select_voice(const std::string& voice) {
    if (!g_selected_voice.empty() && voice == g_selected_voice &&
        current_voice_identifier() == g_selected_identifier)
        return;
    g_selected_voice.clear();
    if (try_select_voice(voice)) {
        g_selected_voice = voice;
        g_selected_identifier = current_voice_identifier();
        return;
    }
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                        "espeak-ng has no voice \"" + voice + "\" (try \"en-us\", \"en-gb\" or a voice file like \"gmw/en-US\")");
}

}  // namespace

void initialize(const std::string& data_path) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (g_data_path) {
        if (*g_data_path != data_path)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                                "espeak-ng is already initialized in this process with data_path '" + *g_data_path +
                                    "'; one process uses one data_path, not also '" + data_path + "'");
        return;
    }
    if (!data_path.empty()) check_data_path(data_path);
    const int sample_rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0,
                                              data_path.empty() ? nullptr : data_path.c_str(),
                                              espeakINITIALIZE_DONT_EXIT);
    if (sample_rate <= 0)
        throw sdk::Error(data_path.empty() ? CDZ_STATUS_IO_ERROR : CDZ_STATUS_INVALID_CONFIG,
                            "espeak-ng could not be initialized with " +
                                (data_path.empty() ? std::string("its default data directory")
                                                   : "data_path '" + data_path + "'"));
    g_data_path = data_path;
}

std::string voice_language(const std::string& voice) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    select_voice(voice);
    const espeak_VOICE* current = espeak_GetCurrentVoice();
    // espeak_VOICE::languages starts with a priority byte.
    return current && current->languages && current->languages[0] ? current->languages + 1 : voice;
}

std::string text_to_ipa(const std::string& voice, const std::string& text) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_data_path) throw sdk::Error(CDZ_STATUS_INTERNAL, "espeak-ng is not initialized");
    // espeak-ng 1.51 overflows stack buffers on some text ("s'" 220 times;
    // docs/reliability.md), so the conversion runs in a child process.
    static ChildProcessWorker worker(
        [](const std::string& request) {
            const size_t separator = request.find('\0');
            select_voice(request.substr(0, separator));
            std::string ipa;
            const void* position = request.c_str() + separator + 1;
            while (position) {
                const char* clause = espeak_TextToPhonemes(&position, espeakCHARS_UTF8, espeakPHONEMES_IPA);
                if (!clause) break;
                if (!*clause) continue;
                if (!ipa.empty()) ipa.push_back(' ');
                ipa += clause;
            }
            return ipa;
        },
        "espeak-ng converting the text to phonemes");
    return worker.call(voice + '\0' + text);
}

}  // namespace cadenza::frontend::espeak
