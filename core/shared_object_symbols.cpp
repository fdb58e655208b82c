#include "shared_object_symbols.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "error.h"

namespace cadenza {
namespace {

#if defined(__x86_64__)
constexpr uint16_t host_machine = EM_X86_64;
constexpr const char* host_machine_name = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t host_machine = EM_AARCH64;
constexpr const char* host_machine_name = "aarch64";
#else
#error "cadenza's plugin loader knows the ELF machine of x86-64 and aarch64 only"
#endif

// A symbol table larger than this is not a plugin's (cadenza's largest
// plugin exports a few hundred symbols).
constexpr uint64_t max_table_bytes = 64ull << 20;

class ElfFile {
public:
    explicit ElfFile(const std::filesystem::path& path) : path_(path), in_(path, std::ios::binary) {
        if (!in_) fail("cannot open it");
        in_.seekg(0, std::ios::end);
        size_ = static_cast<uint64_t>(in_.tellg());
    }

    template <typename T>
    T read_struct(uint64_t offset, const char* what) {
        T value;
        read_bytes(offset, sizeof(T), &value, what);
        return value;
    }

    std::vector<char> read_table(uint64_t offset, uint64_t size, const char* what) {
        if (size > max_table_bytes) fail(std::string(what) + " is larger than " + std::to_string(max_table_bytes) + " bytes");
        std::vector<char> bytes(size);
        read_bytes(offset, size, bytes.data(), what);
        return bytes;
    }

    [[noreturn]] void fail(const std::string& reason) const {
        throw Error(CDZ_STATUS_IO_ERROR, path_.string() + ": cannot load plugin library: " + reason);
    }

private:
    void read_bytes(uint64_t offset, uint64_t size, void* out, const char* what) {
        if (offset > size_ || size > size_ - offset) fail(std::string(what) + " lies outside the file");
        in_.seekg(static_cast<std::streamoff>(offset));
        in_.read(static_cast<char*>(out), static_cast<std::streamsize>(size));
        if (!in_) fail(std::string("cannot read ") + what);
    }

    std::filesystem::path path_;
    std::ifstream in_;
    uint64_t size_ = 0;
};

// The file's section headers, after checking that it is a shared object for
// this machine; empty when it has no section table.
std::vector<Elf64_Shdr> section_headers(ElfFile& file, Elf64_Ehdr& header) {
    const std::string expected = std::string("not a 64-bit ELF shared object for ") + host_machine_name;
    try {
        header = file.read_struct<Elf64_Ehdr>(0, "the ELF header");
    } catch (const Error&) {
        file.fail(expected);  // shorter than an ELF header: text, an empty file
    }
    const unsigned char* ident = header.e_ident;
    if (std::memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB ||
        header.e_type != ET_DYN || header.e_machine != host_machine)
        file.fail(expected);
    if (header.e_shnum == 0 || header.e_shentsize != sizeof(Elf64_Shdr)) return {};
    const auto bytes = file.read_table(header.e_shoff, uint64_t{header.e_shnum} * sizeof(Elf64_Shdr),
                                       "the section table");
    std::vector<Elf64_Shdr> sections(header.e_shnum);
    std::memcpy(sections.data(), bytes.data(), bytes.size());
    return sections;
}

}  // namespace

ExportedSymbol exported_symbol(const std::filesystem::path& path, const std::string& symbol) {
    ElfFile file(path);
    Elf64_Ehdr header{};
    const std::vector<Elf64_Shdr> sections = section_headers(file, header);
    // Without a section table nothing says what it exports.
    for (const Elf64_Shdr& symbols : sections) {
        if (symbols.sh_type != SHT_DYNSYM) continue;
        if (symbols.sh_entsize != sizeof(Elf64_Sym) || symbols.sh_link >= sections.size())
            file.fail("a malformed dynamic symbol table");
        const Elf64_Shdr& strings = sections[symbols.sh_link];
        const auto names = file.read_table(strings.sh_offset, strings.sh_size, "the dynamic string table");
        const auto table = file.read_table(symbols.sh_offset, symbols.sh_size, "the dynamic symbol table");
        for (size_t k = 0; k + sizeof(Elf64_Sym) <= table.size(); k += sizeof(Elf64_Sym)) {
            Elf64_Sym entry;
            std::memcpy(&entry, table.data() + k, sizeof(entry));
            if (entry.st_shndx == SHN_UNDEF || entry.st_name >= names.size()) continue;
            const char* name = names.data() + entry.st_name;
            const size_t room = names.size() - entry.st_name;
            if (strnlen(name, room) != symbol.size() || std::memcmp(name, symbol.data(), symbol.size()) != 0)
                continue;
            const unsigned type = ELF64_ST_TYPE(entry.st_info);
            return type == STT_FUNC || type == STT_GNU_IFUNC ? ExportedSymbol::function : ExportedSymbol::data;
        }
    }
    return ExportedSymbol::absent;
}

std::optional<std::string> section_contents(const std::filesystem::path& path, const std::string& name) {
    ElfFile file(path);
    Elf64_Ehdr header{};
    const std::vector<Elf64_Shdr> sections = section_headers(file, header);
    if (sections.empty() || header.e_shstrndx >= sections.size()) return std::nullopt;
    const Elf64_Shdr& names_section = sections[header.e_shstrndx];
    const auto names = file.read_table(names_section.sh_offset, names_section.sh_size, "the section names");
    for (const Elf64_Shdr& section : sections) {
        if (section.sh_name >= names.size() || section.sh_type == SHT_NOBITS) continue;
        const char* section_name = names.data() + section.sh_name;
        if (strnlen(section_name, names.size() - section.sh_name) != name.size() ||
            std::memcmp(section_name, name.data(), name.size()) != 0)
            continue;
        const auto bytes = file.read_table(section.sh_offset, section.sh_size, "a section");
        return std::string(bytes.begin(), bytes.end());
    }
    return std::nullopt;
}

}  // namespace cadenza
