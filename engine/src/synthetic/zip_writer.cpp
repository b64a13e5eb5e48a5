#include "synthetic/zip_writer.h"

#include "synthetic/file_sink.h"

namespace llamadesk {

void write_stored_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& entries) {
    FileSink out(path);
    struct Written { std::string name; uint64_t offset, size; };
    std::vector<Written> written;
    for (const auto& [name, data] : entries) {
        const uint64_t header = out.offset();
        const uint64_t unpadded = header + 30 + name.size() + 4;
        const uint16_t pad = uint16_t((64 - unpadded % 64) % 64);
        out.put<uint32_t>(0x04034b50);
        out.put<uint16_t>(20); out.put<uint16_t>(0); out.put<uint16_t>(0);  // version, flags, stored
        out.put<uint16_t>(0); out.put<uint16_t>(0); out.put<uint32_t>(0);   // time, date, crc (unchecked)
        out.put<uint32_t>(uint32_t(data.size())); out.put<uint32_t>(uint32_t(data.size()));
        out.put<uint16_t>(uint16_t(name.size())); out.put<uint16_t>(uint16_t(4 + pad));
        out.write(name.data(), name.size());
        out.put<uint16_t>(0x4650); out.put<uint16_t>(pad);  // an extra field of padding
        out.write(std::string(pad, 'Z').data(), pad);
        out.write(data.data(), data.size());
        written.push_back({name, header, data.size()});
    }
    const uint64_t directory = out.offset();
    for (const Written& w : written) {
        out.put<uint32_t>(0x02014b50);
        out.put<uint16_t>(20); out.put<uint16_t>(20); out.put<uint16_t>(0); out.put<uint16_t>(0);
        out.put<uint16_t>(0); out.put<uint16_t>(0); out.put<uint32_t>(0);
        out.put<uint32_t>(uint32_t(w.size)); out.put<uint32_t>(uint32_t(w.size));
        out.put<uint16_t>(uint16_t(w.name.size())); out.put<uint16_t>(0); out.put<uint16_t>(0);
        out.put<uint16_t>(0); out.put<uint16_t>(0); out.put<uint32_t>(0);
        out.put<uint32_t>(uint32_t(w.offset));
        out.write(w.name.data(), w.name.size());
    }
    const uint64_t directory_size = out.offset() - directory;
    out.put<uint32_t>(0x06054b50);
    out.put<uint16_t>(0); out.put<uint16_t>(0);
    out.put<uint16_t>(uint16_t(written.size())); out.put<uint16_t>(uint16_t(written.size()));
    out.put<uint32_t>(uint32_t(directory_size)); out.put<uint32_t>(uint32_t(directory));
    out.put<uint16_t>(0);
    out.close();
}

}  // namespace llamadesk
