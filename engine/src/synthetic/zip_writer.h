// A zip archive of stored (uncompressed) entries, each entry's data 64-byte aligned by padding in
// its local extra field, as torch.save writes .pth files. CRCs are left 0: readers of checkpoints
// map the data and do not check them.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace llamadesk {

// entries: (name, data) in file order.
void write_stored_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace llamadesk
