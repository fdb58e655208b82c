#include "token_groups.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <system_error>

#include "replacing_file.h"

namespace cadenza::pcg {
namespace {

uint32_t get_u32(const unsigned char* p) {
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
           static_cast<uint32_t>(p[3]) << 24;
}

uint64_t get_u64(const unsigned char* p) {
    return static_cast<uint64_t>(get_u32(p)) | static_cast<uint64_t>(get_u32(p + 4)) << 32;
}

void put_u32(std::string& out, uint32_t value) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

void put_u64(std::string& out, uint64_t value) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

// Byte offset of members[index] in a file holding `group_count` groups.
uint64_t member_byte_offset(uint64_t group_count, uint64_t index) {
    return groups_header_size + 8 * (group_count + 1) + 4 * index;
}

void check_structure(const TokenGroups& groups, const std::string& where) {
    const uint64_t count = groups.group_count();
    const uint64_t member_count = groups.members.size();
    if (groups.offsets.empty()) throw GroupsError(where + ": no offsets (need group count + 1 of them)");
    if (groups.vocab_size == 0) throw GroupsError(where + ": the vocabulary size is 0");
    if (groups.vocab_size > (uint64_t{1} << 32))
        throw GroupsError(where + ": the vocabulary size " + std::to_string(groups.vocab_size) +
                          " exceeds 2^32 (ids are 32-bit)");
    if (groups.offsets[0] != 0)
        throw GroupsError(where + ": the first offset is " + std::to_string(groups.offsets[0]) + ", not 0");
    if (groups.offsets[count] != member_count)
        throw GroupsError(where + ": the last offset is " + std::to_string(groups.offsets[count]) + ", but there are " +
                          std::to_string(member_count) + " members");
    for (uint64_t k = 0; k < count; ++k) {
        const uint64_t begin = groups.offsets[k], end = groups.offsets[k + 1];
        if (end < begin || end > member_count)
            throw GroupsError(where + ": group " + std::to_string(k) + ": offsets " + std::to_string(begin) + ".." +
                              std::to_string(end) + " are inconsistent (decreasing or beyond the " +
                              std::to_string(member_count) + " members)");
        if (end == begin) throw GroupsError(where + ": group " + std::to_string(k) + " is empty");
    }
    for (uint64_t k = 0; k < count; ++k) {
        const uint64_t begin = groups.offsets[k], end = groups.offsets[k + 1];
        for (uint64_t i = begin; i < end; ++i) {
            const uint32_t id = groups.members[i];
            if (id >= groups.vocab_size)
                throw GroupsError(where + ": group " + std::to_string(k) + ": member id " + std::to_string(id) +
                                  " (byte offset " + std::to_string(member_byte_offset(count, i)) +
                                  ") is out of range for a vocabulary of " + std::to_string(groups.vocab_size));
            if (i > begin && id <= groups.members[i - 1])
                throw GroupsError(where + ": group " + std::to_string(k) + ": members are not sorted ascending without " +
                                  "duplicates (" + std::to_string(groups.members[i - 1]) + " then " + std::to_string(id) +
                                  " at byte offset " + std::to_string(member_byte_offset(count, i)) + ")");
        }
    }
}

}  // namespace

void TokenGroups::add_group(const uint32_t* begin, size_t count) {
    for (size_t i = 1; i < count; ++i)
        if (begin[i] <= begin[i - 1])
            throw GroupsError("token groups: group " + std::to_string(group_count()) +
                              ": members are not sorted ascending without duplicates");
    members.insert(members.end(), begin, begin + count);
    offsets.push_back(members.size());
}

void TokenGroups::validate(const std::string& where) const { check_structure(*this, where); }

TokenGroups read_token_groups(const std::filesystem::path& path) {
    const std::string where = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw GroupsError(where + ": cannot open the groups file: " + std::strerror(errno));
    std::error_code error;
    const uint64_t size = std::filesystem::file_size(path, error);
    if (error) throw GroupsError(where + ": cannot read the groups file's size: " + error.message());
    std::vector<unsigned char> bytes(static_cast<size_t>(size));
    if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
        throw GroupsError(where + ": cannot read the groups file");

    if (size < sizeof(groups_magic) || std::memcmp(bytes.data(), groups_magic, sizeof(groups_magic)) != 0)
        throw GroupsError(where + ": not a cadenza token groups file (bad magic; expected \"CDZGRP\\0\\0\")");
    if (size < groups_header_size)
        throw GroupsError(where + ": truncated: " + std::to_string(size) + " bytes, but the header alone takes " +
                          std::to_string(groups_header_size));
    const uint32_t version = get_u32(&bytes[8]);
    if (version != groups_format_version)
        throw GroupsError(where + ": unsupported groups format version " + std::to_string(version) +
                          " (this build reads version " + std::to_string(groups_format_version) + ")");
    const uint32_t flags = get_u32(&bytes[12]);
    if (flags != 0) throw GroupsError(where + ": unknown flags " + std::to_string(flags) + " at byte offset 12 (must be 0)");

    TokenGroups groups;
    groups.vocab_size = get_u64(&bytes[16]);
    const uint64_t group_count = get_u64(&bytes[24]);
    const uint64_t member_count = get_u64(&bytes[32]);
    uint64_t theta_bits = get_u64(&bytes[40]);
    std::memcpy(&groups.theta, &theta_bits, sizeof(double));

    // The sizes the header announces, guarding against overflow.
    const uint64_t limit = size;  // no array can be larger than the file
    if (group_count >= limit / 8 || member_count > limit / 4)
        throw GroupsError(where + ": truncated: the header announces " + std::to_string(group_count) + " groups and " +
                          std::to_string(member_count) + " members, more than " + std::to_string(size) +
                          " bytes can hold");
    const uint64_t expected = groups_header_size + 8 * (group_count + 1) + 4 * member_count;
    if (size < expected)
        throw GroupsError(where + ": truncated: " + std::to_string(size) + " bytes, but " + std::to_string(group_count) +
                          " groups with " + std::to_string(member_count) + " members need " + std::to_string(expected));
    if (size > expected)
        throw GroupsError(where + ": " + std::to_string(size - expected) + " unexpected bytes after the members (at byte offset " +
                          std::to_string(expected) + ")");

    groups.offsets.resize(static_cast<size_t>(group_count + 1));
    for (uint64_t k = 0; k <= group_count; ++k) groups.offsets[k] = get_u64(&bytes[groups_header_size + 8 * k]);
    groups.members.resize(static_cast<size_t>(member_count));
    const unsigned char* members = &bytes[groups_header_size + 8 * (group_count + 1)];
    for (uint64_t i = 0; i < member_count; ++i) groups.members[i] = get_u32(members + 4 * i);
    check_structure(groups, where);
    return groups;
}

void write_token_groups(const std::filesystem::path& path, const TokenGroups& groups) {
    const std::string where = path.string();
    check_structure(groups, where);
    std::string out;
    out.reserve(groups_header_size + 8 * groups.offsets.size() + 4 * groups.members.size());
    out.append(groups_magic, sizeof(groups_magic));
    put_u32(out, groups_format_version);
    put_u32(out, 0);
    put_u64(out, groups.vocab_size);
    put_u64(out, groups.group_count());
    put_u64(out, groups.members.size());
    uint64_t theta_bits;
    std::memcpy(&theta_bits, &groups.theta, sizeof(double));
    put_u64(out, theta_bits);
    for (uint64_t offset : groups.offsets) put_u64(out, offset);
    for (uint32_t id : groups.members) put_u32(out, id);

    try {
        file_output::ReplacingFile output(path);
        std::ofstream file(output.write_path(), std::ios::binary | std::ios::trunc);
        if (!file) throw GroupsError(where + ": cannot write the groups file: " + std::strerror(errno));
        file.write(out.data(), static_cast<std::streamsize>(out.size()));
        file.flush();
        if (!file) throw GroupsError(where + ": writing the groups file failed");
        file.close();
        output.commit();
    } catch (const file_output::OutputFileError& error) {
        throw GroupsError(error.what());
    }
}

}  // namespace cadenza::pcg
