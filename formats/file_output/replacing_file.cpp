#include "replacing_file.h"

#include <unistd.h>

#include <string>
#include <system_error>
#include <utility>

namespace cadenza::file_output {

ReplacingFile::ReplacingFile(std::filesystem::path destination) : destination_(std::move(destination)) {
    std::error_code error;
    const std::filesystem::file_status link = std::filesystem::symlink_status(destination_, error);
    const std::filesystem::file_status target = std::filesystem::status(destination_, error);
    if (std::filesystem::is_directory(target))
        throw OutputFileError(destination_.string() + ": is a directory, not a file to write");
    through_ = std::filesystem::is_symlink(link) ||
               (std::filesystem::exists(target) && !std::filesystem::is_regular_file(target));
    if (through_) {
        write_path_ = destination_;
        return;
    }
    // Unique per process, so that two writers of one path do not share it.
    write_path_ = destination_.string() + ".partial-" + std::to_string(::getpid());
}

ReplacingFile::~ReplacingFile() {
    if (committed_ || through_) return;
    std::error_code ignored;
    std::filesystem::remove(write_path_, ignored);
}

void ReplacingFile::commit() {
    if (through_ || committed_) return;
    std::error_code error;
    std::filesystem::rename(write_path_, destination_, error);
    if (error) throw OutputFileError(destination_.string() + ": cannot move the written file into place: " + error.message());
    committed_ = true;
}

}  // namespace cadenza::file_output
