#include "exit_codes.h"

#include <iostream>

#include "error.h"
#include "printable_text.h"
#include "replacing_file.h"
#include "safetensors.h"
#include "wav_file.h"

namespace cadenza::cli {

bool is_internal_error(const std::exception& error) {
    // Files the user gave that are not what they claim to be.
    if (dynamic_cast<const file_output::OutputFileError*>(&error) || dynamic_cast<const audio::AudioFileError*>(&error) ||
        dynamic_cast<const safetensors::Error*>(&error))
        return false;
    const auto* known = dynamic_cast<const Error*>(&error);
    return !known || known->code() == CDZ_STATUS_INTERNAL || known->code() == CDZ_STATUS_OUT_OF_MEMORY;
}

int report_exception(const std::exception& error) {
    std::cerr << "cadenza: error: " << printable_text(error.what()) << '\n';
    return is_internal_error(error) ? exit_internal_error : exit_user_error;
}

}  // namespace cadenza::cli
