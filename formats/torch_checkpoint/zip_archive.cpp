#include "zip_archive.h"

#include <cstring>
#include <sstream>

#include "torch_checkpoint.h"

namespace cadenza::torch_checkpoint {
namespace {

uint32_t crc_table[8][256];

bool make_crc_tables() {
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
        for (int t = 1; t < 8; ++t) crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
    return true;
}

}  // namespace

uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc) {
    static const bool ready = make_crc_tables();
    (void)ready;
    uint32_t c = ~crc;
    // Slicing by 8: eight table look-ups per 8 bytes.
    while (size >= 8) {
        uint32_t lo, hi;
        std::memcpy(&lo, data, 4);
        std::memcpy(&hi, data + 4, 4);
        lo ^= c;
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        data += 8;
        size -= 8;
    }
    while (size--) c = crc_table[0][(c ^ *data++) & 0xFF] ^ (c >> 8);
    return ~c;
}

namespace detail {
namespace {

constexpr uint32_t sig_local = 0x04034b50;
constexpr uint32_t sig_central = 0x02014b50;
constexpr uint32_t sig_end = 0x06054b50;
constexpr uint32_t sig_end64 = 0x06064b50;
constexpr uint32_t sig_locator64 = 0x07064b50;
constexpr size_t end_size = 22;
constexpr size_t end64_size = 56;
constexpr size_t locator64_size = 20;
constexpr size_t central_size = 46;
constexpr size_t local_size = 30;

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t le32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
           (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t le64(const uint8_t* p) { return static_cast<uint64_t>(le32(p)) | (static_cast<uint64_t>(le32(p + 4)) << 32); }

std::string hex(uint64_t value) {
    std::ostringstream out;
    out << "0x" << std::hex << value;
    return out.str();
}

const char* method_name(uint16_t method) {
    switch (method) {
    case 8: return "deflate";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "lzma";
    case 93: return "zstd";
    case 95: return "xz";
    default: return "unknown";
    }
}

// Whether [offset, offset + length) lies within [0, limit), without overflow.
bool within(uint64_t offset, uint64_t length, uint64_t limit) { return offset <= limit && length <= limit - offset; }

}  // namespace

ZipArchive::ZipArchive(const uint8_t* data, size_t size, std::string where, size_t max_entries)
    : data_(data), size_(size), where_(std::move(where)) {
    parse(max_entries);
}

void ZipArchive::fail(const std::string& message) const { throw TorchCheckpointError(where_ + ": zip: " + message); }

const ZipEntry* ZipArchive::find(const std::string& name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : &entries_[it->second];
}

void ZipArchive::verify_crc(const ZipEntry& entry) const {
    const uint32_t actual = crc32(bytes(entry), entry.size);
    if (actual != entry.crc)
        fail("entry '" + entry.name + "': CRC-32 mismatch (central directory says " + hex(entry.crc) + ", data has " +
             hex(actual) + "): the file is corrupt");
}

void ZipArchive::parse(size_t max_entries) {
    const uint8_t* d = data_;
    if (size_ < end_size) {
        fail("not a zip archive (" + std::to_string(size_) + " bytes, too small for an end of central directory record)");
    }

    // End of central directory: the last record whose comment runs exactly to
    // the end of the file.
    size_t end = size_;
    const size_t lowest = size_ - end_size > 0xFFFF ? size_ - end_size - 0xFFFF : 0;
    for (size_t pos = size_ - end_size + 1; pos-- > lowest;) {
        if (le32(d + pos) == sig_end && pos + end_size + le16(d + pos + 20) == size_) {
            end = pos;
            break;
        }
    }
    if (end == size_) {
        if (d[0] == 0x80 && size_ >= 4 && d[1] == 0x02 && d[2] == 0x8a)
            fail("not a zip archive: a legacy (pre-PyTorch-1.6) torch.save file, unsupported (re-save it with a newer "
                 "PyTorch)");
        fail("no end of central directory record (not a zip archive, or truncated)");
    }
    const uint8_t* e = d + end;
    uint64_t disk = le16(e + 4), cd_disk = le16(e + 6);
    uint64_t disk_entries = le16(e + 8), total_entries = le16(e + 10);
    uint64_t cd_size = le32(e + 12), cd_offset = le32(e + 16);
    uint64_t cd_limit = end;  // the central directory ends before this

    const bool saturated = disk_entries == 0xFFFF || total_entries == 0xFFFF || cd_size == 0xFFFFFFFFu ||
                           cd_offset == 0xFFFFFFFFu;
    const bool has_locator = end >= locator64_size && le32(d + end - locator64_size) == sig_locator64;
    if (has_locator) {
        const uint8_t* l = d + end - locator64_size;
        const uint32_t l_disk = le32(l + 4);
        const uint64_t end64 = le64(l + 8);
        const uint32_t disks = le32(l + 16);
        if (l_disk != 0 || disks > 1) fail("multi-disk archives are not supported");
        if (!within(end64, end64_size, end - locator64_size))
            fail("ZIP64 end of central directory offset " + std::to_string(end64) + " is out of bounds");
        const uint8_t* z = d + end64;
        if (le32(z) != sig_end64) fail("no ZIP64 end of central directory record at offset " + std::to_string(end64));
        const uint64_t record_size = le64(z + 4);
        if (record_size < end64_size - 12 || !within(end64 + 12, record_size, end - locator64_size))
            fail("ZIP64 end of central directory record has a bad size " + std::to_string(record_size));
        const uint64_t disk64 = le32(z + 16), cd_disk64 = le32(z + 20);
        const uint64_t disk_entries64 = le64(z + 24), total_entries64 = le64(z + 32);
        const uint64_t cd_size64 = le64(z + 40), cd_offset64 = le64(z + 48);
        // Where the 32-bit record is not saturated, both must agree.
        if ((disk != 0xFFFF && disk != disk64) || (cd_disk != 0xFFFF && cd_disk != cd_disk64) ||
            (disk_entries != 0xFFFF && disk_entries != disk_entries64) ||
            (total_entries != 0xFFFF && total_entries != total_entries64) ||
            (cd_size != 0xFFFFFFFFu && cd_size != cd_size64) || (cd_offset != 0xFFFFFFFFu && cd_offset != cd_offset64))
            fail("the ZIP64 and 32-bit end of central directory records disagree");
        disk = disk64;
        cd_disk = cd_disk64;
        disk_entries = disk_entries64;
        total_entries = total_entries64;
        cd_size = cd_size64;
        cd_offset = cd_offset64;
        cd_limit = end64;
    } else if (saturated) {
        fail("the end of central directory record needs ZIP64 values but there is no ZIP64 locator");
    }
    if (disk != 0 || cd_disk != 0 || disk_entries != total_entries) fail("multi-disk archives are not supported");
    if (!within(cd_offset, cd_size, cd_limit))
        fail("central directory (offset " + std::to_string(cd_offset) + ", " + std::to_string(cd_size) +
             " bytes) lies outside the file");
    if (total_entries > max_entries)
        fail(std::to_string(total_entries) + " entries, more than the limit of " + std::to_string(max_entries));
    if (total_entries > cd_size / central_size)
        fail("central directory of " + std::to_string(cd_size) + " bytes cannot hold " + std::to_string(total_entries) +
             " entries");

    entries_.reserve(static_cast<size_t>(total_entries));
    uint64_t pos = cd_offset;
    const uint64_t cd_end = cd_offset + cd_size;
    for (uint64_t i = 0; i < total_entries; ++i) {
        const std::string which = "central directory entry " + std::to_string(i);
        if (!within(pos, central_size, cd_end)) fail(which + " runs past the end of the central directory");
        const uint8_t* c = d + pos;
        if (le32(c) != sig_central) fail(which + ": bad signature at offset " + std::to_string(pos));
        const uint16_t flags = le16(c + 8);
        const uint16_t method = le16(c + 10);
        const uint32_t crc = le32(c + 16);
        uint64_t compressed = le32(c + 20), uncompressed = le32(c + 24);
        const uint16_t name_length = le16(c + 28), extra_length = le16(c + 30), comment_length = le16(c + 32);
        uint64_t start_disk = le16(c + 34);
        uint64_t local = le32(c + 42);
        const uint64_t record = central_size + uint64_t{name_length} + extra_length + comment_length;
        if (!within(pos, record, cd_end)) fail(which + " runs past the end of the central directory");
        ZipEntry entry;
        entry.name.assign(reinterpret_cast<const char*>(c + central_size), name_length);
        const std::string named = "entry '" + entry.name + "'";
        if (entry.name.empty()) fail(which + " has an empty name");
        if (flags & 0x0041) fail(named + " is encrypted");
        if (method != 0)
            fail(named + " is compressed (method " + std::to_string(method) + ", " + method_name(method) +
                 "); only STORED entries are supported, as torch.save writes them");

        // ZIP64 extended information: the saturated fields, in this order.
        const uint8_t* x = c + central_size + name_length;
        const uint8_t* x_end = x + extra_length;
        while (x_end - x >= 4) {
            const uint16_t id = le16(x), length = le16(x + 2);
            if (length > x_end - x - 4) fail(named + ": extra field runs past its record");
            if (id == 0x0001) {
                const uint8_t* f = x + 4;
                const uint8_t* f_end = f + length;
                auto take = [&](uint64_t& field) {
                    if (f_end - f < 8) fail(named + ": ZIP64 extra field too short");
                    field = le64(f);
                    f += 8;
                };
                if (uncompressed == 0xFFFFFFFFu) take(uncompressed);
                if (compressed == 0xFFFFFFFFu) take(compressed);
                if (local == 0xFFFFFFFFu) take(local);
                if (start_disk == 0xFFFF) {
                    if (f_end - f < 4) fail(named + ": ZIP64 extra field too short");
                    start_disk = le32(f);
                }
            }
            x += 4 + length;
        }
        if (start_disk != 0) fail(named + " starts on disk " + std::to_string(start_disk) + " (multi-disk)");
        if (compressed != uncompressed)
            fail(named + ": stored size " + std::to_string(compressed) + " differs from its size " +
                 std::to_string(uncompressed));

        // The local header: same name, also STORED; the data follows it and
        // ends before the central directory.
        if (!within(local, local_size, cd_offset))
            fail(named + ": local header offset " + std::to_string(local) + " is out of bounds");
        const uint8_t* h = d + local;
        if (le32(h) != sig_local) fail(named + ": no local header at offset " + std::to_string(local));
        const uint16_t local_flags = le16(h + 6), local_method = le16(h + 8);
        const uint16_t local_name_length = le16(h + 26), local_extra_length = le16(h + 28);
        if (local_flags & 0x0041) fail(named + " is encrypted");
        if (local_method != 0)
            fail(named + " is compressed in its local header (method " + std::to_string(local_method) + ")");
        const uint64_t data_offset = local + local_size + local_name_length + local_extra_length;
        if (!within(local, local_size + uint64_t{local_name_length} + local_extra_length, cd_offset))
            fail(named + ": local header runs past the data area");
        if (local_name_length != name_length || std::memcmp(h + local_size, entry.name.data(), name_length) != 0)
            fail(named + ": the local header names another file");
        if (!(local_flags & 0x0008)) {
            // Without a data descriptor the local sizes are meaningful too.
            const uint64_t local_compressed = le32(h + 18), local_uncompressed = le32(h + 22);
            if ((local_compressed != 0xFFFFFFFFu && local_compressed != compressed) ||
                (local_uncompressed != 0xFFFFFFFFu && local_uncompressed != uncompressed))
                fail(named + ": local header and central directory sizes disagree");
        }
        if (!within(data_offset, uncompressed, cd_offset))
            fail(named + ": data (offset " + std::to_string(data_offset) + ", " + std::to_string(uncompressed) +
                 " bytes) runs past the data area");
        entry.header_offset = local;
        entry.data_offset = data_offset;
        entry.size = uncompressed;
        entry.crc = crc;
        if (!index_.emplace(entry.name, entries_.size()).second) fail("duplicate " + named);
        entries_.push_back(std::move(entry));
        pos += record;
    }
    if (pos != cd_end) fail("central directory has " + std::to_string(cd_end - pos) + " unexplained trailing bytes");
}

}  // namespace detail
}  // namespace cadenza::torch_checkpoint
