// Acoustic Similarity Groups (PCG, Yanuka et al., Eq. 1): overlapping sets of
// token ids, and the binary groups file that stores them (docs/formats.md,
// "Token groups file"). Used by acceptor.pcg and `cadenza build-groups`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::pcg {

// A malformed groups file or an invalid TokenGroups (INVALID_CONFIG). The
// message names the file (and the group or byte offset where useful).
class GroupsError : public sdk::Error {
public:
    explicit GroupsError(const std::string& message) : sdk::Error(CDZ_STATUS_INVALID_CONFIG, message) {}
};

inline constexpr char groups_magic[8] = {'C', 'D', 'Z', 'G', 'R', 'P', '\0', '\0'};
inline constexpr uint32_t groups_format_version = 1;
inline constexpr size_t groups_header_size = 48;

// Groups in CSR form: group k holds members[offsets[k] .. offsets[k + 1]),
// token ids sorted strictly ascending, each below vocab_size; no group is
// empty. Groups may overlap. Tokens that no group holds are singletons for
// the acceptor.
struct TokenGroups {
    uint64_t vocab_size = 0;
    double theta = std::numeric_limits<double>::quiet_NaN();  // the cosine threshold, NaN: unknown
    std::vector<uint64_t> offsets{0};
    std::vector<uint32_t> members;

    size_t group_count() const { return offsets.size() - 1; }
    size_t group_size(size_t k) const { return static_cast<size_t>(offsets[k + 1] - offsets[k]); }
    const uint32_t* group_begin(size_t k) const { return members.data() + offsets[k]; }

    // Appends a group; its members must be sorted strictly ascending.
    void add_group(const uint32_t* begin, size_t count);
    void add_group(const std::vector<uint32_t>& group) { add_group(group.data(), group.size()); }

    // Throws GroupsError, starting the message with `where`, unless the
    // structure is valid (the same checks as reading a file).
    void validate(const std::string& where) const;
};

// Reads and validates a groups file. Throws GroupsError naming the file on a
// missing or unreadable file, a foreign file (bad magic), an unsupported
// version, a truncated file or trailing bytes, inconsistent offsets, an empty
// group, an out-of-range id or unsorted/duplicate members.
TokenGroups read_token_groups(const std::filesystem::path& path);

// Validates `groups` and writes them (through a temporary file renamed into
// place).
void write_token_groups(const std::filesystem::path& path, const TokenGroups& groups);

}  // namespace cadenza::pcg
