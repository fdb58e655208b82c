// Internal: a strict reader of STORED zip archives in memory (the container
// of torch.save files). Not installed; used by torch_checkpoint.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cadenza::torch_checkpoint::detail {

struct ZipEntry {
    std::string name;
    uint64_t header_offset = 0;  // of the local file header
    uint64_t data_offset = 0;    // of the entry's bytes
    uint64_t size = 0;           // stored = uncompressed size
    uint32_t crc = 0;            // CRC-32 from the central directory
};

// Parses the end records, the central directory and every local header of
// the archive in [data, data + size); throws TorchCheckpointError whose
// message starts with `where` on anything malformed, compressed, encrypted
// or out of bounds. The bytes must outlive the object.
class ZipArchive {
public:
    ZipArchive(const uint8_t* data, size_t size, std::string where, size_t max_entries);

    const std::vector<ZipEntry>& entries() const { return entries_; }
    const ZipEntry* find(const std::string& name) const;
    const uint8_t* bytes(const ZipEntry& entry) const { return data_ + entry.data_offset; }
    // Throws when the entry's CRC-32 differs from the central directory's.
    void verify_crc(const ZipEntry& entry) const;

private:
    void parse(size_t max_entries);
    [[noreturn]] void fail(const std::string& message) const;

    const uint8_t* data_;
    size_t size_;
    std::string where_;
    std::vector<ZipEntry> entries_;
    std::unordered_map<std::string, size_t> index_;
};

}  // namespace cadenza::torch_checkpoint::detail
