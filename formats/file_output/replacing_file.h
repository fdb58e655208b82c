// Writing a file that replaces what is at a path: a regular file (or a new
// one) is written beside it and renamed over it once complete, so that a
// reader never sees half of it and a failed write leaves the old one. Any
// other kind of path is not replaced: a device or FIFO given as the output
// (/dev/null, /dev/stdout, a pipe), or a symbolic link to one, is written
// through, and a directory is refused. (Renaming over them turned
// `-o /dev/null` into a regular file, as root.) No LibTorch; C++17.
#pragma once

#include <filesystem>
#include <stdexcept>

namespace cadenza::file_output {

struct OutputFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ReplacingFile {
public:
    // Throws OutputFileError naming `destination` when it is a directory.
    explicit ReplacingFile(std::filesystem::path destination);
    ~ReplacingFile();  // removes an uncommitted temporary file
    ReplacingFile(const ReplacingFile&) = delete;
    ReplacingFile& operator=(const ReplacingFile&) = delete;

    // Where to write: the temporary file, or the destination itself.
    const std::filesystem::path& write_path() const { return write_path_; }
    const std::filesystem::path& destination() const { return destination_; }
    // Moves the written file into place (nothing to do when written through);
    // throws OutputFileError naming the destination.
    void commit();

private:
    std::filesystem::path destination_, write_path_;
    bool through_ = false, committed_ = false;
};

}  // namespace cadenza::file_output
